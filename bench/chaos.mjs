// Crash safety under repeated SIGKILL, on a bigger test web than the tests (test/chaos): one agent killed
// at random moments many times and restarted on its data dir until a run ends by itself; then a cluster
// with one agent at a time killed and restarted with the same id and data. Prints kills survived,
// pages lost (truth URLs never served: must be 0), refetches and overlap (from the test web's own log
// of what it served), WARC files and records read back with warcio, request/response pairing, the most
// concurrent requests one host saw, and in the cluster the time to detect a dead peer and to reassign
// its hosts. Run after `npm run build`:  node bench/chaos.mjs [--mode both] [--kills 20] [--json]
import { existsSync, rmSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, open, readdir, rm, stat } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Assignment } from "../dist/hashing/index.js";
import { recoverWarcFile, warcFileCompression } from "../dist/storage/index.js";
import { readWarcFile } from "../dist/storage/warc-reader.js";
import { INSECURE, PeerClient } from "../dist/transport/index.js";
import { readTruth } from "./lib/crawl-metrics.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import { seededRandom } from "./lib/prng.mjs";
import {
  benchAgentFlags,
  Child,
  snapshotUbicrawl,
  startAgentProcess,
  stopChildrenOnSignal,
} from "./lib/processes.mjs";
import { fixed, formatTable, percent } from "./lib/report.mjs";

