// Single-agent throughput: one `ubicrawl agent` process crawls the test web (served by a separate
// `ubicrawl testweb` process) with no politeness delay, and this prints pages/s, MiB/s, CPU per 1,000
// pages (whole process, by thread, and by phase: start, steady middle, tail), peak RSS, seen-set bytes
// per URL, and coverage/overlap against the ground truth.
// Run after `npm run build`:  node bench/run.mjs [--hosts N] [--pages N] [--runs N] [--json] [--cpu-prof DIR]
import { mkdir, rm } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { estimateSeenUrls, measureCrawlLogs, parseAgentSummary, readTruth } from "./lib/crawl-metrics.mjs";
import { crawlPhases, EDGE_SHARE } from "./lib/crawl-phases.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import {
  benchAgentFlags,
  openWorkspace,
  PeakRssSampler,
  reapedChildrenCpuSeconds,
  startAgentProcess,
  startTestWebProcess,
} from "./lib/processes.mjs";
import { fixed, formatTable, MIB, medianRecord, percent } from "./lib/report.mjs";
import { seenSetMemory } from "./lib/seen-memory.mjs";

const FLAGS = {
  hosts: { type: "integer", help: "hosts of the test web", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 20_000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  "max-active-hosts": { type: "integer", help: "hosts the agent visits at once", default: 64, min: 1 },
  runs: { type: "integer", help: "crawls to run (the median is printed)", default: 1, min: 1, max: 99 },
  "timeout-s": { type: "integer", help: "give up on a crawl after this long", default: 600, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the agents' data (WARC files, crawl logs) and print where" },
  "cpu-prof": { type: "string", help: "write V8 CPU profiles of the agent (and its worker) to this folder" },
};

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/run.mjs [flags]");
const web = { seed: flags.seed, hosts: flags.hosts, pages: flags.pages };
const { dir, children } = await openWorkspace("run", flags.keep);
const log = (text) => process.stderr.write(`${text}\n`);
// The machine may be shared: the 1-minute load average before and after says how busy it was.
const loadBefore = loadavg()[0];

const cpuBeforeWeb = reapedChildrenCpuSeconds();
const testweb = await startTestWebProcess(dir, web);
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);
log(
  `test web: ${flags.hosts} hosts, ${truth.size} URLs in the truth, port ${testweb.port} (pid ${testweb.child.pid})`,
);

const sampler = new PeakRssSampler(100);
const runs = [];
let failed = false;
try {
  for (let run = 1; run <= flags.runs; run++) {
    const result = await crawlOnce(run);
    runs.push(result);
    if (result.exitCode !== 0 || result.timedOut) failed = true;
    log(
      `run ${run}: ${result.pagesFetched} pages in ${fixed(result.wallSeconds, 1)} s, ` +
        `${fixed(result.pagesPerSecond, 0)} pages/s, coverage ${percent(result.coverage)}`,
    );
  }
} finally {
  sampler.stop();
  await testweb.child.stop();
}
const testwebCpuSeconds =
  reapedChildrenCpuSeconds() - cpuBeforeWeb - runs.reduce((sum, r) => sum + r.cpuSeconds, 0);

const median = medianRecord(runs);
const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
if (flags.json) {
  process.stdout.write(
    `${JSON.stringify({ web, truthUrls: truth.size, flags, runs, median, testwebCpuSeconds, loadAverage }, null, 2)}\n`,
  );
} else {
  printTable();
}
process.exitCode = failed ? 1 : 0;

/**
 * The agent's CPU per 1,000 pages by thread, from the sampler's last reading before the exit: the main
 * thread, the busiest other thread (the WARC worker: gzip and SHA-1 of every record) and the rest (V8's
 * GC helpers, libuv's pool with LevelDB's writes, LevelDB's compaction).
 */
function threadSplit({ main, busiestOther, rest }, pages) {
  const per1000 = (seconds) => (seconds * 1000) / Math.max(1, pages);
  return {
    mainThreadCpuPer1000Pages: per1000(main),
    warcWorkerCpuPer1000Pages: per1000(busiestOther),
    otherThreadsCpuPer1000Pages: per1000(rest),
  };
}

/** One crawl of the test web by a fresh agent; its figures. */
async function crawlOnce(run) {
  const data = join(dir, `agent-${run}`);
  await mkdir(data, { recursive: true });
  const cpuBefore = reapedChildrenCpuSeconds();
  const agent = withCpuProfile(() =>
    startAgentProcess(`bench-${run}`, [
      ...["--data", data, "--seeds", testweb.files.seeds],
      ...benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"]),
    ]),
  );
  children.add(agent);
  sampler.watch(agent.pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    log(`run ${run}: no end after ${flags["timeout-s"]} s, stopping the agent (pid ${agent.pid})`);
    agent.stop();
  }, flags["timeout-s"] * 1000);
  const exitCode = await agent.exited;
  clearTimeout(timer);
  children.delete(agent);
  const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
  const wallSeconds = (agent.exitedAtMs - agent.startedAtMs) / 1000;
  const metrics = await measureCrawlLogs([join(data, "crawl.log")], truth);
  const phases = crawlPhases({
    series: sampler.cpuSeriesOf(agent.pid),
    pageTimesMs: metrics.pageTimesMs,
    startedAtMs: agent.startedAtEpochMs,
    exitedAtMs: agent.exitedAtEpochMs,
    cpuSeconds,
  });
  const summary = parseAgentSummary(agent.stderrLines);
  const seenEstimated = summary.seenUrls === undefined;
  const seenUrls = summary.seenUrls ?? estimateSeenUrls(metrics.loggedUrls, summary.dropped);
  const seenBytes = summary.seenSetBytes ?? seenSetMemory(seenUrls).bytes;
  if (exitCode !== 0) log(`run ${run}: the agent exited with ${exitCode}:\n${agent.stderrLines.join("\n")}`);
  if (!flags.keep) await rm(data, { recursive: true, force: true });
  return {
    run,
    exitCode,
    timedOut,
    pagesFetched: metrics.fetches,
    failedFetches: metrics.failures,
    bodyBytes: metrics.bytes,
    wallSeconds,
    agentSeconds: summary.seconds ?? Number.NaN,
    pagesPerSecond: metrics.fetches / wallSeconds,
    mibPerSecond: metrics.bytes / MIB / wallSeconds,
    cpuSeconds,
    cpuCores: cpuSeconds / wallSeconds,
    cpuSecondsPer1000Pages: (cpuSeconds * 1000) / Math.max(1, metrics.fetches),
    ...threadSplit(sampler.threadCpuOf(agent.pid), metrics.fetches),
    startCpuSeconds: phases.start.cpuSeconds,
    steadyPagesPerSecond: phases.steady.pagesPerSecond,
    steadyCpuSecondsPer1000Pages: phases.steady.cpuMsPerPage,
    tailCpuSecondsPer1000Pages: phases.tail.cpuMsPerPage,
    peakRssMib: sampler.peakOf(agent.pid) / MIB,
    seenUrls,
    seenSetBytes: seenBytes,
    seenBytesPerUrl: seenBytes / Math.max(1, seenUrls),
    seenEstimated,
    coverage: metrics.coverage,
    overlap: metrics.overlap,
    extraUrls: metrics.extra,
  };
}

