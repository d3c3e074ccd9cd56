// Membership changes measured: what agents joining, leaving (SIGTERM) and crashing (SIGKILL and a
// restart on their data) cost a crawl. Real agent processes over plaintext gRPC on loopback crawl the
// test web (a separate `ubicrawl testweb` process); each run's crawl logs are measured with the module
// behind `ubicrawl report` (dist/report): coverage of the ground truth, overlap, pages fetched more
// than once, the most failed attempts any one URL got. Scenarios (each run --runs times, its moments
// drawn from a seeded PRNG: --seed, printed with each run's own seed to replay it):
//   steady        control: 4 agents that settle before the seeds, no change
//   join-early    1 agent with the seeds, 3 more joining (--join the first) ~1 s apart from 0.5–1.5 s in
//   join-at-30    4 agents, 2 more joining when 30 % of the truth is fetched
//   sigterm       4 agents, one (not the seed holder) SIGTERMed at 30 %, not restarted (with
//                 --restart-after-s N: restarted N s after its exit, on its data, same id)
//   kill-restart  4 agents, one (not the seed holder) SIGKILLed at 30 % and restarted within 2 s
//   failing-url   3 agents killed and restarted 3 times while URLs fail: seeds on a host missing from
//                 the hosts file, on a host whose server drops every connection but answers robots.txt
//                 (404), and on a host whose port refuses connections; attempts vs --max-fetch-attempts
// Run after `npm run build`:  node bench/membership.mjs [--scenario join-early,sigterm] [--runs 3] [--seed S] [--json]
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Assignment } from "../dist/hashing/index.js";
import { CRAWL_LOG_FILE, CrawlTally, readTruthFile, tallyAgentDir } from "../dist/report/index.js";
import { parseBenchFlags } from "./lib/flags.mjs";
import { seededRandom } from "./lib/prng.mjs";
import { benchAgentFlags, openWorkspace, startAgentProcess, startTestWebProcess } from "./lib/processes.mjs";
import { fixed, formatTable, percent } from "./lib/report.mjs";
import { StatsPoller } from "./lib/stats-poller.mjs";

const SCENARIOS = ["steady", "join-early", "join-at-30", "sigterm", "kill-restart", "failing-url"];
const FLAGS = {
  scenario: { type: "string", help: `comma-separated, of: ${SCENARIOS.join(", ")} (default: all)` },
  runs: { type: "integer", help: "runs of each scenario", default: 3, min: 1, max: 1000 },
  seed: {
    type: "integer",
    help: "seed of the schedules (default: random, printed)",
    min: 1,
    max: 2 ** 32 - 1,
  },
  "web-seed": { type: "integer", help: "seed of the test web", default: 1 },
  hosts: { type: "integer", help: "hosts of the test web", default: 100, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 6000, min: 10, max: 1_000_000 },
  "max-active-hosts": { type: "integer", help: "hosts each agent visits at once", default: 16, min: 1 },
  "delay-ms": { type: "integer", help: "agents' --delay-ms (politeness delay per host)", default: 0, min: 0 },
  "heartbeat-ms": {
    type: "integer",
    help: "failure detector heartbeat of the agents",
    default: 200,
    min: 10,
  },
  "suspect-after-ms": {
    type: "integer",
    help: "failure detector timeout of the agents",
    default: 1200,
    min: 20,
  },
  "takeover-delay-ms": { type: "integer", help: "agents' --takeover-delay-ms (default: theirs)", min: 0 },
  "restart-after-s": { type: "integer", help: "sigterm: restart the agent this long after its exit", min: 0 },
  "max-fetch-attempts": {
    type: "integer",
    help: "failing-url: agents' --max-fetch-attempts",
    default: 3,
    min: 1,
  },
  "timeout-s": { type: "integer", help: "stop a run's agents after this long", default: 180, min: 5 },
  "agent-flags": { type: "string", help: 'more agent flags, space-separated ("--recovery-k 4")' },
  json: { type: "boolean", help: "print JSON instead of tables" },
  keep: { type: "boolean", help: "keep the data (crawl logs, WARC files) and print where" },
};
const POLL_MS = 250;
const SETTLE_TIMEOUT_MS = 20_000;
const SIGTERM_EXIT_TIMEOUT_MS = 30_000;
/** Host names of the failing-url scenario: one missing from the hosts file, two on 127.0.0.1. */
const MISSING_HOST = "missing.failing.test";
const DROP_HOST = "drop.failing.test";
const REFUSED_HOST = "refused.failing.test";

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/membership.mjs [flags]");
const scenarios = flags.scenario === undefined ? SCENARIOS : flags.scenario.split(",").map((s) => s.trim());
for (const name of scenarios) {
  if (!SCENARIOS.includes(name)) throw new Error(`--scenario: one of ${SCENARIOS.join(", ")}, got "${name}"`);
}
if (flags["suspect-after-ms"] <= flags["heartbeat-ms"]) {
  throw new Error("--suspect-after-ms must exceed --heartbeat-ms");
}
const seed = flags.seed ?? Math.floor(Math.random() * (2 ** 32 - 2)) + 1;
const extraAgentFlags = (flags["agent-flags"] ?? "").split(/\s+/).filter((word) => word !== "");
const log = (text) => process.stderr.write(`${text}\n`);

