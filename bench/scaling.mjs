// Does adding agents make the crawl faster, and what does cluster dedup cost? On a test web shaped like
// the real web (heavy-tailed host sizes with one host holding ~15% of the pages, most hosts small, pages
// of 11–28 KB, dead hosts, mirrors), one `ubicrawl testweb` process serves every crawl; one after
// another on it: for each agent count (--agents, default 1,2), the agents' defaults (`--dedup cluster`)
// and then `--dedup off` (--dedup lists the modes), all with `--delay-ms 0`. Each crawl is a fresh
// cluster (agent i joins agents 1…i−1; the last one gets the seeds once the others see each other
// alive; all exit by themselves when the crawl is done). One table, a row a crawl:
//   pages        crawl log lines with status > 0 over all agents (answered requests: 200s, 404s, redirects,
//                robots.txt)
//   wall s       from spawning the seeded (last) agent to the exit of the last agent
//   end lag s    from the last crawl log line to the exit of the last agent (end of crawl detected, shutdown)
//   pages/s      pages / wall s;  × 1 agent: that over the 1-agent defaults crawl's
//   CPU ms/page  user + system CPU of all the crawl's agent processes (every thread; the kernel's account
//                of reaped children, exact), from their spawn (membership included) to their exit, / pages
//   msgs/page    the messages the agents sent each other, a page, from their `stopped` records: URL
//                batches, digest questions and settlements (cluster dedup), IP limit asks and releases
//   RSS MiB      the largest peak RSS (VmHWM, sampled every 100 ms) of one agent of the crawl
//   tail s, %    from the start time of the page that makes 90% of the pages (in time order over all the
//                crawl logs) to the last page's, in seconds and as a share of wall s
//   coverage     ground-truth URLs fetched / ground-truth URLs
//   big host     the host with the most ground-truth URLs: its pages (answered requests in the crawl logs);
//   first s      when its first request started, from the crawl's start;
//   alone s      from the last request to any other host to its own last request: how long it was
//                crawled alone at the end (0 when another host had the last request); alone pages: its
//                requests in that time;
//   gap ms       the median and 90th percentile (nearest rank) of the gaps between the start times of
//                its successive requests in that window (start to start: the request itself and all the
//                agent does before the next one; the crawl log's `ts` has millisecond resolution)
// The agents run with the benches' test-web flags (names only through the web's hosts file, loopback
// allowed, --delay-ms 0, robots.txt retried after 100 ms at most twice, --exit-when-done, no progress
// records) plus `--dedup MODE`, with several agents `--listen 127.0.0.1:0 --insecure` (a lone agent
// runs without: a cluster of one exits ~6 s after its last page, a plain agent at once), and otherwise
// their own defaults (--max-active-hosts 256 unless given).
// Run after `npm run build`:
//   node bench/scaling.mjs [--agents 1,2] [--dedup cluster,off] [--hosts 800] [--pages 32000]
//                          [--biggest-host-percent 20] [--max-articles-per-host 1500] [--gone-hosts 20]
//                          [--seed 1] [--max-active-hosts N] [--cpu-prof DIR] [--json] [--keep]
import { rm, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { startClusterAgents } from "./lib/cluster-start.mjs";
import { measureCrawlLogs, parseAgentSummary, readTruth, requestTimesByHost } from "./lib/crawl-metrics.mjs";
import { biggestHost, crawlTail, hostAlone } from "./lib/crawl-tail.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import {
  benchAgentFlags,
  openWorkspace,
  PeakRssSampler,
  processCpuSeconds,
  reapedChildrenCpuSeconds,
  startTestWebProcess,
} from "./lib/processes.mjs";
import { fixed, formatTable, MIB, percent } from "./lib/report.mjs";
import { StatsPoller } from "./lib/stats-poller.mjs";

