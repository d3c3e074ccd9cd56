// What n agents on one machine pay beyond one agent, taken apart. Four crawls, each agent's own CPU:
//   A. one agent, the whole web;
//   B. one agent, a web 1/n the size (as many pages per host): the share each of n agents crawls;
//   C. n agents at once, each on its own such web (n test webs, no cluster);
//   D. the n-agent cluster on the whole web.
// B − A is per-process warm-up (V8 compiling and gathering type feedback, start-up), C − B is n
// processes sharing the cores, D − C is the cluster itself (exchange, heartbeats, gRPC code).
// Run after `npm run build`:  node bench/overhead.mjs [--agents 8] [--hosts 800] [--pages 41000] [--json]
import { execFile } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parseBenchFlags } from "./lib/flags.mjs";
import { fixed, formatTable, percent } from "./lib/report.mjs";

const FLAGS = {
  agents: { type: "integer", help: "agents of the cluster (n)", default: 8, min: 2, max: 64 },
  hosts: { type: "integer", help: "hosts of the whole test web (a multiple of n)", default: 800, min: 2 },
  pages: { type: "integer", help: "pages of the whole test web (about)", default: 41_000, min: 10 },
  seed: { type: "integer", help: "seed of the test webs", default: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
};

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/overhead.mjs [flags]");
const n = flags.agents;
if (flags.hosts % n !== 0 || flags.hosts / n < 2) {
  throw new Error(`--hosts ${flags.hosts} must be a multiple of --agents ${n}, with at least 2 hosts each`);
}
const BENCH = resolve(fileURLToPath(import.meta.url), "..");
const run = promisify(execFile);
const log = (text) => process.stderr.write(`${text}\n`);
const loadBefore = loadavg()[0];

const whole = ["--hosts", String(flags.hosts), "--pages", String(flags.pages), "--seed", String(flags.seed)];
const share = [
  ...["--hosts", String(flags.hosts / n), "--pages", String(Math.round(flags.pages / n))],
  ...["--seed", String(flags.seed)],
];

log("A: one agent, the whole web");
const alone = single(await bench("run.mjs", whole));
log(`B: one agent, 1/${n} of the web`);
const share1 = single(await bench("run.mjs", share));
log(`C: ${n} agents at once, each on its own 1/${n} web`);
const shared = combined(await Promise.all(Array.from({ length: n }, () => bench("run.mjs", share))));
log(`D: the ${n}-agent cluster on the whole web`);
const clusterReport = await bench("cluster.mjs", ["--agents", String(n), ...whole]);
const clusterRow = clusterReport.results[0];
const cluster = {
  pages: clusterRow.pagesFetched,
  cpuMsPerPage: clusterRow.cpuSecondsPer1000Pages,
  coverage: clusterRow.coverage,
};

const crawls = [
  { name: "A. one agent, the whole web", ...alone },
  { name: `B. one agent, 1/${n} of the web`, ...share1 },
  { name: `C. ${n} agents at once, each on its own 1/${n} web`, ...shared },
  { name: `D. the ${n}-agent cluster, the whole web`, ...cluster },
];
const extra = cluster.cpuMsPerPage - alone.cpuMsPerPage;
const parts = [
  { name: "per-process warm-up (B − A)", msPerPage: share1.cpuMsPerPage - alone.cpuMsPerPage },
  { name: `${n} processes sharing the cores (C − B)`, msPerPage: shared.cpuMsPerPage - share1.cpuMsPerPage },
  { name: "the cluster itself (D − C)", msPerPage: cluster.cpuMsPerPage - shared.cpuMsPerPage },
].map((part) => ({ ...part, shareOfExtra: part.msPerPage / extra }));
const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
const ok = crawls.every((crawl) => crawl.coverage === 1);

if (flags.json) {
  process.stdout.write(
    `${JSON.stringify({ flags, crawls, extraMsPerPage: extra, parts, loadAverage }, null, 2)}\n`,
  );
} else {
  process.stdout.write(
    `ubicrawl bench/overhead: n = ${n}, whole web ${flags.hosts} hosts / ~${flags.pages} pages, ` +
      `${loadAverage.cpus} CPUs, load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after\n\n` +
      `${formatTable(
        ["crawl", "pages", "CPU ms/page", "coverage"],
        crawls.map((c) => [c.name, String(c.pages), fixed(c.cpuMsPerPage, 2), percent(c.coverage)]),
      )}\n\n` +
      `D − A: ${fixed(extra, 2)} CPU ms a page, of which\n` +
      `${formatTable(
        ["part", "CPU ms/page", "share"],
        parts.map((p) => [p.name, fixed(p.msPerPage, 2), percent(p.shareOfExtra, 0)]),
      )}\n` +
      (ok ? "" : "(!) a crawl did not cover its whole web: see stderr\n"),
  );
}
process.exitCode = ok ? 0 : 1;

/** Runs `bench/<script> … --json` and returns its report; its progress goes to our stderr. */
async function bench(script, args) {
  const child = run(process.execPath, [join(BENCH, script), ...args, "--json"], { maxBuffer: 64 << 20 });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  return JSON.parse(stdout);
}

/** Pages, CPU a page and coverage of a one-run `bench/run.mjs` report. */
function single(report) {
  const [only] = report.runs;
  return { pages: only.pagesFetched, cpuMsPerPage: only.cpuSecondsPer1000Pages, coverage: only.coverage };
}

/** The same over several concurrent reports: total CPU over total pages, the worst coverage. */
function combined(reports) {
  const runs = reports.map((report) => report.runs[0]);
  const pages = runs.reduce((sum, r) => sum + r.pagesFetched, 0);
  const cpuSeconds = runs.reduce((sum, r) => sum + r.cpuSeconds, 0);
  return {
    pages,
    cpuMsPerPage: (cpuSeconds * 1000) / pages,
    coverage: Math.min(...runs.map((r) => r.coverage)),
  };
}