const { dir, children } = await openWorkspace("membership", flags.keep);
const loadBefore = loadavg();
log(`membership bench: seed ${seed} (run 1 of each scenario uses it; each run prints its own)`);
const testweb = await startTestWebProcess(dir, {
  seed: flags["web-seed"],
  hosts: flags.hosts,
  pages: flags.pages,
});
children.add(testweb.child);
const truth = await readTruthFile(testweb.files.truth);
log(`test web: ${flags.hosts} hosts, ${truth.size} truth URLs, port ${testweb.port}`);
const failing = scenarios.includes("failing-url") ? await startFailingHosts() : undefined;

/** Run r's seed: the given seed for run 1, so `--runs 1 --seed <a run's seed>` replays that run. */
function seedOfRun(first, run) {
  return ((first + (run - 1) * 0x9e3779b1) >>> 0) % (2 ** 32 - 1) || 1;
}

/** One run of `scenario` in a folder of its own, its moments drawn from `runSeed`. */
async function runScenario(scenario, run, runSeed) {
  const random = seededRandom(runSeed);
  const between = (min, max) => min + Math.floor(random() * (max - min + 1));
  const cluster = new Cluster(
    join(dir, `${scenario}-${run}`),
    scenario === "failing-url" ? failing : { hostsFile: testweb.files.hosts, seedsFile: testweb.files.seeds },
  );
  await mkdir(cluster.dir, { recursive: true });
  const extra = {};
  const deadline = setTimeout(() => cluster.stopAll("timeout"), flags["timeout-s"] * 1000);
  try {
    switch (scenario) {
      case "steady":
        await cluster.startSettled(4);
        break;
      case "join-early": {
        const first = await cluster.start("agent-1", { seeds: true });
        const startedAt = performance.now();
        cluster.note("agent-1 listens, with the seeds: the crawl starts");
        let at = between(500, 1500);
        const joins = [];
        for (let i = 2; i <= 4; i++) {
          await sleep(Math.max(0, startedAt + at - performance.now()));
          if (cluster.allDone()) {
            cluster.note(`the crawl ended before agent-${i} joined`);
            break;
          }
          cluster.note(`agent-${i} joins`);
          joins.push(cluster.start(`agent-${i}`, { join: [first.address] }));
          at += 1000 + between(-300, 300);
        }
        await Promise.all(joins);
        break;
      }
      case "join-at-30": {
        await cluster.startSettled(4);
        if (!(await cluster.waitForCoverage(0.3))) break;
        cluster.note("agent-5 joins");
        const joining = cluster.start("agent-5", { join: cluster.liveAddresses() });
        await sleep(between(0, 300));
        cluster.note("agent-6 joins");
        await Promise.all([joining, cluster.start("agent-6", { join: cluster.liveAddresses() })]);
        break;
      }
      case "sigterm": {
        await cluster.startSettled(4);
        const victimId = `agent-${between(1, 3)}`;
        if (!(await cluster.waitForCoverage(0.3))) break;
        const victim = cluster.agents.get(victimId);
        const sentAt = performance.now();
        cluster.note(`SIGTERM to ${victimId}`);
        victim.process.kill("SIGTERM");
        const timer = setTimeout(() => victim.process.kill("SIGKILL"), SIGTERM_EXIT_TIMEOUT_MS);
        const code = await victim.exited;
        clearTimeout(timer);
        const exitMs = victim.exitedAtMs - sentAt;
        cluster.note(`${victimId} exited (${code}) ${fixed(exitMs, 0)} ms after the SIGTERM`);
        // What the leave says it handed over, and what not in time.
        const leaveLine = victim.stderrLines.find((line) => / left: |stopped before the leave/.test(line));
        if (leaveLine) cluster.note(leaveLine.replace(/^ubicrawl agent \S+: /, `${victimId} `));
        extra.sigterm = { agent: victimId, exitCode: code, exitMs };
        if (flags["restart-after-s"] !== undefined) {
          await sleep(flags["restart-after-s"] * 1000);
          if (cluster.allDone()) cluster.note(`the crawl ended before ${victimId}'s restart`);
          else {
            cluster.note(`${victimId} restarts on its data`);
            await cluster.start(victimId, { join: cluster.liveAddresses() });
            extra.sigterm.restarted = true;
          }
        }
        break;
      }
      case "kill-restart": {
        await cluster.startSettled(4);
        const victimId = `agent-${between(1, 3)}`;
        const restartAfterMs = between(200, 2000);
        if (!(await cluster.waitForCoverage(0.3))) break;
        const victim = cluster.agents.get(victimId);
        const killedAt = performance.now();
        cluster.note(`SIGKILL to ${victimId}`);
        victim.process.kill("SIGKILL");
        await victim.exited;
        await sleep(Math.max(0, killedAt + restartAfterMs - performance.now()));
        cluster.note(`${victimId} restarts on its data, ${restartAfterMs} ms after the kill`);
        await cluster.start(victimId, { join: cluster.liveAddresses() });
        extra.kill = { agent: victimId, restartAfterMs };
        break;
      }
      case "failing-url":
        extra.failing = await failingUrlScenario(cluster, random, between);
        break;
    }
    await cluster.waitForEnd();
  } finally {
    clearTimeout(deadline);
    await cluster.stopAll();
  }
  const tally = await cluster.tally();
  const report = tally.report(truth);
  if (extra.failing) {
    for (const [name, url] of Object.entries(failing.urls))
      extra.failing[name].logAttempts = tally.failedAttemptsOf(url);
    // Counted by the dropping server itself, once every agent has exited.
    extra.failing.drop.serverRequests = failing.requests.get("/") ?? 0;
  }
  return {
    scenario,
    run,
    seed: runSeed,
    coverage: report.coverage.fraction,
    overlap: report.overlap,
    fetches: report.fetches,
    repeatedUrls: report.repeatedUrls,
    repeatedFetches: report.repeatedFetches,
    mostFailedAttempts: report.mostFailedAttempts,
    failures: report.failures,
    retries: report.retries,
    durationS: cluster.durationS(),
    exitCodes: cluster.exitCodes(),
    timedOut: cluster.timedOut,
    agents: report.agents.map(({ agent, pages, share }) => ({ agent, pages, share })),
    events: cluster.events,
    ...extra,
  };
}