const DEDUP_MODES = ["cluster", "local", "off"];
const FLAGS = {
  agents: { type: "string", help: "agent counts to run, comma-separated (default: 1,2)" },
  dedup: {
    type: "string",
    help: "--dedup modes to run for each count, comma-separated; cluster is the agents' default (default: cluster,off)",
  },
  hosts: { type: "integer", help: "hosts of the test web", default: 800, min: 3, max: 5000 },
  pages: {
    type: "integer",
    help: "pages of the test web (about: the truth holds ~1.3× as many URLs on this shape)",
    default: 32_000,
    min: 10,
    max: 1_000_000,
  },
  "biggest-host-percent": {
    type: "integer",
    help: "the biggest host's share of the articles, % (0: sized like the others); 20 gives it ~15% of the truth",
    default: 20,
    min: 0,
    max: 90,
  },
  "max-articles-per-host": {
    type: "integer",
    help: "largest number of articles on a host (but the biggest, with --biggest-host-percent)",
    default: 1500,
    min: 5,
  },
  "gone-hosts": { type: "integer", help: "dead hosts linked from pages", default: 20, min: 1, max: 10_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  "max-active-hosts": {
    type: "integer",
    help: "hosts each agent visits at once (default: the agents' own, 256)",
    min: 1,
  },
  "cpu-prof": {
    type: "string",
    help: "write a V8 CPU profile of every agent into this folder (<folder>/agents-<n>-dedup-<mode>/agent-<i>.cpuprofile)",
  },
  "timeout-s": { type: "integer", help: "give up on a crawl after this long", default: 900, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: {
    type: "boolean",
    help: "keep the agents' data (WARC files, crawl logs, their own logs as agent.log) and print where",
  },
};

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/scaling.mjs [flags]");
const agentCounts = listFlag("agents", "1,2", (text) => {
  const n = Number(text);
  return Number.isInteger(n) && n >= 1 && n <= 64 ? n : undefined;
});
const modes = listFlag("dedup", "cluster,off", (text) => (DEDUP_MODES.includes(text) ? text : undefined));
const web = {
  seed: flags.seed,
  hosts: flags.hosts,
  pages: flags.pages,
  maxArticlesPerHost: flags["max-articles-per-host"],
  ...(flags["biggest-host-percent"] === 0 ? {} : { biggestHostPercent: flags["biggest-host-percent"] }),
  goneHosts: flags["gone-hosts"],
};
const profileDir = flags["cpu-prof"] === undefined ? undefined : resolve(flags["cpu-prof"]);
const log = (text) => process.stderr.write(`${text}\n`);
const { dir, children } = await openWorkspace("scaling", flags.keep);
// The machine may be shared: the 1-minute load average before and after each crawl says how busy it was.
const loadBefore = loadavg()[0];
const benchStartedAtMs = performance.now();

const testweb = await startTestWebProcess(dir, web);
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);
const shape = webShape(truth, testweb.child.stderrLines);
log(
  `test web: ${shape.hosts} hosts in the truth, ${truth.size} URLs; biggest host ${shape.biggest.host} ` +
    `${shape.biggest.urls} URLs (${percent(shape.biggest.share, 1)}); ${shape.deadHosts} dead hosts; ` +
    `port ${testweb.port} (pid ${testweb.child.pid})`,
);

const results = [];
try {
  for (const n of agentCounts) {
    for (const mode of modes) {
      const result = await runCrawl(n, mode);
      results.push(result);
      log(
        `${result.label}: ${result.pages} pages in ${fixed(result.wallSeconds, 1)} s, ` +
          `${fixed(result.pagesPerSecond, 0)} pages/s, ${fixed(result.cpuMsPerPage, 2)} CPU ms/page, ` +
          `tail ${fixed(result.tail.seconds, 1)} s (${percent(result.tail.shareOfCrawl, 0)}), ` +
          `coverage ${percent(result.coverage)}`,
      );
    }
  }
} finally {
  await Promise.all([...children].map((child) => child.stop()));
}

const baseline = results.find((r) => r.agents === 1 && r.dedup === "cluster") ?? results[0];
for (const r of results) r.ratioToBaseline = r.pagesPerSecond / (baseline?.pagesPerSecond ?? Number.NaN);
const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
const benchSeconds = (performance.now() - benchStartedAtMs) / 1000;
if (flags.json) {
  process.stdout.write(
    `${JSON.stringify({ web, shape, truthUrls: truth.size, flags, results, loadAverage, benchSeconds }, null, 2)}\n`,
  );
} else {
  printTable();
}
process.exitCode = results.every((r) => r.ok) ? 0 : 1;

/**
 * A comma-separated list flag, each item checked by `parse` (undefined: rejected).
 * @template T
 * @param {string} name
 * @param {string} fallback
 * @param {(text: string) => T | undefined} parse
 * @returns {T[]}
 */
function listFlag(name, fallback, parse) {
  return String(flags[name] ?? fallback)
    .split(",")
    .map((text) => {
      const value = parse(text.trim());
      if (value === undefined) throw new Error(`--${name}: "${text}" is not allowed`);
      return value;
    });
}

/**
 * The web's shape as the crawls see it: hosts holding truth URLs, the biggest of them, and the dead
 * hosts (the test web's truth line: `… N unresolvable hosts …`, names pages link to that no hosts file
 * resolves).
 * @param {ReadonlySet<string>} truthUrls
 * @param {readonly string[]} testwebLines the test web's stderr
 */
function webShape(truthUrls, testwebLines) {
  const hosts = new Set([...truthUrls].map((url) => new URL(url).hostname)).size;
  const dead = testwebLines.map((line) => /^truth: .*?(\d+) unresolvable hosts/.exec(line)).find(Boolean);
  return { hosts, biggest: biggestHost(truthUrls), deadHosts: dead ? Number(dead[1]) : Number.NaN };
}

/** One crawl of the whole web by `n` agents with `--dedup mode`; its figures. */
async function runCrawl(n, mode) {
  const name = `agents-${n}-dedup-${mode}`;
  const label = `${n} agent${n === 1 ? "" : "s"}, ${mode === "cluster" ? "defaults" : `--dedup ${mode}`}`;
  const runDir = join(dir, name);
  // Only asked whether the agents see each other before the seeds go out: it never polls on its own.
  const stats = new StatsPoller(2 ** 31 - 1);
  const sampler = new PeakRssSampler(100);
  /** @type {import("./lib/processes.mjs").Child[]} */
  const agents = [];
  const cpuBefore = reapedChildrenCpuSeconds();
  const serverCpuBefore = processCpuSeconds(testweb.child.pid);
  let timedOut = false;
  let timer;
  log(`${label}: starting`);
  try {
    await startClusterAgents({
      count: n,
      runDir,
      flags: benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"], { dedup: mode }),
      seedsFile: testweb.files.seeds,
      stats,
      spawnOptionsOf: (i) =>
        profileDir === undefined
          ? {}
          : {
              nodeArgs: [
                ...["--cpu-prof", "--cpu-prof-dir", join(profileDir, name)],
                ...["--cpu-prof-name", `agent-${i}.cpuprofile`],
              ],
            },
      onSpawn: (agent) => {
        children.add(agent);
        agents.push(agent);
        sampler.watch(agent.pid);
      },
      log,
      // One agent runs as a user runs one: a plain `ubicrawl agent` (a cluster of one would wait ~6 s
      // on the failure detector's rounds after its last page).
      listenAlone: false,
    });
    const seeded = /** @type {import("./lib/processes.mjs").Child} */ (agents.at(-1));
    timer = setTimeout(() => {
      timedOut = true;
      log(`${label}: no end after ${flags["timeout-s"]} s, stopping the agents`);
      for (const agent of agents) agent.stop();
    }, flags["timeout-s"] * 1000);
    const exitCodes = await Promise.all(agents.map((agent) => agent.exited));
    const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
    const serverCpuSeconds = processCpuSeconds(testweb.child.pid) - serverCpuBefore;
    const endedAtMs = Math.max(...agents.map((agent) => agent.exitedAtMs ?? Number.NaN));
    const endedAtEpochMs = Math.max(...agents.map((agent) => agent.exitedAtEpochMs ?? Number.NaN));
    const wallSeconds = (endedAtMs - seeded.startedAtMs) / 1000;
    for (const [i, code] of exitCodes.entries()) {
      if (code !== 0) log(`${agents[i]?.name} exited with ${code}:\n${agents[i]?.stderrLines.join("\n")}`);
    }
    if (flags.keep) {
      for (const agent of agents) {
        await writeFile(join(runDir, agent.name, "agent.log"), `${agent.stderrLines.join("\n")}\n`);
      }
    }
    const logs = agents.map((agent) => join(runDir, agent.name, "crawl.log"));
    const summaries = agents.map((agent) => parseAgentSummary(agent.stderrLines));
    const sum = (/** @type {(s: (typeof summaries)[number]) => number} */ of) =>
      summaries.reduce((total, summary) => total + of(summary), 0);
    const metrics = await measureCrawlLogs(logs, truth);
    const requests = await requestTimesByHost(logs);
    const peaks = agents.map((agent) => sampler.peakOf(agent.pid) / MIB);
    return {
      label,
      agents: n,
      dedup: mode,
      ok: !timedOut && exitCodes.every((code) => code === 0),
      pages: metrics.fetches,
      wallSeconds,
      pagesPerSecond: metrics.fetches / wallSeconds,
      cpuSeconds,
      cpuMsPerPage: (cpuSeconds * 1000) / Math.max(1, metrics.fetches),
      // The agents' main threads (the event loop), their WARC workers, their other threads (LevelDB,
      // the thread pool, the garbage collector's helpers), summed over the agents, per page; and the test
      // web's CPU a page, which shares the machine with them.
      ...threadCpuMsPerPage(
        agents.map((agent) => sampler.threadCpuOf(agent.pid)),
        metrics.fetches,
      ),
      serverCpuMsPerPage: (serverCpuSeconds * 1000) / Math.max(1, metrics.fetches),
      // Messages the agents sent each other, a page: URL batches, digest questions and settlements, IP
      // limit asks and releases (from each agent's `stopped` record).
      messagesPerPage: {
        urls: sum((s) => s.exchange?.batchesSent ?? 0) / Math.max(1, metrics.fetches),
        digests: sum((s) => s.digestMessages) / Math.max(1, metrics.fetches),
        ip: sum((s) => s.ipMessages) / Math.max(1, metrics.fetches),
      },
      // What the machine's CPUs could serve at this crawl's CPU a page, agents and test web together: a
      // crawl near it is bound by the machine, not by waiting, and more agents cannot lower the sum.
      machinePagesPerSecond:
        (availableParallelism() * metrics.fetches) / Math.max(1e-9, cpuSeconds + serverCpuSeconds),
      peakRssMibByAgent: peaks,
      maxPeakRssMib: Math.max(...peaks),
      endLagSeconds: (endedAtEpochMs - metrics.lastEntryEpochMs) / 1000,
      tail: crawlTail(metrics.pageTimesMs, seeded.startedAtEpochMs, endedAtEpochMs),
      coverage: metrics.coverage,
      overlap: metrics.overlap,
      biggestHost: {
        host: shape.biggest.host,
        pages: requests.answered.get(shape.biggest.host)?.length ?? 0,
        firstSeconds:
          ((requests.answered.get(shape.biggest.host)?.[0] ?? Number.NaN) - seeded.startedAtEpochMs) / 1000,
        ...hostAlone(requests.answered, shape.biggest.host),
      },
      deadHostsMet: requests.failedHosts.length,
      loadAverageAfter: loadavg()[0],
    };
  } finally {
    clearTimeout(timer);
    stats.stop();
    sampler.stop();
    await Promise.all(agents.map((agent) => agent.stop()));
    for (const agent of agents) children.delete(agent);
    if (!flags.keep) await rm(runDir, { recursive: true, force: true });
  }
}

/**
 * The agents' CPU a page by thread, summed over the agents: main threads, WARC workers (each agent's
 * busiest other thread) and the rest. Read at the sampler's last sample before each exit, so up to one
 * interval of each agent's CPU is missing from these and not from `cpuMsPerPage`.
 * @param {{ main: number, busiestOther: number, rest: number }[]} threads
 * @param {number} pages
 */
function threadCpuMsPerPage(threads, pages) {
  const perPage = (/** @type {number} */ seconds) => (seconds * 1000) / Math.max(1, pages);
  const sum = (/** @type {(t: (typeof threads)[number]) => number} */ of) =>
    threads.reduce((total, t) => total + of(t), 0);
  return {
    mainThreadCpuMsPerPage: perPage(sum((t) => t.main)),
    warcWorkerCpuMsPerPage: perPage(sum((t) => t.busiestOther)),
    otherThreadsCpuMsPerPage: perPage(sum((t) => t.rest)),
  };
}

function printTable() {
  const headers = [
    "crawl",
    "pages",
    "wall s",
    "end lag s",
    "pages/s",
    "× 1 agent",
    "CPU ms/page",
    "main",
    "WARC",
    "other",
    "server",
    "CPU-bound p/s",
    "msgs/page URLs",
    "digests",
    "IP",
    "RSS MiB",
    "tail s",
    "tail %",
    "coverage",
    "big host pages",
    "first s",
    "alone s",
    "alone pages",
    "gap ms median",
    "gap ms p90",
  ];
  const rows = results.map((r) => [
    `${r.label}${r.ok ? "" : " (!)"}`,
    String(r.pages),
    fixed(r.wallSeconds, 1),
    fixed(r.endLagSeconds, 1),
    fixed(r.pagesPerSecond, 0),
    `${fixed(r.ratioToBaseline, 2)}×`,
    fixed(r.cpuMsPerPage, 2),
    fixed(r.mainThreadCpuMsPerPage, 2),
    fixed(r.warcWorkerCpuMsPerPage, 2),
    fixed(r.otherThreadsCpuMsPerPage, 2),
    fixed(r.serverCpuMsPerPage, 2),
    `${fixed(r.machinePagesPerSecond, 0)} (${percent(r.pagesPerSecond / r.machinePagesPerSecond, 0)})`,
    fixed(r.messagesPerPage.urls, 3),
    fixed(r.messagesPerPage.digests, 3),
    fixed(r.messagesPerPage.ip, 3),
    fixed(r.maxPeakRssMib, 0),
    fixed(r.tail.seconds, 1),
    percent(r.tail.shareOfCrawl, 0),
    percent(r.coverage),
    String(r.biggestHost.pages),
    fixed(r.biggestHost.firstSeconds, 1),
    fixed(r.biggestHost.seconds, 1),
    String(r.biggestHost.requests),
    fixed(r.biggestHost.medianGapMs, 1),
    fixed(r.biggestHost.p90GapMs, 0),
  ]);
  const byCrawl = results.map((r) => fixed(r.loadAverageAfter, 2)).join(", ");
  process.stdout.write(
    `ubicrawl bench/scaling: test web of ${flags.hosts} hosts (${shape.hosts} hold truth URLs), ${truth.size} truth URLs, ` +
      `biggest host ${shape.biggest.urls} URLs (${percent(shape.biggest.share, 1)}), ${shape.deadHosts} dead hosts; ` +
      `--delay-ms 0, --max-active-hosts ${flags["max-active-hosts"] ?? "256 (default)"} per agent, all processes on this machine ` +
      `(${loadAverage.cpus} CPUs, load average ${fixed(loadAverage.before, 2)} before, ${byCrawl} after each crawl); ` +
      `${fixed(benchSeconds, 0)} s in all\n` +
      "defaults = --dedup cluster; × 1 agent = pages/s over the 1-agent defaults crawl's; main, WARC, other = the agents' CPU ms a page " +
      "by thread (event loops, WARC workers, the rest), server = the test web's; CPU-bound p/s = the pages/s this machine's " +
      "CPUs could give at the crawl's CPU a page, agents' and server's (and how near the crawl came); msgs/page = the messages " +
      "the agents sent each other a page: URL batches, digest questions and settlements, IP limit messages; RSS = the largest agent's peak; " +
      "tail = from 90% of the pages to the last; big host: its pages, its first request (s from the start), how long " +
      "and for how many pages it was crawled alone at the end, and the gaps between its requests then (start to start)\n\n" +
      `${formatTable(headers, rows)}\n` +
      (results.some((r) => !r.ok) ? "(!) an agent failed or timed out: see stderr\n" : ""),
  );
}
