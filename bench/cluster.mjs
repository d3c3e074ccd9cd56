// Cluster throughput and communication overhead: for 1, 2, 4 and 8 agents (separate processes on this
// machine, plaintext gRPC on loopback) crawling the test web (a separate `ubicrawl testweb` process),
// prints total pages/s (and per agent: over the wall time, and while crawling), the partition's
// balance, CPU per 1,000 pages (and by phase of each agent's crawl: start, steady middle, tail), links
// to other agents' hosts per page fetched against the expected (inter-host links followed a page) ×
// (1 − 1/n), URLs sent per page (each of those URLs goes once), batches per 100 pages, and
// coverage/overlap.
// With --pin, each agent runs under `taskset -c <core>` (round-robin over the allowed CPUs); with
// --cpu-quota P, each agent runs in a cgroup of its own capped at P % of one CPU: both to see whether
// per-agent pages/s stays flat when every agent has a CPU of its own (a quota gives each agent its
// own share even when there are more agents than cores, and leaves the rest to the test web).
// With --idle-seconds N, no crawl: each cluster forms without seeds and the agents' own CPU is read from
// /proc over N seconds, to measure what membership upkeep (heartbeats, gossip) costs an idle agent.
// Run after `npm run build`:  node bench/cluster.mjs [--agents 1,2,4,8] [--hosts N] [--pages N] [--pin] [--cpu-quota P] [--json]
//                             node bench/cluster.mjs --idle-seconds 20 [--agents 8] [--heartbeat-ms 1000] [--json]
import { rm } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startClusterAgents, waitForSettledView } from "./lib/cluster-start.mjs";
import { CpuQuotaGroup } from "./lib/cpu-quota.mjs";
import { measureCrawlLogs, parseAgentSummary, readTruth } from "./lib/crawl-metrics.mjs";
import { crawlPhases } from "./lib/crawl-phases.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import { interHostLinks } from "./lib/link-share.mjs";
import {
  allowedCores,
  benchAgentFlags,
  openWorkspace,
  PeakRssSampler,
  processCpuSeconds,
  reapedChildrenCpuSeconds,
  startTestWebProcess,
} from "./lib/processes.mjs";
import { fixed, formatTable, MIB, percent } from "./lib/report.mjs";
import { StatsPoller } from "./lib/stats-poller.mjs";