const FLAGS = {
  mode: { type: "string", help: "single, cluster or both (default: both)" },
  hosts: { type: "integer", help: "hosts of the test web", default: 100, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 10_000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  "chaos-seed": { type: "integer", help: "seed of the kill schedule (default: random, printed)", min: 1 },
  kills: { type: "integer", help: "SIGKILLs of the single agent", default: 25, min: 0, max: 1000 },
  "cluster-kills": {
    type: "integer",
    help: "kill/restart cycles of the cluster",
    default: 8,
    min: 0,
    max: 100,
  },
  agents: { type: "integer", help: "agents of the cluster", default: 3, min: 2, max: 16 },
  "max-active-hosts": { type: "integer", help: "hosts each agent visits at once", default: 16, min: 1 },
  "heartbeat-ms": { type: "integer", help: "failure detector heartbeat", default: 200, min: 10 },
  "suspect-after-ms": { type: "integer", help: "failure detector timeout", default: 1200, min: 20 },
  "takeover-delay-ms": {
    type: "integer",
    help: "how long a killed agent's hosts wait for it (0: measure the takeover itself)",
    default: 0,
    min: 0,
  },
  "timeout-s": { type: "integer", help: "give up on a mode after this long", default: 900, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the data (WARC files, crawl logs, served log) and print where" },
};
/** A single-agent life runs this long after its first request before the kill… */
const RUN_MS = { min: 150, max: 900 };
/** …except every STARTUP_KILL_EVERY-th, killed this long after its spawn (during LevelDB/WARC repair). */
const STARTUP_RUN_MS = { min: 60, max: 400 };
const STARTUP_KILL_EVERY = 4;
/** Requests on a dead agent's hosts ending this long after the kill come from the survivors. */
const IN_FLIGHT_GRACE_MS = 100;
const REASSIGN_TIMEOUT_MS = 20_000;

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/chaos.mjs [flags]");
const mode = flags.mode ?? "both";
if (!["single", "cluster", "both"].includes(mode))
  throw new Error(`--mode: single, cluster or both, got "${mode}"`);
if (flags["suspect-after-ms"] <= flags["heartbeat-ms"])
  throw new Error("--suspect-after-ms must exceed --heartbeat-ms");
if (!existsSync(new URL("../dist/bundle/main.js", import.meta.url)))
  throw new Error("dist/ is missing: run `npm run build` first");
const chaosSeed = flags["chaos-seed"] ?? Math.floor(Math.random() * 2 ** 31) + 1;
const random = seededRandom(chaosSeed);
const web = { seed: flags.seed, hosts: flags.hosts, pages: flags.pages };
const dir = await mkdtemp(join(tmpdir(), "ubicrawl-bench-chaos-"));
const children = new Set();
process.once("exit", () => {
  if (flags.keep) process.stderr.write(`data kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
});
snapshotUbicrawl(join(dir, "ubicrawl"));
stopChildrenOnSignal(() => children);
const log = (text) => process.stderr.write(`${text}\n`);
const loadBefore = loadavg()[0];
log(`chaos seed ${chaosSeed} (--chaos-seed ${chaosSeed} replays the schedule)`);

const results = [];
let loadAverage;

/** Runs one mode in its own folder with its own test web, stopping its children on timeout. */
async function withDeadline(name, run) {
  const runDir = join(dir, name);
  await mkdir(runDir, { recursive: true });
  const servedLog = join(runDir, "served.log");
  const testweb = await startServedTestWeb(runDir, servedLog);
  children.add(testweb.child);
  const truth = await readTruth(testweb.files.truth);
  log(`${name}: test web ${flags.hosts} hosts, ${truth.size} truth URLs, port ${testweb.port}`);
  const served = new ServedLog(servedLog);
  const mine = new Set();
  const timer = setTimeout(() => {
    log(`${name}: no end after ${flags["timeout-s"]} s, stopping`);
    for (const child of mine) child.stop();
  }, flags["timeout-s"] * 1000);
  const startedAt = performance.now();
  try {
    const result = await run({
      runDir,
      testweb,
      truth,
      served,
      track: (child) => {
        children.add(child);
        mine.add(child);
        return child;
      },
    });
    await testweb.child.stop();
    await served.poll();
    const maxLine = testweb.child.stderrLines.find((line) => line.startsWith("served "));
    const maxPerHost = Number(/one host: (\d+)/.exec(maxLine ?? "")?.[1] ?? Number.NaN);
    return {
      ...result,
      ...measure(served, truth),
      maxPerHost,
      wallSeconds: (performance.now() - startedAt) / 1000,
      ...(await checkWarc(result.dataDirs, truth)),
    };
  } finally {
    clearTimeout(timer);
    await Promise.all([...mine].map((child) => child.stop()));
    await testweb.child.stop();
    if (!flags.keep) await rm(join(runDir, "data"), { recursive: true, force: true });
  }
}

/** Starts `ubicrawl testweb` logging every request it serves (it installs its signal handlers first). */
async function startServedTestWeb(runDir, servedLog) {
  const files = { hosts: join(runDir, "hosts"), seeds: join(runDir, "seeds"), truth: join(runDir, "truth") };
  const child = Child.start("testweb", [
    "testweb",
    ...["--seed", String(web.seed), "--hosts", String(web.hosts), "--pages", String(web.pages)],
    ...[
      "--hosts-file",
      files.hosts,
      "--seeds-file",
      files.seeds,
      "--truth",
      files.truth,
      "--served-log",
      servedLog,
    ],
  ]);
  const match = await child.waitForLine(/^test web: \d+ hosts on port (\d+)/, 120_000);
  return { child, port: Number(match[1]), files };
}

/** One agent, killed `--kills` times at random moments, restarted until a run ends by itself. */
async function runSingle({ runDir, testweb, served, track }) {
  const dataDir = join(runDir, "data", "solo");
  const args = [
    ...["--data", dataDir, "--seeds", testweb.files.seeds],
    ...benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"]),
  ];
  let kills = 0;
  let tornWarcTails = 0;
  let startupKills = 0;
  let lives = 0;
  let exitCode;
  for (;;) {
    lives++;
    const before = await served.poll();
    const agent = track(startAgentProcess("solo", args));
    if (kills < flags.kills) {
      const startup = (kills + 1) % STARTUP_KILL_EVERY === 0;
      if (!startup) {
        while (!agent.done && (await served.poll()) === before) await sleep(10);
      }
      await sleep(startup ? between(STARTUP_RUN_MS) : between(RUN_MS));
      if (!agent.done) agent.process.kill("SIGKILL");
    }
    exitCode = await agent.exited;
    if (exitCode !== "SIGKILL") break;
    kills++;
    if ((await served.poll()) === before) startupKills++;
    if (await hasTornOpenWarc(dataDir, runDir)) tornWarcTails++;
    log(`single: kill ${kills}/${flags.kills} (${(await served.poll()) - before} requests that life)`);
  }
  log(`single: run ${lives} ended by itself (${exitCode})`);
  // The state must say "done": one more start fetches nothing and exits at once.
  const before = await served.poll();
  const again = track(startAgentProcess("solo", args));
  const againStartedAt = performance.now();
  const againCode = await again.exited;
  const restartRequests = (await served.poll()) - before;
  return {
    mode: "single",
    agents: 1,
    kills,
    startupKills,
    tornWarcTails,
    restartRequests,
    restartSeconds: (performance.now() - againStartedAt) / 1000,
    ok: exitCode === 0 && againCode === 0 && restartRequests === 0,
    dataDirs: [dataDir],
    detectMs: [],
    firstMovedMs: [],
    allMovedMs: [],
  };
}

/** `--agents` agents; one at a time killed at spread-out moments, restarted once its hosts moved. */
async function runCluster({ runDir, testweb, truth, served, track }) {
  const n = flags.agents;
  const ids = Array.from({ length: n }, (_, i) => `agent-${i + 1}`);
  const full = await Assignment.load(ids.map((id) => ({ id, capacity: 1 })));
  const agents = new Map();
  const start = async (id, seeds) => {
    const joinList = [...agents.values()].filter((a) => !a.done).map((a) => a.address);
    const child = track(
      startAgentProcess(id, [
        ...["--data", join(runDir, "data", id)],
        ...benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"]),
        ...[
          "--listen",
          "127.0.0.1:0",
          "--insecure",
          ...(joinList.length === 0 ? [] : ["--join", joinList.join(",")]),
        ],
        ...(seeds ? ["--seeds", testweb.files.seeds] : []),
        ...[
          "--heartbeat-ms",
          String(flags["heartbeat-ms"]),
          "--suspect-after-ms",
          String(flags["suspect-after-ms"]),
          "--takeover-delay-ms",
          String(flags["takeover-delay-ms"]),
        ],
      ]),
    );
    try {
      child.address = String((await child.waitForEvent("listening", 30_000)).address);
    } catch (error) {
      log(
        `${id} did not come up (pid ${child.pid}); its stderr:\n${child.stderrLines.slice(-20).join("\n")}`,
      );
      throw error;
    }
    child.client = new PeerClient(child.address, { security: INSECURE, requestDeadlineMs: 2000 });
    child.exited.then(() => child.client.close());
    agents.set(id, child);
    return child;
  };
  for (const [i, id] of ids.entries()) await start(id, i === n - 1);
  const detectMs = [];
  const firstMovedMs = [];
  const allMovedMs = [];
  let kills = 0;
  const cycles = flags["cluster-kills"];
  for (let cycle = 0; cycle < cycles; cycle++) {
    // Kills spread over 5%–80% of the crawl, each a random moment past its mark.
    const mark = truth.size * (0.05 + (0.75 * cycle) / Math.max(1, cycles - 1));
    while ((await served.poll()) < mark && ![...agents.values()].some((a) => a.done)) await sleep(20);
    await sleep(between({ min: 0, max: 300 }));
    if ([...agents.values()].some((a) => a.done)) break;
    const victimId = ids[Math.floor(random() * n)];
    const victim = agents.get(victimId);
    const survivors = [...agents.values()].filter((a) => a !== victim);
    await served.poll();
    const pendingHosts = pendingHostsOf(victimId, full, truth, served);
    victim.process.kill("SIGKILL");
    const killedAtEpoch = Date.now();
    const killedAt = performance.now();
    await victim.exited;
    kills++;
    // Detected: every survivor's own view shows the victim not alive.
    for (;;) {
      const views = await Promise.all(survivors.map((s) => ownView(s)));
      if (views.every((view) => view !== undefined && view.get(victimId) !== "ALIVE")) break;
      if (performance.now() - killedAt > REASSIGN_TIMEOUT_MS) break;
      await sleep(20);
    }
    detectMs.push(performance.now() - killedAt);
    // Reassigned: every host of the victim with truth pages left was requested again (by a survivor).
    const firstAfter = new Map();
    served.onRequest = (host, endedAtEpoch) => {
      if (
        pendingHosts.has(host) &&
        endedAtEpoch > killedAtEpoch + IN_FLIGHT_GRACE_MS &&
        !firstAfter.has(host)
      )
        firstAfter.set(host, endedAtEpoch);
    };
    const reassignLimitMs = REASSIGN_TIMEOUT_MS + flags["takeover-delay-ms"];
    while (firstAfter.size < pendingHosts.size && performance.now() - killedAt < reassignLimitMs) {
      await served.poll();
      await sleep(20);
    }
    served.onRequest = undefined;
    const times = [...firstAfter.values()].map((t) => t - killedAtEpoch);
    if (times.length > 0) firstMovedMs.push(Math.min(...times));
    allMovedMs.push(
      firstAfter.size === pendingHosts.size && times.length > 0 ? Math.max(...times) : Number.NaN,
    );
    log(
      `cluster: kill ${kills}/${cycles} of ${victimId}: detected in ${fixed(detectMs.at(-1), 0)} ms, ` +
        `${firstAfter.size}/${pendingHosts.size} of its unfinished hosts moving after ${fixed(allMovedMs.at(-1), 0)} ms`,
    );
    await sleep(between({ min: 0, max: 500 }));
    await start(victimId, false);
  }
  const codes = await Promise.all([...agents.values()].map((a) => a.exited));
  return {
    mode: "cluster",
    agents: n,
    kills,
    startupKills: 0,
    tornWarcTails: Number.NaN,
    restartRequests: Number.NaN,
    ok: codes.every((code) => code === 0),
    dataDirs: ids.map((id) => join(runDir, "data", id)),
    detectMs,
    firstMovedMs,
    allMovedMs,
  };
}

/**
 * Hosts (`name:port`) owned by `victim` that it had started (the test web served them a request) and
 * not finished (truth URLs never served): the hosts whose queues the survivors must take over. Hosts
 * nobody has discovered yet are left out: their first request measures the crawl, not the takeover.
 */
function pendingHostsOf(victim, assignment, truth, served) {
  const started = new Set();
  for (const url of served.counts.keys()) started.add(new URL(url).host);
  const hosts = new Set();
  for (const url of truth) {
    if (served.counts.has(url)) continue;
    const host = new URL(url).host;
    if (started.has(host) && assignment.ownerOf(host) === victim) hosts.add(host);
  }
  return hosts;
}

/** An agent's own view (id → status), or undefined when it does not answer. */
async function ownView(agent) {
  try {
    const reply = await agent.client.getStats({ cluster: false });
    const own = reply.agents.find((stats) => stats.id === agent.name);
    return own ? new Map(own.view.map((peer) => [peer.id, peer.status])) : undefined;
  } catch {
    return undefined;
  }
}

/** Pages lost, refetches and overlap from what the test web served (robots.txt excluded). */
function measure(served, truth) {
  let total = 0;
  let extra = 0;
  for (const [url, count] of served.counts) {
    total += count;
    if (!truth.has(url)) extra++;
  }
  let lost = 0;
  for (const url of truth) if (!served.counts.has(url)) lost++;
  const unique = served.counts.size;
  return {
    truthUrls: truth.size,
    pagesLost: lost,
    extraUrls: extra,
    pagesServed: total,
    refetches: total - unique,
    overlap: unique === 0 ? 0 : (total - unique) / unique,
  };
}

/** Reads every WARC file back with warcio: files, records, unreadable files, broken pairs, truth pages not archived. */
async function checkWarc(dataDirs, truth) {
  let files = 0;
  let openFiles = 0;
  let unreadable = 0;
  let pairProblems = 0;
  let records = 0;
  const archived = new Set();
  for (const dataDir of dataDirs) {
    const warcDir = join(dataDir, "warc");
    const names = existsSync(warcDir) ? (await readdir(warcDir)).sort() : [];
    for (const name of names.filter(isWarcFileName)) {
      files++;
      if (name.endsWith(".open")) openFiles++;
      const inFile = [];
      try {
        for await (const record of readWarcFile(join(warcDir, name))) inFile.push(record);
      } catch {
        unreadable++;
      }
      records += inFile.length;
      pairProblems += countPairProblems(inFile);
      for (const record of inFile)
        if (record.type === "response") archived.add(record.headers.get("warc-target-uri"));
    }
  }
  let notArchived = 0;
  for (const url of truth) if (!archived.has(url)) notArchived++;
  return {
    warcFiles: files,
    openWarcFiles: openFiles,
    warcRecords: records,
    unreadableWarcFiles: unreadable,
    pairProblems,
    pagesNotArchived: notArchived,
  };
}

/** True for a WARC file's name (finished or `.open`), not its index's. */
function isWarcFileName(name) {
  return warcFileCompression(name) !== undefined;
}

/** Records of one file that are not a warcinfo first, or a request/response with its partner in the file. */
function countPairProblems(records) {
  const byId = new Map(records.map((record) => [record.headers.get("warc-record-id"), record]));
  let problems = records.length > 0 && records[0].type !== "warcinfo" ? 1 : 0;
  for (const record of records) {
    if (record.type === "warcinfo") continue;
    const other = byId.get(record.headers.get("warc-concurrent-to"));
    const ok =
      other !== undefined &&
      other.type === (record.type === "request" ? "response" : "request") &&
      other.headers.get("warc-concurrent-to") === record.headers.get("warc-record-id") &&
      other.headers.get("warc-target-uri") === record.headers.get("warc-target-uri");
    if (!ok) problems++;
  }
  return problems;
}

/** True when an `.open` WARC file left by a kill ends in a torn record (recovering a copy cuts bytes). */
async function hasTornOpenWarc(dataDir, scratchDir) {
  const warcDir = join(dataDir, "warc");
  if (!existsSync(warcDir)) return false;
  let torn = false;
  for (const name of await readdir(warcDir)) {
    if (!name.endsWith(".open") || !isWarcFileName(name)) continue;
    const copy = join(scratchDir, `copy-${name}`);
    await copyFile(join(warcDir, name), copy);
    const result = await recoverWarcFile(copy);
    if (result.droppedBytes > 0) torn = true;
    if (result.path !== undefined) await rm(result.path);
  }
  return torn;
}

/** Follows the test web's served log (`epochMs status ip url` a line) as it grows. */
class ServedLog {
  constructor(path) {
    this.path = path;
    this.offset = 0;
    this.rest = "";
    /** Times each page (robots.txt excluded) was served. */
    this.counts = new Map();
    /** Page requests served so far. */
    this.pages = 0;
    /** Called with (host:port, epoch ms) of each request read, robots.txt included. */
    this.onRequest = undefined;
  }

  /** Reads what was appended since the last poll; resolves with the page requests served so far. */
  async poll() {
    const size = await stat(this.path).then(
      (s) => s.size,
      () => 0,
    );
    if (size > this.offset) {
      const handle = await open(this.path, "r");
      try {
        const buffer = Buffer.alloc(size - this.offset);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
        this.offset += bytesRead;
        const lines = (this.rest + buffer.toString("utf8", 0, bytesRead)).split("\n");
        this.rest = lines.pop() ?? "";
        for (const line of lines) this.add(line);
      } finally {
        await handle.close();
      }
    }
    return this.pages;
  }

  add(line) {
    const [atMs, , , url] = line.split(" ");
    if (url === undefined) return;
    const parsed = new URL(url);
    this.onRequest?.(parsed.host, Number(atMs));
    if (parsed.pathname === "/robots.txt" && parsed.search === "") return;
    this.counts.set(url, (this.counts.get(url) ?? 0) + 1);
    this.pages++;
  }
}

function between({ min, max }) {
  return min + Math.floor(random() * (max - min + 1));
}

function stats(values) {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return "n/a";
  const median = finite[Math.floor((finite.length - 1) / 2)];
  return `${fixed(median, 0)} / ${fixed(finite.at(-1), 0)}${finite.length < values.length ? ` (${values.length - finite.length} n/a)` : ""}`;
}

function printReport() {
  process.stdout.write(
    `ubicrawl bench/chaos: test web ${flags.hosts} hosts / ${results[0]?.truthUrls ?? "?"} truth URLs, --max-active-hosts ${flags["max-active-hosts"]}, ` +
      `heartbeat ${flags["heartbeat-ms"]} ms, suspicion after ${flags["suspect-after-ms"]} ms, chaos seed ${chaosSeed} ` +
      `(load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after, ${loadAverage.cpus} CPUs)\n\n`,
  );
  const rows = [
    ["agents", (r) => String(r.agents)],
    ["kills survived", (r) => `${r.kills}${r.startupKills > 0 ? ` (${r.startupKills} while starting)` : ""}`],
    [
      "kills leaving a torn WARC tail",
      (r) => (Number.isNaN(r.tornWarcTails) ? "n/a" : String(r.tornWarcTails)),
    ],
    ["pages lost (truth never served)", (r) => String(r.pagesLost)],
    ["truth pages not in any WARC", (r) => String(r.pagesNotArchived)],
    ["pages served / refetches", (r) => `${r.pagesServed} / ${r.refetches}`],
    ["overlap", (r) => percent(r.overlap)],
    ["WARC files / records", (r) => `${r.warcFiles} / ${r.warcRecords}`],
    ["WARC files unreadable / open", (r) => `${r.unreadableWarcFiles} / ${r.openWarcFiles}`],
    ["records without a partner", (r) => String(r.pairProblems)],
    ["most requests at once to a host", (r) => String(r.maxPerHost)],
    [
      "requests of a restart when done",
      (r) => (Number.isNaN(r.restartRequests) ? "n/a" : String(r.restartRequests)),
    ],
    ["detect dead peer ms (median / max)", (r) => stats(r.detectMs)],
    ["first host moving ms (median / max)", (r) => stats(r.firstMovedMs)],
    ["all its hosts moving ms (median / max)", (r) => stats(r.allMovedMs)],
    ["wall s", (r) => fixed(r.wallSeconds, 1)],
    ["ok", (r) => (r.ok ? "yes" : "NO")],
  ];
  const table = formatTable(
    ["", ...results.map((r) => r.mode)],
    rows.map(([label, cell]) => [label, ...results.map(cell)]),
  );
  process.stdout.write(`${table}\n`);
}

// Last, so that every class and function above is initialized.
for (const which of mode === "both" ? ["single", "cluster"] : [mode]) {
  results.push(await withDeadline(which, which === "single" ? runSingle : runCluster));
}
loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
if (flags.json)
  process.stdout.write(`${JSON.stringify({ web, chaosSeed, flags, results, loadAverage }, null, 2)}\n`);
else printReport();
process.exitCode = results.every((result) => result.ok) ? 0 : 1;
