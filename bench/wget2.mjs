// ubicrawl beside GNU Wget2 on the same test web, in one run: Wget2 (recursive, robots on, N threads,
// a mirroring tool with no per-host politeness), then one ubicrawl agent, then two agents in a cluster
// (--max-active-hosts N each), all against one `ubicrawl testweb` process.
//
// Wget2 resolves names with the system resolver, and the machine's resolver is not on loopback. So the
// whole bench runs in its own network namespace, which has nothing but a loopback interface, with the
// test web's hosts file mounted over /etc/hosts and a resolv.conf naming 127.0.0.1 (where nothing
// answers): a name the hosts file lacks fails locally, and no packet can leave the machine. The bench
// re-executes itself under `unshare --net --mount` for that (root, or unprivileged user namespaces).
//
// Wget2 is told to skip the test web's calendar trap host (it would crawl it forever: it has no page or
// depth limit per host), so coverage is measured without that host for every crawler.
//
//   apt-get install wget2 && npm run build && node bench/wget2.mjs [--pages N] [--json]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { measureCrawlLogs, readTruth } from "./lib/crawl-metrics.mjs";
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
  pages: { type: "integer", help: "pages of the test web (about)", default: 20000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  concurrency: {
    type: "integer",
    help: "Wget2 --max-threads = ubicrawl --max-active-hosts of each agent",
    default: 64,
    min: 1,
  },
  "timeout-s": { type: "integer", help: "give up on a crawl after this long", default: 900, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the crawlers' data and print where" },
};
const USAGE = "node bench/wget2.mjs [flags]";
const SANDBOX_ENV = "UBICRAWL_BENCH_NETNS";

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, USAGE);
if (process.env[SANDBOX_ENV] !== "1") enterSandbox();
else await main();

/** Re-runs this script in a new network + mount namespace (only a loopback interface), then exits. */
function enterSandbox() {
  if (spawnSync("wget2", ["--version"], { stdio: "ignore" }).error) {
    throw new Error("wget2 is not installed: apt-get install wget2");
  }
  const script = fileURLToPath(import.meta.url);
  const result = spawnSync(
    "unshare",
    ["--net", "--mount", "--propagation", "private", process.execPath, script, ...process.argv.slice(2)],
    { stdio: "inherit", env: { ...process.env, [SANDBOX_ENV]: "1" } },
  );
  if (result.error) throw new Error(`cannot run unshare: ${result.error.message}`);
  if (result.status !== 0 && result.status !== null) {
    process.stderr.write(
      "(bench/wget2 needs `unshare --net --mount`: run it as root or with user namespaces)\n",
    );
  }
  process.exit(result.status ?? 1);
}