const FLAGS = {
  agents: { type: "string", help: "agent counts to run, comma-separated (default: 1,2,4,8)" },
  hosts: { type: "integer", help: "hosts of the test web", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 8_000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  "max-active-hosts": { type: "integer", help: "hosts each agent visits at once", default: 64, min: 1 },
  "heartbeat-ms": {
    type: "integer",
    help: "failure detector heartbeat of the agents (default: the agents' own)",
    default: 1000,
    min: 10,
  },
  "suspect-after-ms": {
    type: "integer",
    help: "failure detector timeout of the agents (default: the agents' own)",
    default: 5000,
    min: 20,
  },
  pin: { type: "boolean", help: "pin agent i to CPU i mod cores with taskset (the test web is not pinned)" },
  "cpu-quota": {
    type: "integer",
    help: "run each agent in a cgroup of its own capped at this % of one CPU (root; the test web is not capped)",
    min: 1,
    max: 100 * availableParallelism(),
  },
  "cpu-prof": {
    type: "string",
    help: "write a V8 CPU profile of every agent into this folder (<folder>/agents-<n>/<id>.cpuprofile)",
  },
  "idle-seconds": {
    type: "integer",
    help: "no crawl: form each cluster without seeds, then measure the agents' idle CPU over this many seconds",
    min: 1,
  },
  "timeout-s": { type: "integer", help: "give up on a cluster run after this long", default: 600, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the agents' data (WARC files, crawl logs) and print where" },
};
/** An empty ground truth, for figures of one agent's crawl log that need none. */
const NO_TRUTH = new Set();
/** Idle mode: how long a formed cluster runs before its CPU is read (connections, JIT, first gossip). */
const IDLE_WARMUP_MS = 3_000;

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/cluster.mjs [flags]");
const agentCounts = (flags.agents ?? "1,2,4,8").split(",").map((text) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new Error(`--agents: "${text}" is not a count in [1, 64]`);
  return n;
});
if (flags["suspect-after-ms"] <= flags["heartbeat-ms"])
  throw new Error("--suspect-after-ms must exceed --heartbeat-ms");
const web = { seed: flags.seed, hosts: flags.hosts, pages: flags.pages };
const cores = flags.pin ? allowedCores() : [];
const quotaSet = flags["cpu-quota"] !== undefined;
const profileDir = flags["cpu-prof"] === undefined ? undefined : resolve(flags["cpu-prof"]);
const { dir, children } = await openWorkspace("cluster", flags.keep);
const log = (text) => process.stderr.write(`${text}\n`);
// The machine may be shared: the 1-minute load average before and after says how busy it was.
const loadBefore = loadavg()[0];

if (flags["idle-seconds"] !== undefined) {
  // No test web and no crawl: the idle figures are printed and the bench ends here.
  process.exit(await idleMode(flags["idle-seconds"]));
}

const testweb = await startTestWebProcess(dir, web);
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);
const links = interHostLinks(web, truth);
log(
  `test web: ${flags.hosts} hosts, ${truth.size} URLs in the truth, port ${testweb.port} (pid ${testweb.child.pid}); ` +
    `${percent(links.interHostShare, 1)} of followed links are inter-host (${fixed(links.interHostLinksPerPage, 2)} a page)`,
);

const results = [];
let failed = false;
try {
  for (const n of agentCounts) {
    const result = await runCluster(n);
    results.push(result);
    if (!result.ok) failed = true;
    log(
      `${n} agent(s): ${result.pagesFetched} pages in ${fixed(result.wallSeconds, 1)} s, ` +
        `${fixed(result.pagesPerSecond, 0)} pages/s, ${fixed(result.urlsSentPerPage, 3)} URLs sent a page, ` +
        `coverage ${percent(result.coverage)}, overlap ${percent(result.overlap)}`,
    );
  }
} finally {
  await Promise.all([...children].map((child) => child.stop()));
}

const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
if (flags.json) {
  process.stdout.write(
    `${JSON.stringify({ web, truthUrls: truth.size, links, flags, results, loadAverage }, null, 2)}\n`,
  );
} else {
  printTable();
}
process.exitCode = failed ? 1 : 0;

