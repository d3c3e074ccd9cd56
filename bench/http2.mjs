// HTTP/2 against HTTP/1.1: one agent crawls the test web served over TLS with HTTP/2 offered (a separate
// `ubicrawl testweb --scheme https --http2` process), with and without `--http2`, alternating runs, and
// this prints pages/s and CPU per 1,000 pages of each and their ratios (side by side, in one run).
// Run after `npm run build`:  node bench/http2.mjs [--hosts N] [--pages N] [--runs N] [--json]
import { mkdir, rm } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { measureCrawlLogs, readTruth } from "./lib/crawl-metrics.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import {
  benchAgentFlags,
  openWorkspace,
  reapedChildrenCpuSeconds,
  startAgentProcess,
  startTestWebProcess,
} from "./lib/processes.mjs";
import { fixed, formatTable, median, percent } from "./lib/report.mjs";

const FLAGS = {
  hosts: { type: "integer", help: "hosts of the test web", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 10_000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  "max-active-hosts": { type: "integer", help: "hosts the agent visits at once", default: 64, min: 1 },
  runs: { type: "integer", help: "crawls per protocol, alternating (medians printed)", default: 2, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
};

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/http2.mjs [flags]");
const web = { seed: flags.seed, hosts: flags.hosts, pages: flags.pages, scheme: "https", http2: true };
const { dir, children } = await openWorkspace("http2", false);
const log = (text) => process.stderr.write(`${text}\n`);
const loadBefore = loadavg()[0];

const testweb = await startTestWebProcess(dir, web);
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);
log(`test web over TLS (HTTP/2 offered): ${flags.hosts} hosts, ${truth.size} URLs in the truth`);

const runs = [];
let failed = false;
try {
  for (let run = 1; run <= flags.runs; run++) {
    for (const protocol of ["http/1.1", "h2"]) {
      const result = await crawlOnce(run, protocol);
      runs.push(result);
      if (result.exitCode !== 0 || result.coverage < 1) failed = true;
      log(
        `${protocol} run ${run}: ${result.pages} pages in ${fixed(result.wallSeconds, 1)} s, ` +
          `${fixed(result.pagesPerSecond, 0)} pages/s, ${fixed(result.cpuPer1000, 2)} CPU s / 1,000 pages`,
      );
    }
  }
} finally {
  await testweb.child.stop();
}

const summary = Object.fromEntries(
  ["http/1.1", "h2"].map((protocol) => {
    const mine = runs.filter((r) => r.protocol === protocol);
    return [
      protocol,
      {
        pagesPerSecond: median(mine.map((r) => r.pagesPerSecond)),
        cpuPer1000: median(mine.map((r) => r.cpuPer1000)),
        coverage: Math.min(...mine.map((r) => r.coverage)),
      },
    ];
  }),
);
const ratio = {
  pagesPerSecond: summary.h2.pagesPerSecond / summary["http/1.1"].pagesPerSecond,
  cpuPer1000: summary.h2.cpuPer1000 / summary["http/1.1"].cpuPer1000,
};
const loadAverage = { before: loadBefore, after: loadavg()[0] };
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ web, flags, runs, summary, ratio, loadAverage }, null, 2)}\n`);
} else {
  process.stdout.write(
    `${formatTable(
      ["", "HTTP/1.1", "HTTP/2", "HTTP/2 ÷ HTTP/1.1"],
      [
        [
          "pages/s",
          fixed(summary["http/1.1"].pagesPerSecond, 0),
          fixed(summary.h2.pagesPerSecond, 0),
          fixed(ratio.pagesPerSecond, 2),
        ],
        [
          "CPU s / 1,000 pages",
          fixed(summary["http/1.1"].cpuPer1000, 2),
          fixed(summary.h2.cpuPer1000, 2),
          fixed(ratio.cpuPer1000, 2),
        ],
        ["coverage", percent(summary["http/1.1"].coverage), percent(summary.h2.coverage), ""],
      ],
    )}\n`,
  );
  process.stdout.write(
    `medians of ${flags.runs} run(s) each, alternating; load average ${fixed(loadAverage.before, 2)} → ${fixed(loadAverage.after, 2)}\n`,
  );
}
process.exitCode = failed ? 1 : 0;

/** One crawl by a fresh agent, offering HTTP/2 (`h2`) or not. */
async function crawlOnce(run, protocol) {
  const data = join(dir, `${protocol === "h2" ? "h2" : "h1"}-${run}`);
  await mkdir(data, { recursive: true });
  const cpuBefore = reapedChildrenCpuSeconds();
  const agent = startAgentProcess(`http2-bench-${run}`, [
    ...["--data", data, "--seeds", testweb.files.seeds, "--ca-file", testweb.files.ca],
    ...benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"]),
    ...(protocol === "h2" ? ["--http2"] : []),
  ]);
  children.add(agent);
  const exitCode = await agent.exited;
  children.delete(agent);
  const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
  const wallSeconds = (agent.exitedAtMs - agent.startedAtMs) / 1000;
  const metrics = await measureCrawlLogs([join(data, "crawl.log")], truth);
  if (exitCode !== 0)
    log(`${protocol} run ${run}: the agent exited with ${exitCode}:\n${agent.stderrLines.join("\n")}`);
  await rm(data, { recursive: true, force: true });
  return {
    run,
    protocol,
    exitCode,
    pages: metrics.fetches,
    wallSeconds,
    pagesPerSecond: metrics.fetches / wallSeconds,
    cpuPer1000: (cpuSeconds * 1000) / Math.max(1, metrics.fetches),
    coverage: metrics.coverage,
  };
}