/**
 * failing-url: 3 agents, the last with the seeds and the failing URLs; after the first attempt at the
 * dropping host's URL, 3 kills (its owner, a random agent, its owner), each restarted on its data.
 */
async function failingUrlScenario(cluster, random, between) {
  failing.requests.clear();
  const ids = ["agent-1", "agent-2", "agent-3"];
  await cluster.startSettled(3);
  const assignment = await Assignment.load(ids.map((id) => ({ id, capacity: 1 })));
  const owner = assignment.ownerOf(new URL(failing.urls.drop).host);
  cluster.note(`${DROP_HOST} belongs to ${owner}`);
  await cluster.waitFor(
    async () => (await cluster.tally()).failedAttemptsOf(failing.urls.drop) > 0,
    15_000,
    `the first attempt at ${failing.urls.drop}`,
  );
  const victims = [owner, ids[Math.floor(random() * ids.length)], owner];
  for (const victimId of victims) {
    await sleep(between(300, 1500));
    if (cluster.allDone()) {
      cluster.note("the crawl ended before the next kill");
      break;
    }
    cluster.note(`SIGKILL to ${victimId}`);
    const victim = cluster.agents.get(victimId);
    victim.process.kill("SIGKILL");
    await victim.exited;
    await sleep(between(200, 1500));
    cluster.note(`${victimId} restarts on its data`);
    await cluster.start(victimId, { ...cluster.options.get(victimId), join: cluster.liveAddresses() });
  }
  return {
    owner,
    kills: victims.length,
    maxFetchAttempts: flags["max-fetch-attempts"],
    drop: { url: failing.urls.drop },
    missing: { url: failing.urls.missing },
    refused: { url: failing.urls.refused },
  };
}