/** Starts `n` agents (seeds to the last one), waits until they all exit when done; the figures. */
async function runCluster(n) {
  const runDir = join(dir, `agents-${n}`);
  const stats = new StatsPoller(1000);
  const sampler = new PeakRssSampler(100);
  const agents = [];
  const quotas = quotaGroupsFor(n);
  const cpuBefore = reapedChildrenCpuSeconds();
  let timedOut = false;
  let timer;
  try {
    await startClusterAgents({
      count: n,
      runDir,
      flags: [
        ...benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"]),
        ...["--heartbeat-ms", String(flags["heartbeat-ms"])],
        ...["--suspect-after-ms", String(flags["suspect-after-ms"])],
      ],
      seedsFile: testweb.files.seeds,
      stats,
      spawnOptionsOf: (i) => spawnOptionsOf(n, i, quotas),
      onSpawn: (agent) => {
        children.add(agent);
        agents.push(agent);
        sampler.watch(agent.pid);
      },
      log,
    });
    // The crawl starts with the seeded (last) agent.
    const crawlStartedAtMs = /** @type {import("./lib/processes.mjs").Child} */ (agents.at(-1)).startedAtMs;
    timer = setTimeout(() => {
      timedOut = true;
      log(`${n} agent(s): no end after ${flags["timeout-s"]} s, stopping them`);
      for (const agent of agents) agent.stop();
    }, flags["timeout-s"] * 1000);
    const exitCodes = await Promise.all(agents.map((agent) => agent.exited));
    const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
    const endedAtMs = Math.max(...agents.map((agent) => agent.exitedAtMs));
    const endedAtEpochMs = Math.max(...agents.map((agent) => agent.exitedAtEpochMs));
    const wallSeconds = (endedAtMs - crawlStartedAtMs) / 1000;
    const logs = agents.map((agent) => join(runDir, agent.name, "crawl.log"));
    const metrics = await measureCrawlLogs(logs, truth);
    const perAgent = await Promise.all(logs.map((path) => measureCrawlLogs([path], NO_TRUTH)));
    const totals = finalTotals(agents, stats);
    const phases = agentPhases(agents, perAgent, sampler);
    for (const [i, code] of exitCodes.entries()) {
      if (code !== 0) log(`${agents[i].name} exited with ${code}:\n${agents[i].stderrLines.join("\n")}`);
    }
    if (n > 1 && totals.pagesFetched !== metrics.fetches) {
      log(
        `${n} agent(s): note: the last stats polled count ${totals.pagesFetched} pages, the crawl logs ` +
          `${metrics.fetches} (a stale last sample makes the overhead figures approximate)`,
      );
    }
    return {
      agents: n,
      cores: agents.map((agent) => agent.core),
      ok: !timedOut && exitCodes.every((code) => code === 0),
      pagesFetched: metrics.fetches,
      wallSeconds,
      pagesPerSecond: metrics.fetches / wallSeconds,
      endLagSeconds: (endedAtEpochMs - metrics.lastEntryEpochMs) / 1000,
      pagesPerSecondPerAgent: metrics.fetches / wallSeconds / n,
      // The partition's balance: the busiest agent's pages against the mean (host-sized shares of a web
      // whose hosts differ in size are not equal, so the busiest agent sets the wall time).
      maxOverMeanPages: Math.max(...perAgent.map((m) => m.fetches)) / (metrics.fetches / n),
      // Each agent's own rate from its first to its last fetch, averaged: per-agent speed apart from
      // the partition's balance, start-up, and waiting for the first URLs.
      crawlingPagesPerSecondPerAgent:
        perAgent.reduce((sum, m) => sum + m.fetches / Math.max(m.spanSeconds, 0.001), 0) / n,
      cpuSeconds,
      cpuSecondsPer1000Pages: (cpuSeconds * 1000) / Math.max(1, metrics.fetches),
      ...phases,
      maxPeakRssMib: Math.max(...agents.map((agent) => sampler.peakOf(agent.pid))) / MIB,
      statsPagesFetched: totals.pagesFetched,
      urlsSent: totals.urlsSent,
      batchesSent: totals.batchesSent,
      urlsSentPerPage: totals.urlsSent / Math.max(1, totals.pagesFetched),
      // NaN when an agent's summary did not say (the stats RPC does not carry it).
      linksOutPerPage: (totals.linksToOtherAgents ?? Number.NaN) / Math.max(1, totals.pagesFetched),
      expectedLinksOutPerPage: links.interHostLinksPerPage * (1 - 1 / n),
      batchesPer100Pages: (100 * totals.batchesSent) / Math.max(1, totals.pagesFetched),
      urlsPerBatch: totals.batchesSent === 0 ? 0 : totals.urlsSent / totals.batchesSent,
      coverage: metrics.coverage,
      overlap: metrics.overlap,
      extraUrls: metrics.extra,
      throttledShare: throttledShare(quotas),
    };
  } finally {
    clearTimeout(timer);
    stats.stop();
    sampler.stop();
    await Promise.all(agents.map((agent) => agent.stop()));
    for (const agent of agents) children.delete(agent);
    for (const quota of quotas) quota.remove();
    if (!flags.keep) await rm(runDir, { recursive: true, force: true });
  }
}