/**
 * Runs `start` with NODE_OPTIONS preloading a V8 CPU profiler when --cpu-prof is set, so only the agent
 * is profiled (Node 20 refuses `--cpu-prof` in NODE_OPTIONS, hence an inline `--import`). The profile of
 * the main thread is written to `<folder>/agent-<pid>.cpuprofile` when the agent exits.
 */
function withCpuProfile(start) {
  const folder = flags["cpu-prof"];
  if (folder === undefined) return start();
  const preload = `
    import { Session } from "node:inspector";
    import { mkdirSync, writeFileSync } from "node:fs";
    import { isMainThread } from "node:worker_threads";
    if (isMainThread) {
      const session = new Session();
      session.connect();
      session.post("Profiler.enable");
      session.post("Profiler.start");
      process.once("exit", () => session.post("Profiler.stop", (error, result) => {
        if (error) return;
        mkdirSync(${JSON.stringify(resolve(folder))}, { recursive: true });
        writeFileSync(${JSON.stringify(resolve(folder))} + "/agent-" + process.pid + ".cpuprofile", JSON.stringify(result.profile));
      }));
    }`;
  const before = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS =
    `${before ?? ""} --import=data:text/javascript,${encodeURIComponent(preload)}`.trim();
  try {
    return start();
  } finally {
    if (before === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = before;
  }
}

function printTable() {
  const EDGE = Math.round(EDGE_SHARE * 100);
  const columns = [...runs.map((r) => `run ${r.run}`), ...(runs.length > 1 ? ["median"] : [])];
  const records = runs.length > 1 ? [...runs, median] : runs;
  const estimated = runs.some((r) => r.seenEstimated);
  const rows = [
    ["pages fetched", (r) => String(Math.round(r.pagesFetched))],
    ["wall time (s)", (r) => fixed(r.wallSeconds, 1)],
    ["pages/s", (r) => fixed(r.pagesPerSecond, 0)],
    ["MiB/s (bodies)", (r) => fixed(r.mibPerSecond, 1)],
    ["CPU s / 1,000 pages", (r) => fixed(r.cpuSecondsPer1000Pages, 2)],
    ["  main thread", (r) => fixed(r.mainThreadCpuPer1000Pages, 2)],
    ["  WARC worker", (r) => fixed(r.warcWorkerCpuPer1000Pages, 2)],
    ["  other threads", (r) => fixed(r.otherThreadsCpuPer1000Pages, 2)],
    [`start, first ${EDGE} % of pages: CPU s`, (r) => fixed(r.startCpuSeconds, 2)],
    [`steady, middle ${100 - 2 * EDGE} %: pages/s`, (r) => fixed(r.steadyPagesPerSecond, 0)],
    ["  CPU s / 1,000 pages", (r) => fixed(r.steadyCpuSecondsPer1000Pages, 2)],
    [`tail, last ${EDGE} %: CPU s / 1,000 pages`, (r) => fixed(r.tailCpuSecondsPer1000Pages, 2)],
    ["CPU cores used", (r) => fixed(r.cpuCores, 2)],
    ["peak RSS (MiB)", (r) => fixed(r.peakRssMib, 0)],
    [`seen URLs${estimated ? " (est.)" : ""}`, (r) => String(Math.round(r.seenUrls))],
    ["seen set bytes / URL", (r) => fixed(r.seenBytesPerUrl, 1)],
    ["coverage", (r) => percent(r.coverage)],
    ["overlap", (r) => percent(r.overlap)],
  ].map(([label, cell]) => [label, ...records.map(cell)]);
  process.stdout.write(
    `ubicrawl bench/run: 1 agent, test web ${flags.hosts} hosts / ${truth.size} truth URLs, ` +
      `--max-active-hosts ${flags["max-active-hosts"]}, --delay-ms 0\n\n` +
      `${formatTable(["", ...columns], rows)}\n\n` +
      `test web process CPU: ${fixed(testwebCpuSeconds, 1)} s over ${runs.length} run(s); ` +
      `load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after, ${loadAverage.cpus} CPUs` +
      (estimated ? "; seen URLs estimated (the agent does not print its seen set)" : "") +
      "\n",
  );
}