/** The agents of one run: started, killed and restarted by id, each with its data folder. */
class Cluster {
  /**
   * @param {string} runDir
   * @param {{ hostsFile: string, seedsFile: string }} files the hosts file of every agent, the seeds
   */
  constructor(runDir, files) {
    this.dir = runDir;
    this.files = files;
    /** @type {Map<string, import("./lib/processes.mjs").Child>} the latest life of each agent */
    this.agents = new Map();
    /** Every life, in start order. */
    this.lives = [];
    /** How each agent was first started (seeds), so a restart runs the same command. */
    this.options = new Map();
    this.events = [];
    this.timedOut = false;
    this.startedAtMs = performance.now();
    // Used only to see views settle: it never polls on its own.
    this.stats = new StatsPoller(2 ** 31 - 1);
  }

  note(text) {
    const atS = (performance.now() - this.startedAtMs) / 1000;
    this.events.push(`${atS.toFixed(1)}s ${text}`);
    log(`  ${atS.toFixed(1)} s: ${text}`);
  }

  /** Starts agent `id` (`join`: addresses; `seeds`: with the seeds) and waits until it listens. */
  async start(id, { seeds = false, join: joinList = [] } = {}) {
    if (!this.options.has(id)) this.options.set(id, { seeds });
    const child = startAgentProcess(id, [
      ...["--data", join(this.dir, id)],
      ...benchAgentFlags(this.files.hostsFile, flags["max-active-hosts"], { "delay-ms": flags["delay-ms"] }),
      ...[
        "--listen",
        "127.0.0.1:0",
        "--insecure",
        ...(joinList.length === 0 ? [] : ["--join", joinList.join(",")]),
      ],
      ...(seeds ? ["--seeds", this.files.seedsFile] : []),
      ...[
        "--heartbeat-ms",
        String(flags["heartbeat-ms"]),
        "--suspect-after-ms",
        String(flags["suspect-after-ms"]),
      ],
      ...(flags["takeover-delay-ms"] === undefined
        ? []
        : ["--takeover-delay-ms", String(flags["takeover-delay-ms"])]),
      ...["--max-fetch-attempts", String(flags["max-fetch-attempts"])],
      ...extraAgentFlags,
    ]);
    children.add(child);
    child.exited.then(() => children.delete(child));
    this.agents.set(id, child);
    this.lives.push({ id, child });
    try {
      child.address = String((await child.waitForEvent("listening", 30_000)).address);
    } catch (error) {
      log(
        `${id} did not come up (pid ${child.pid}); its stderr:\n${child.stderrLines.slice(-20).join("\n")}`,
      );
      throw error;
    }
    // Where to ask a stuck run what it is doing: ubicrawl stats --agent ADDRESS --cluster --insecure
    log(`    (${id}: pid ${child.pid}, listening on ${child.address})`);
    this.stats.forget(id);
    this.stats.watch(id, child.address);
    return child;
  }

