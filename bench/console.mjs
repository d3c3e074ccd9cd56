// What the console costs: the same crawl by one agent without `--http`, and with it while a scraper
// reads /metrics every second and a dashboard polls /api/stats?cluster=1 and /api/activity every
// second, alternated run by run on one test web; prints CPU ms per page of each (the agent process,
// all threads) and their ratio (issue 15 asks for under 3% more).
// Run after `npm run build`:  node bench/console.mjs [--hosts N] [--pages N] [--runs N] [--json]
import { mkdir, rm } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
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
  pages: { type: "integer", help: "pages of the test web (about)", default: 20_000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  runs: { type: "integer", help: "crawls of each kind, alternated", default: 3, min: 1, max: 99 },
  "poll-ms": { type: "integer", help: "scrape and dashboard interval", default: 1000, min: 50 },
  json: { type: "boolean", help: "print JSON instead of a table" },
};

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/console.mjs [flags]");
const { dir, children } = await openWorkspace("console", false);
const log = (text) => process.stderr.write(`${text}\n`);
const loadBefore = loadavg()[0];
const testweb = await startTestWebProcess(dir, { seed: flags.seed, hosts: flags.hosts, pages: flags.pages });
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);

const results = { without: [], with: [] };
try {
  for (let run = 1; run <= flags.runs; run++) {
    for (const kind of ["without", "with"]) {
      const result = await crawl(`${kind}-${run}`, kind === "with");
      results[kind].push(result);
      log(
        `${kind} --http, run ${run}: ${result.pages} pages, ${fixed(result.cpuMsPerPage, 3)} CPU ms/page, ` +
          `${result.polls} polls, coverage ${percent(result.coverage)}`,
      );
    }
  }
} finally {
  await testweb.child.stop();
}

const summary = {
  cpuMsPerPageWithout: median(results.without.map((r) => r.cpuMsPerPage)),
  cpuMsPerPageWith: median(results.with.map((r) => r.cpuMsPerPage)),
};
summary.ratio = summary.cpuMsPerPageWith / summary.cpuMsPerPageWithout;
const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ flags, results, summary, loadAverage }, null, 2)}\n`);
} else {
  process.stdout.write(
    `${formatTable(
      ["", "without --http", "with --http, scraped and polled"],
      [
        [
          "CPU ms per page (median)",
          fixed(summary.cpuMsPerPageWithout, 3),
          fixed(summary.cpuMsPerPageWith, 3),
        ],
        [
          "pages/s (median)",
          ...["without", "with"].map((k) => fixed(median(results[k].map((r) => r.pagesPerSecond)), 0)),
        ],
        ["ratio", "1.000", fixed(summary.ratio, 3)],
      ],
    )}\nload average ${fixed(loadAverage.before, 2)} → ${fixed(loadAverage.after, 2)} on ${loadAverage.cpus} CPUs\n`,
  );
}

/** One crawl by a fresh agent, with the console scraped and polled when `console` is set. */
async function crawl(name, console) {
  const data = join(dir, name);
  await mkdir(data, { recursive: true });
  const cpuBefore = reapedChildrenCpuSeconds();
  const agent = startAgentProcess(name, [
    ...["--data", data, "--seeds", testweb.files.seeds],
    ...benchAgentFlags(testweb.files.hosts, 64),
    ...(console ? ["--http", "127.0.0.1:0"] : []),
  ]);
  children.add(agent);
  let polls = 0;
  let poller;
  if (console) {
    const base = String((await agent.waitForEvent("console", 20_000)).url).replace(/\/$/, "");
    const paths = ["/metrics", "/api/stats?cluster=1", "/api/activity"];
    poller = setInterval(() => {
      for (const path of paths) {
        fetch(`${base}${path}`)
          .then((response) => response.arrayBuffer())
          .then(
            () => polls++,
            () => {},
          );
      }
    }, flags["poll-ms"]);
  }
  const exitCode = await agent.exited;
  clearInterval(poller);
  children.delete(agent);
  if (exitCode !== 0) throw new Error(`${name} exited with ${exitCode}:\n${agent.stderrLines.join("\n")}`);
  const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
  const wallSeconds = (agent.exitedAtMs - agent.startedAtMs) / 1000;
  const metrics = await measureCrawlLogs([join(data, "crawl.log")], truth);
  await rm(data, { recursive: true, force: true });
  return {
    pages: metrics.fetches,
    cpuSeconds,
    cpuMsPerPage: (cpuSeconds * 1000) / Math.max(1, metrics.fetches),
    pagesPerSecond: metrics.fetches / wallSeconds,
    polls,
    coverage: metrics.coverage,
  };
}