/**
 * Each agent's crawl in phases (see crawl-phases.mjs: start to 10 % of its pages, steady middle, tail),
 * summed over the agents. An agent's total CPU is its last sample's (up to 100 ms before its exit):
 * the kernel's exact figure is only known for all the agents together.
 * @param {import("./lib/processes.mjs").Child[]} agents exited
 * @param {import("./lib/crawl-metrics.mjs").CrawlMetrics[]} perAgent each agent's crawl log metrics
 * @param {PeakRssSampler} sampler
 */
function agentPhases(agents, perAgent, sampler) {
  const phases = agents.map((agent, i) => {
    const series = sampler.cpuSeriesOf(agent.pid);
    return crawlPhases({
      series,
      pageTimesMs: perAgent[i].pageTimesMs,
      startedAtMs: agent.startedAtEpochMs,
      exitedAtMs: agent.exitedAtEpochMs,
      cpuSeconds: series.at(-1)?.[1] ?? 0,
    });
  });
  const sum = (of) => phases.reduce((total, p) => total + of(p), 0);
  const per1000 = (cpu, pages) => (pages > 0 ? (cpu * 1000) / pages : Number.NaN);
  return {
    startCpuSecondsPerAgent: sum((p) => p.start.cpuSeconds) / phases.length,
    steadyPagesPerSecondPerAgent: sum((p) => p.steady.pagesPerSecond || 0) / phases.length,
    steadyCpuSecondsPer1000Pages: per1000(
      sum((p) => p.steady.cpuSeconds),
      sum((p) => p.steady.pages),
    ),
    tailCpuSecondsPer1000Pages: per1000(
      sum((p) => p.tail.cpuSeconds),
      sum((p) => p.tail.pages),
    ),
  };
}

/**
 * The cluster's exchange counters: from the summaries the agents print as they exit (their final
 * counts), or, when one did not print its summary, from the last stats each answered while running.
 * @param {import("./lib/processes.mjs").Child[]} agents
 * @param {StatsPoller} stats
 */
function finalTotals(agents, stats) {
  const summaries = agents.map((agent) => parseAgentSummary(agent.stderrLines));
  if (
    agents.length === 1 ||
    summaries.some((s) => s.exchange === undefined || s.pagesFetched === undefined)
  ) {
    return stats.totals();
  }
  const totals = { pagesFetched: 0, urlsSent: 0, batchesSent: 0, linksToOtherAgents: 0 };
  for (const summary of summaries) {
    totals.pagesFetched += summary.pagesFetched;
    totals.urlsSent += summary.exchange.urlsSent;
    totals.batchesSent += summary.exchange.batchesSent;
    totals.linksToOtherAgents += summary.linksToOtherAgents ?? Number.NaN;
  }
  return totals;
}