  /** `n` agents, each joining the ones before; the last, with the seeds, once the others see each other. */
  async startSettled(n) {
    for (let i = 1; i <= n; i++) {
      if (i === n) await this.waitForSettled();
      await this.start(`agent-${i}`, { join: this.liveAddresses(), seeds: i === n });
    }
  }

  /** Waits (boundedly) until every live agent regards every live agent as alive. */
  async waitForSettled() {
    const ids = [...this.agents.keys()];
    const settled = async () => {
      const views = await Promise.all(ids.map((id) => this.stats.aliveView(id)));
      return views.every((view) => ids.every((id) => view.has(id)));
    };
    if (!(await this.waitFor(settled, SETTLE_TIMEOUT_MS, `${ids.join(", ")} to see each other`))) {
      this.note("membership did not settle; going on");
    }
  }

  /** Polls `predicate` until it holds (true), every agent has exited or `timeoutMs` passed (false). */
  async waitFor(predicate, timeoutMs, what) {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (await predicate()) return true;
      if (this.allDone()) {
        this.note(`every agent exited before ${what}`);
        return false;
      }
      await sleep(POLL_MS);
    }
    this.note(`no ${what} in ${timeoutMs} ms`);
    return false;
  }

  /** Waits until `fraction` of the truth is fetched (read from the crawl logs); false if the crawl ended first. */
  async waitForCoverage(fraction) {
    const reached = await this.waitFor(
      async () => (await this.tally()).report(truth).coverage.fraction >= fraction,
      flags["timeout-s"] * 1000,
      `${percent(fraction, 0)} of the truth fetched`,
    );
    if (reached) this.note(`${percent(fraction, 0)} of the truth fetched`);
    return reached;
  }

  liveAddresses() {
    return [...this.agents.values()]
      .filter((child) => !child.done && child.address)
      .map((child) => child.address);
  }

  allDone() {
    return [...this.agents.values()].every((child) => child.done);
  }

  /** The crawl logs of every agent started so far (those written yet), counted. */
  async tally() {
    const tally = new CrawlTally();
    for (const id of this.agents.keys()) {
      const agentDir = join(this.dir, id);
      if (existsSync(join(agentDir, CRAWL_LOG_FILE))) await tallyAgentDir(tally, agentDir);
    }
    return tally;
  }

  /** Resolves when every life has exited (the agents run with --exit-when-done). */
  async waitForEnd() {
    for (;;) {
      const running = this.lives.filter(({ child }) => !child.done);
      if (running.length === 0) return;
      await Promise.all(running.map(({ child }) => child.exited));
    }
  }

  /** Stops every life still running (SIGTERM, then SIGKILL); `reason` "timeout" marks the run. */
  async stopAll(reason) {
    const running = this.lives.filter(({ child }) => !child.done);
    if (reason === "timeout" && running.length > 0) {
      this.timedOut = true;
      this.note(`no end after ${flags["timeout-s"]} s: stopping ${running.map(({ id }) => id).join(", ")}`);
    }
    await Promise.all(running.map(({ child }) => child.stop()));
    this.stats.stop();
  }

  durationS() {
    const ends = this.lives.map(({ child }) => child.exitedAtMs ?? performance.now());
    return (Math.max(...ends) - this.startedAtMs) / 1000;
  }

  /** `id=code` for each life, in start order (a signal's name for a killed one). */
  exitCodes() {
    return this.lives.map(
      ({ id, child }) =>
        `${id}=${child.done ? (child.process.exitCode ?? child.process.signalCode) : "running"}`,
    );
  }
}

