// ubicrawl beside Crawlee's CheerioCrawler on the same test web, with the same concurrency, in one run:
// one `ubicrawl agent` (--max-active-hosts N) and one CheerioCrawler process (min = max concurrency N)
// crawl the web served by one `ubicrawl testweb` process, one after the other; the table gives each
// crawler's pages/s, CPU per 1,000 pages, peak RSS and coverage, and the ratios.
// Crawlee is not a dependency of ubicrawl: install it apart first, then build and run:
//   npm install --prefix bench/compare && npm run build && node bench/compare.mjs [--pages N] [--json]
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readTruth } from "./lib/crawl-metrics.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import { crawlLogFetchedUrls, fetchFigures, measureChildren, spawnCrawler } from "./lib/measure.mjs";
import {
  benchAgentFlags,
  openWorkspace,
  PeakRssSampler,
  startAgentProcess,
  startTestWebProcess,
} from "./lib/processes.mjs";
import { fixed, formatTable, percent } from "./lib/report.mjs";

const FLAGS = {
  hosts: { type: "integer", help: "hosts of the test web", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 5000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  concurrency: {
    type: "integer",
    help: "ubicrawl --max-active-hosts = Crawlee concurrency",
    default: 64,
    min: 1,
  },
  "timeout-s": { type: "integer", help: "give up on a crawl after this long", default: 900, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the crawlers' data and print where" },
};

const CRAWLEE_SCRIPT = fileURLToPath(new URL("./compare/crawlee-crawl.mjs", import.meta.url));
const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/compare.mjs [flags]");
if (!existsSync(new URL("./compare/node_modules/crawlee/package.json", import.meta.url))) {
  throw new Error("Crawlee is not installed: run `npm install --prefix bench/compare` first");
}
const crawleeVersion = JSON.parse(
  readFileSync(new URL("./compare/node_modules/crawlee/package.json", import.meta.url), "utf8"),
).version;

const { dir, children } = await openWorkspace("compare", flags.keep);
const { normalizeUrl } = await import("../dist/url/index.js");
const log = (text) => process.stderr.write(`${text}\n`);
const loadBefore = loadavg()[0];

const web = { seed: flags.seed, hosts: flags.hosts, pages: flags.pages };
const testweb = await startTestWebProcess(dir, web);
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);
log(`test web: ${flags.hosts} hosts, ${truth.size} URLs in the truth, port ${testweb.port}`);

const sampler = new PeakRssSampler(100);
const results = [];
try {
  results.push(await crawlUbicrawl());
  log(`ubicrawl: ${results[0].pages} pages in ${fixed(results[0].wallSeconds, 1)} s`);
  results.push(await crawlCrawlee());
  log(`crawlee: ${results[1].pages} pages in ${fixed(results[1].wallSeconds, 1)} s`);
} finally {
  sampler.stop();
  await testweb.child.stop();
}

const [ubicrawl, crawlee] = results;
const ratios = {
  pagesPerSecond: ubicrawl.pagesPerSecond / crawlee.pagesPerSecond,
  cpuPerPage: crawlee.cpuSecondsPer1000Pages / ubicrawl.cpuSecondsPer1000Pages,
  peakRss: crawlee.peakRssMib / ubicrawl.peakRssMib,
};
const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
if (flags.json) {
  const report = {
    web,
    truthUrls: truth.size,
    flags,
    crawleeVersion,
    ubicrawl,
    crawlee,
    ratios,
    loadAverage,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  printTable();
}
process.exitCode = ubicrawl.exitCode === 0 && crawlee.exitCode === 0 ? 0 : 1;

/** Runs `start()` as a measured child: wall time, CPU from the kernel's reaped-children counters, RSS. */
function measured(name, start) {
  return measureChildren(name, [start()], { children, sampler, timeoutS: flags["timeout-s"], log });
}

async function crawlUbicrawl() {
  const data = join(dir, "ubicrawl-data");
  await mkdir(data, { recursive: true });
  const run = await measured("ubicrawl", () =>
    startAgentProcess("compare", [
      ...["--data", data, "--seeds", testweb.files.seeds],
      ...benchAgentFlags(testweb.files.hosts, flags.concurrency),
    ]),
  );
  return fetchFigures(run, crawlLogFetchedUrls(join(data, "crawl.log")), truth, normalizeUrl);
}

async function crawlCrawlee() {
  const out = join(dir, "crawlee-fetches.tsv");
  const run = await measured("crawlee", () => startCrawlee(out));
  const urls = [];
  for (const line of existsSync(out) ? readFileSync(out, "utf8").split("\n") : []) {
    const [status, url] = line.split("\t");
    if (url !== undefined && Number(status) > 0) urls.push(url);
  }
  return fetchFigures(run, urls, truth, normalizeUrl);
}

/** Starts the Crawlee process. */
function startCrawlee(out) {
  return spawnCrawler(process.execPath, [
    CRAWLEE_SCRIPT,
    ...["--seeds", testweb.files.seeds, "--hosts-file", testweb.files.hosts, "--out", out],
    ...["--concurrency", String(flags.concurrency), "--storage", join(dir, "crawlee-storage")],
  ]);
}

function printTable() {
  const rows = [
    ["pages fetched", (r) => String(r.pages)],
    ["distinct URLs (canonical)", (r) => String(r.distinctUrls)],
    ["wall time (s)", (r) => fixed(r.wallSeconds, 1)],
    ["pages/s", (r) => fixed(r.pagesPerSecond, 0)],
    ["CPU s / 1,000 pages", (r) => fixed(r.cpuSecondsPer1000Pages, 2)],
    ["CPU cores used", (r) => fixed(r.cpuCores, 2)],
    ["peak RSS (MiB)", (r) => fixed(r.peakRssMib, 0)],
    ["coverage", (r) => percent(r.coverage)],
    ["URLs not in the truth", (r) => String(r.extraUrls)],
  ].map(([label, cell]) => [label, cell(ubicrawl), cell(crawlee)]);
  process.stdout.write(
    `ubicrawl bench/compare: test web ${flags.hosts} hosts / ${truth.size} truth URLs, ` +
      `concurrency ${flags.concurrency}, Crawlee ${crawleeVersion} CheerioCrawler\n\n` +
      `${formatTable(["", "ubicrawl", "crawlee"], rows)}\n\n` +
      `ubicrawl / crawlee pages/s: ${fixed(ratios.pagesPerSecond, 2)}x; ` +
      `crawlee / ubicrawl CPU per page: ${fixed(ratios.cpuPerPage, 2)}x, peak RSS: ${fixed(ratios.peakRss, 2)}x\n` +
      `load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after, ` +
      `${loadAverage.cpus} CPUs\n`,
  );
}