/** Idle mode: measures every agent count in turn, prints the figures; the exit code. */
async function idleMode(seconds) {
  const rows = [];
  try {
    for (const n of agentCounts) {
      const row = await runIdleCluster(n, seconds);
      rows.push(row);
      log(
        `${n} agent(s) idle: ${fixed(row.cpuMsPerAgentSecond, 1)} ms CPU per agent per second ` +
          `(min ${fixed(row.minCpuMsPerAgentSecond, 1)}, max ${fixed(row.maxCpuMsPerAgentSecond, 1)})`,
      );
    }
  } finally {
    await Promise.all([...children].map((child) => child.stop()));
  }
  const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ flags, idle: rows, loadAverage }, null, 2)}\n`);
  } else {
    const headers = ["agents", "window s", "CPU ms/s/agent", "min", "max", "cores used", "view kept"];
    const cells = rows.map((r) => [
      String(r.agents),
      fixed(r.windowSeconds, 1),
      fixed(r.cpuMsPerAgentSecond, 1),
      fixed(r.minCpuMsPerAgentSecond, 1),
      fixed(r.maxCpuMsPerAgentSecond, 1),
      fixed(r.coresUsed, 3),
      r.ok ? "yes" : "NO",
    ]);
    process.stdout.write(
      `ubicrawl bench/cluster idle: no seeds, --heartbeat-ms ${flags["heartbeat-ms"]}, ` +
        `--suspect-after-ms ${flags["suspect-after-ms"]}, CPU (user + system) of each agent process ` +
        `over ${seconds} s after a ${IDLE_WARMUP_MS / 1000} s warm-up ` +
        `(${loadAverage.cpus} CPUs, load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after)\n\n` +
        `${formatTable(headers, cells)}\n`,
    );
  }
  return rows.every((r) => r.ok) ? 0 : 1;
}

/**
 * Forms a cluster of `n` agents without seeds (so nothing is crawled), lets it settle, then reads each
 * agent's CPU time from /proc across `seconds`: the cost of heartbeats and gossip alone.
 */
async function runIdleCluster(n, seconds) {
  const runDir = join(dir, `idle-${n}`);
  // Used only to see views settle: it never polls on its own, so the window sees no stats calls.
  const stats = new StatsPoller(2 ** 31 - 1);
  const agents = [];
  const quotas = quotaGroupsFor(n);
  try {
    await startClusterAgents({
      count: n,
      runDir,
      flags: [
        ...["--progress", "off"],
        ...["--heartbeat-ms", String(flags["heartbeat-ms"])],
        ...["--suspect-after-ms", String(flags["suspect-after-ms"])],
      ],
      stats,
      spawnOptionsOf: (i) => spawnOptionsOf(n, i, quotas),
      onSpawn: (agent) => {
        children.add(agent);
        agents.push(agent);
      },
      log,
    });
    await waitForSettledView(stats, agents, log);
    await sleep(IDLE_WARMUP_MS);
    const before = agents.map((agent) => processCpuSeconds(agent.pid));
    const startedAtMs = performance.now();
    await sleep(seconds * 1000);
    const after = agents.map((agent) => processCpuSeconds(agent.pid));
    const windowSeconds = (performance.now() - startedAtMs) / 1000;
    const perAgent = after.map((cpu, i) => ((cpu - before[i]) * 1000) / windowSeconds);
    const ids = agents.map((agent) => agent.name);
    const views = await Promise.all(ids.map((id) => stats.aliveView(id)));
    return {
      agents: n,
      windowSeconds,
      cpuMsPerAgentSecond: perAgent.reduce((sum, ms) => sum + ms, 0) / n,
      minCpuMsPerAgentSecond: Math.min(...perAgent),
      maxCpuMsPerAgentSecond: Math.max(...perAgent),
      coresUsed: perAgent.reduce((sum, ms) => sum + ms, 0) / 1000,
      // No agent exited and every one still sees all alive: nobody was suspected during the window.
      ok: agents.every((agent) => !agent.done) && views.every((view) => ids.every((id) => view.has(id))),
    };
  } finally {
    stats.stop();
    await Promise.all(agents.map((agent) => agent.stop()));
    for (const agent of agents) children.delete(agent);
    for (const quota of quotas) quota.remove();
    await rm(runDir, { recursive: true, force: true });
  }
}

/**
 * One CPU-capped cgroup for each of `n` agents with --cpu-quota, else none.
 * @returns {CpuQuotaGroup[]}
 */
function quotaGroupsFor(n) {
  const quota = flags["cpu-quota"];
  if (quota === undefined) return [];
  const groups = [];
  try {
    for (let i = 1; i <= n; i++)
      groups.push(new CpuQuotaGroup(`ubicrawl-bench-${process.pid}-${n}-${i}`, quota));
  } catch (error) {
    for (const group of groups) group.remove();
    throw error;
  }
  return groups;
}

/** The share of CFS periods in which the agents' groups hit their cap (NaN without --cpu-quota). */
function throttledShare(quotas) {
  let periods = 0;
  let throttled = 0;
  for (const quota of quotas) {
    const stat = quota.throttling();
    periods += stat.periods;
    throttled += stat.throttledPeriods;
  }
  return periods === 0 ? Number.NaN : throttled / periods;
}

/** CPU pinning, CPU quota and profiling of agent `i` (1-based) of `n`. */
function spawnOptionsOf(n, i, quotas) {
  const options = {};
  if (cores.length > 0) options.core = cores[(i - 1) % cores.length];
  if (quotas.length > 0) options.cgroupProcs = quotas[i - 1].procsFile;
  if (profileDir !== undefined) {
    const folder = join(profileDir, `agents-${n}`);
    options.nodeArgs = ["--cpu-prof", "--cpu-prof-dir", folder, "--cpu-prof-name", `agent-${i}.cpuprofile`];
  }
  return options;
}

function printTable() {
  const headers = [
    "agents",
    ...(flags.pin ? ["cores"] : []),
    "pages",
    "wall s",
    "end lag s",
    "pages/s",
    "/agent",
    "/agent crawling",
    "max/mean pages",
    ...(quotaSet ? ["throttled"] : []),
    "CPU s/1k",
    "start CPU s/agent",
    "steady /agent",
    "steady CPU s/1k",
    "tail CPU s/1k",
    "RSS MiB",
    "links out/page",
    "expected",
    "URLs sent/page",
    "batches/100p",
    "coverage",
    "overlap",
  ];
  const rows = results.map((r) => [
    `${r.agents}${r.ok ? "" : " (!)"}`,
    ...(flags.pin ? [r.cores.join(",")] : []),
    String(r.pagesFetched),
    fixed(r.wallSeconds, 1),
    fixed(r.endLagSeconds, 1),
    fixed(r.pagesPerSecond, 0),
    fixed(r.pagesPerSecondPerAgent, 0),
    fixed(r.crawlingPagesPerSecondPerAgent, 0),
    fixed(r.maxOverMeanPages, 2),
    ...(quotaSet ? [percent(r.throttledShare)] : []),
    fixed(r.cpuSecondsPer1000Pages, 2),
    fixed(r.startCpuSecondsPerAgent, 2),
    fixed(r.steadyPagesPerSecondPerAgent, 0),
    fixed(r.steadyCpuSecondsPer1000Pages, 2),
    fixed(r.tailCpuSecondsPer1000Pages, 2),
    fixed(r.maxPeakRssMib, 0),
    Number.isNaN(r.linksOutPerPage) ? "-" : fixed(r.linksOutPerPage, 3),
    fixed(r.expectedLinksOutPerPage, 3),
    fixed(r.urlsSentPerPage, 3),
    fixed(r.batchesPer100Pages, 2),
    percent(r.coverage),
    percent(r.overlap),
  ]);
  process.stdout.write(
    `ubicrawl bench/cluster: test web ${flags.hosts} hosts / ${truth.size} truth URLs, ` +
      `--max-active-hosts ${flags["max-active-hosts"]} per agent, --delay-ms 0, all processes on this machine ` +
      (flags.pin ? "(pinned: agent i on CPU i mod cores with taskset; the test web unpinned) " : "") +
      (quotaSet
        ? `(each agent capped at ${flags["cpu-quota"]} % of one CPU in a cgroup of its own; throttled = ` +
          "share of 100 ms periods in which an agent used up its cap; the test web uncapped) "
        : "") +
      `(${loadAverage.cpus} CPUs, load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after)\n` +
      `inter-host share of followed links: ${percent(links.interHostShare, 1)} ` +
      `(${fixed(links.interHostLinksPerPage, 2)} inter-host links a page of ${fixed(links.followedLinks / Math.max(1, links.pages), 2)} followed); ` +
      "expected links out/page (to other agents' hosts) = inter-host links a page × (1 − 1/n); each URL among " +
      "them is sent once (URLs sent/page)\n\n" +
      `${formatTable(headers, rows)}\n` +
      (results.some((r) => !r.ok) ? "(!) an agent failed or timed out: see stderr\n" : ""),
  );
}