/**
 * The failing hosts: a server on 127.0.0.1 that answers robots.txt with a 404 and drops every other
 * connection (counting requests by path), a port on 127.0.0.1 with nothing listening, and a name the
 * hosts file lacks. Writes a hosts file and a seeds file with them added.
 */
async function startFailingHosts() {
  const requests = new Map();
  const server = createServer((request, response) => {
    const path = request.url ?? "";
    if (path === "/robots.txt") {
      response.writeHead(404).end();
      return;
    }
    requests.set(path, (requests.get(path) ?? 0) + 1);
    request.socket.destroy();
  });
  await new Promise((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  const closed = createServer();
  await new Promise((resolveListen) => closed.listen(0, "127.0.0.1", resolveListen));
  const refusedPort = closed.address().port;
  await new Promise((resolveClose) => closed.close(resolveClose));
  const urls = {
    drop: `http://${DROP_HOST}:${server.address().port}/`,
    refused: `http://${REFUSED_HOST}:${refusedPort}/`,
    missing: `http://${MISSING_HOST}:${testweb.port}/`,
  };
  const hostsFile = join(dir, "hosts-failing");
  const hosts = await readFile(testweb.files.hosts, "utf8");
  await writeFile(hostsFile, `${hosts.trimEnd()}\n127.0.0.1 ${DROP_HOST}\n127.0.0.1 ${REFUSED_HOST}\n`);
  const seedsFile = join(dir, "seeds-failing");
  const seeds = await readFile(testweb.files.seeds, "utf8");
  await writeFile(seedsFile, `${seeds.trimEnd()}\n${Object.values(urls).join("\n")}\n`);
  log(`failing URLs: ${Object.values(urls).join(" ")}`);
  return { server, requests, urls, hostsFile, seedsFile };
}

/** Per scenario: runs, runs with no overlap at all, the worst overlap, the lowest coverage. */
function summaries() {
  return scenarios.map((scenario) => {
    const all = results.filter((result) => result.scenario === scenario);
    const runs = all.filter((result) => result.error === undefined);
    return {
      scenario,
      runs: all.length,
      failedRuns: all.length - runs.length,
      zeroOverlapRuns: runs.filter((result) => result.overlap === 0).length,
      worstOverlap: runs.length === 0 ? Number.NaN : Math.max(...runs.map((result) => result.overlap)),
      minCoverage: runs.length === 0 ? Number.NaN : Math.min(...runs.map((result) => result.coverage)),
      mostRepeatedUrls:
        runs.length === 0 ? Number.NaN : Math.max(...runs.map((result) => result.repeatedUrls)),
      mostFailedAttempts:
        runs.length === 0
          ? Number.NaN
          : Math.max(...runs.map((result) => result.mostFailedAttempts?.attempts ?? 0)),
      timedOut: runs.filter((result) => result.timedOut).length,
    };
  });
}

function printReport() {
  const machine = {
    cpus: availableParallelism(),
    loadBefore: loadBefore.map((load) => Number(load.toFixed(2))),
    loadAfter: loadAfter.map((load) => Number(load.toFixed(2))),
  };
  const web = { seed: flags["web-seed"], hosts: flags.hosts, pages: flags.pages, truthUrls: truth.size };
  if (flags.json) {
    const document = { seed, web, flags, machine, runs: results, summary: summaries() };
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return;
  }
  const rows = results.map((result) =>
    result.error !== undefined
      ? [result.scenario, String(result.run), String(result.seed), `FAILED: ${result.error.split("\n")[0]}`]
      : [
          result.scenario,
          String(result.run),
          String(result.seed),
          percent(result.coverage),
          percent(result.overlap),
          String(result.repeatedUrls),
          String(result.repeatedFetches),
          result.mostFailedAttempts === null ? "0" : String(result.mostFailedAttempts.attempts),
          fixed(result.durationS, 1),
          result.exitCodes.map((code) => code.replace(/^agent-/, "")).join(" ") +
            (result.timedOut ? " TIMEOUT" : ""),
          detail(result),
        ],
  );
  const headers = ["scenario", "run", "seed", "coverage", "overlap", "twice+", "refetches", "max fail", "s"];
  const lines = [
    `ubicrawl bench/membership: test web ${web.hosts} hosts / ${web.truthUrls} truth URLs, --max-active-hosts ` +
      `${flags["max-active-hosts"]}, --delay-ms ${flags["delay-ms"]}, heartbeat ${flags["heartbeat-ms"]} ms, suspicion after ${flags["suspect-after-ms"]} ms, ` +
      `seed ${seed}; load average ${machine.loadBefore.join(" ")} before, ${machine.loadAfter.join(" ")} after, ${machine.cpus} CPUs`,
    "",
    formatTable([...headers, "exit codes", "detail"], rows),
    "",
    formatTable(
      [
        "scenario",
        "runs",
        "overlap 0",
        "worst overlap",
        "min coverage",
        "most twice+",
        "max fail",
        "timed out",
        "failed",
      ],
      summaries().map((summary) => [
        summary.scenario,
        String(summary.runs),
        String(summary.zeroOverlapRuns),
        percent(summary.worstOverlap),
        percent(summary.minCoverage),
        String(summary.mostRepeatedUrls),
        String(summary.mostFailedAttempts),
        String(summary.timedOut),
        String(summary.failedRuns),
      ]),
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The scenario's own figures, in a few words; and the URL failed more often than agents should try. */
function detail(result) {
  const most = result.mostFailedAttempts;
  const own = scenarioDetail(result);
  if (most === null || most.attempts <= flags["max-fetch-attempts"]) return own;
  return `${own}${own === "" ? "" : "; "}${most.attempts} failures of ${most.url}`;
}

function scenarioDetail(result) {
  if (result.sigterm) {
    const { agent, exitCode, exitMs, restarted } = result.sigterm;
    return `${agent} SIGTERM: exit ${exitCode} after ${fixed(exitMs, 0)} ms${restarted ? ", restarted" : ""}`;
  }
  if (result.kill) return `${result.kill.agent} restarted ${result.kill.restartAfterMs} ms after SIGKILL`;
  if (result.failing) {
    const { drop, missing, refused, maxFetchAttempts } = result.failing;
    return (
      `attempts (max ${maxFetchAttempts}): drop ${drop.logAttempts} logged/${drop.serverRequests} served, ` +
      `missing ${missing.logAttempts}, refused ${refused.logAttempts}`
    );
  }
  return "";
}

// The runs, after every declaration above (a class is not hoisted).
const results = [];
try {
  for (const scenario of scenarios) {
    for (let run = 1; run <= flags.runs; run++) {
      const runSeed = seedOfRun(seed, run);
      log(
        `\n${scenario} run ${run}: seed ${runSeed} (replay: --scenario ${scenario} --runs 1 --seed ${runSeed})`,
      );
      let result;
      try {
        result = await runScenario(scenario, run, runSeed);
      } catch (error) {
        // One broken run (an agent that did not come up) is reported, and the others still run.
        log(`${scenario} run ${run} failed: ${error instanceof Error ? error.stack : error}`);
        results.push({ scenario, run, seed: runSeed, error: String(error), exitCodes: [], timedOut: false });
        continue;
      }
      results.push(result);
      log(
        `${scenario} run ${run}: coverage ${percent(result.coverage)}, overlap ${percent(result.overlap)}, ` +
          `${result.repeatedUrls} pages fetched twice or more, ${fixed(result.durationS, 1)} s, exits ${result.exitCodes.join(" ")}`,
      );
    }
  }
} finally {
  await Promise.all([...children].map((child) => child.stop()));
  failing?.server.close();
}
const loadAfter = loadavg();
printReport();
process.exitCode = results.some((result) => result.timedOut || result.error !== undefined) ? 1 : 0;