async function main() {
  const { dir, children } = await openWorkspace("wget2", flags.keep);
  const { normalizeUrl } = await import("../dist/url/index.js");
  const { TRAP_HOST_NAME } = await import("../dist/testweb/index.js");
  const log = (text) => process.stderr.write(`${text}\n`);
  const loadBefore = loadavg()[0];
  isolateNetwork(dir);

  const web = { seed: flags.seed, hosts: flags.hosts, pages: flags.pages };
  const testweb = await startTestWebProcess(dir, web);
  children.add(testweb.child);
  mountHostsFile(dir, testweb.files.hosts);
  const fullTruth = await readTruth(testweb.files.truth);
  const truth = new Set([...fullTruth].filter((url) => new URL(url).hostname !== TRAP_HOST_NAME));
  log(`test web: ${flags.hosts} hosts, ${truth.size} URLs in the truth without the trap host`);

  const sampler = new PeakRssSampler(100);
  const results = [];
  try {
    results.push(await crawlWget2());
    log(`wget2: ${results.at(-1).pages} pages in ${fixed(results.at(-1).wallSeconds, 1)} s`);
    for (const agents of [1, 2]) {
      results.push(await crawlUbicrawl(agents));
      log(`ubicrawl ×${agents}: ${results.at(-1).pages} pages in ${fixed(results.at(-1).wallSeconds, 1)} s`);
    }
  } finally {
    sampler.stop();
    await testweb.child.stop();
  }
  const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
  const [wget2, one, two] = results;
  const wget2Version = execFileSync("wget2", ["--version"], { encoding: "utf8" }).split("\n")[0];
  if (flags.json) {
    const report = { web, truthUrls: truth.size, flags, wget2Version, wget2, one, two, loadAverage };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    printTable(wget2Version, results, loadAverage);
  }
  process.exitCode = results.every((result) => result.exitCode === 0) ? 0 : 1;

  /** Wget2 over the seeds: recursive, any depth, every host of the web but the trap, robots obeyed. */
  async function crawlWget2() {
    const stats = join(dir, "wget2-sites.csv");
    const downloads = join(dir, "wget2-files");
    const started = measured("wget2", [
      spawnCrawler("wget2", [
        ...["--recursive", "--level=inf", "--span-hosts", "--domains=ubi.test"],
        ...[`--exclude-domains=${TRAP_HOST_NAME}`, "--robots=on", `--max-threads=${flags.concurrency}`],
        ...["--delete-after", "--directory-prefix", downloads, "--input-file", testweb.files.seeds],
        ...["--tries=1", "--timeout=10", "--quiet", `--stats-site=csv:${stats}`],
      ]),
    ]);
    const run = await started;
    // One CSV row a request: ID,ParentID,URL,Status,… ; robots.txt requests are not pages.
    const urls = [];
    for (const line of existsSync(stats) ? readFileSync(stats, "utf8").split("\n").slice(1) : []) {
      const [, , url, status] = line.split(",");
      if (url === undefined || !(Number(status) > 0) || url.endsWith("/robots.txt")) continue;
      urls.push(url);
    }
    return { name: "wget2", ...fetchFigures(run, urls, truth, normalizeUrl) };
  }

  /** `agents` ubicrawl agents: the first alone, the others joining it; the last one gets the seeds. */
  async function crawlUbicrawl(agents) {
    const started = [];
    for (let i = 1; i <= agents; i++) {
      const data = join(dir, `ubicrawl-${agents}`, `agent-${i}`);
      await mkdir(data, { recursive: true });
      const join_ = started.length === 0 ? [] : ["--join", started[0].address];
      const child = startAgentProcess(`agent-${i}`, [
        ...["--data", data],
        ...benchAgentFlags(testweb.files.hosts, flags.concurrency),
        ...(agents > 1 ? ["--listen", "127.0.0.1:0", "--insecure", ...join_] : []),
        ...(i === agents ? ["--seeds", testweb.files.seeds] : []),
        ...(agents > 1 ? ["--heartbeat-ms", "500", "--suspect-after-ms", "2500"] : []),
      ]);
      if (agents > 1) child.address = String((await child.waitForEvent("listening", 30_000)).address);
      started.push(child);
    }
    const run = await measured(`ubicrawl ×${agents}`, started);
    const logs = started.map((child) => join(dir, `ubicrawl-${agents}`, child.name, "crawl.log"));
    const metrics = await measureCrawlLogs(logs, truth);
    const urls = logs.flatMap((path) => crawlLogFetchedUrls(path));
    return {
      name: `ubicrawl ×${agents}`,
      ...fetchFigures(run, urls, truth, normalizeUrl),
      overlap: metrics.overlap,
    };
  }

  /** Waits for `started` to exit and measures them; Wget2 ends with 8 when a request failed (a 404). */
  function measured(name, started) {
    const context = { children, sampler, timeoutS: flags["timeout-s"], log };
    return measureChildren(name, started, name === "wget2" ? { ...context, okExitCodes: [8] } : context);
  }
}

/** Brings up the namespace's loopback and points the resolver at it (no DNS server answers there). */
function isolateNetwork(dir) {
  execFileSync("ip", ["link", "set", "lo", "up"]);
  const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" }).trim().split("\n");
  if (links.length !== 1 || !links[0].includes(": lo:")) {
    throw new Error(`expected a namespace with only a loopback interface, found:\n${links.join("\n")}`);
  }
  const resolvConf = join(dir, "resolv.conf");
  writeFileSync(resolvConf, "nameserver 127.0.0.1\n");
  execFileSync("mount", ["--bind", resolvConf, "/etc/resolv.conf"]);
}

/** Mounts the test web's hosts file (plus localhost) over /etc/hosts, in this mount namespace only. */
function mountHostsFile(dir, hostsFile) {
  const path = join(dir, "etc-hosts");
  writeFileSync(path, `127.0.0.1 localhost\n${readFileSync(hostsFile, "utf8")}`);
  execFileSync("mount", ["--bind", path, "/etc/hosts"]);
}

function printTable(wget2Version, results, loadAverage) {
  const rows = [
    ["pages fetched", (r) => String(r.pages)],
    ["distinct URLs (canonical)", (r) => String(r.distinctUrls)],
    ["wall time (s)", (r) => fixed(r.wallSeconds, 1)],
    ["pages/s", (r) => fixed(r.pagesPerSecond, 0)],
    ["CPU ms / page", (r) => fixed(r.cpuSecondsPer1000Pages, 3)],
    ["peak RSS (MiB, largest process)", (r) => fixed(r.peakRssMib, 0)],
    ["coverage (trap host excluded)", (r) => percent(r.coverage)],
    ["overlap", (r) => (r.overlap === undefined ? "-" : percent(r.overlap))],
  ].map(([label, cell]) => [label, ...results.map(cell)]);
  const [wget2, one, two] = results;
  process.stdout.write(
    `ubicrawl bench/wget2: test web ${flags.hosts} hosts, concurrency ${flags.concurrency}, ${wget2Version}\n\n` +
      `${formatTable(["", "wget2", "ubicrawl ×1", "ubicrawl ×2"], rows)}\n\n` +
      `pages/s ubicrawl ×1 / wget2: ${fixed(one.pagesPerSecond / wget2.pagesPerSecond, 2)}x; ` +
      `ubicrawl ×2 / wget2: ${fixed(two.pagesPerSecond / wget2.pagesPerSecond, 2)}x\n` +
      `load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after, ` +
      `${loadAverage.cpus} CPUs\n`,
  );
}
