// What the last step of a request's wait costs when its address's slot is free — the common case, an
// address with one host: the CPU µs a request of `waitForRequest` (src/agent/request-wait.ts) takes,
// its slot taken at once (`IpLimiter.tryAcquire`) against through `acquire` with the signals that end
// a wait (the agent's stop, a pause and, in a cluster, the host's hand-over), side by side in one run,
// alternating; as a lone agent (no hand-over signal) and as a cluster's agent. No processes, no sockets.
// Run after `npm run build`:  node bench/request-wait.mjs [--requests 200000] [--rounds 3] [--json]

import { CrawlStats } from "../dist/agent/crawl-stats.js";
import { HandsChanges } from "../dist/agent/hands-changes.js";
import { HostRuntimes } from "../dist/agent/host-runtime.js";
import { waitForRequest } from "../dist/agent/request-wait.js";
import { systemClock } from "../dist/clock.js";
import { IpGate, IpSpacing } from "../dist/frontier/index.js";
import { silentLogger } from "../dist/logging/index.js";
import { RobotsRules } from "../dist/robots/index.js";
import { parseBenchFlags } from "./lib/flags.mjs";
import { fixed, formatTable } from "./lib/report.mjs";

const FLAGS = {
  requests: { type: "integer", help: "requests a measurement", default: 200_000, min: 1_000 },
  rounds: { type: "integer", help: "alternating rounds of each way", default: 3, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
};
const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/request-wait.mjs [flags]");

const HOST = "a.test";
const RULES = new RobotsRules(
  { origin: `http://${HOST}`, status: "parsed", text: "", fetchedAtMs: 0, expiresAtMs: 86_400_000 },
  { userAgent: "ubicrawl", minCrawlDelayMs: 0, maxCrawlDelayMs: 3_600_000 },
);

/** The wait's deps as an agent has them: its own IP gate, a pause signal, in a cluster the hand-overs. */
function depsOf(cluster, fastPath) {
  const gate = new IpGate(2, { spacing: new IpSpacing(0, systemClock) });
  const hands = new HandsChanges();
  const pause = new AbortController();
  return {
    clock: systemClock,
    resolve: async () => "127.1.0.1",
    stats: new CrawlStats(systemClock),
    logger: silentLogger,
    // Without tryAcquire's grant, every request goes through acquire, as before it existed.
    ipGate: fastPath ? gate : Object.assign(Object.create(gate), { tryAcquire: () => undefined }),
    turns: { acquire: async () => () => {} },
    waitingOf: () => 1,
    waitCut: () => false,
    pausedSignal: () => pause.signal,
    ...(cluster ? { handedOver: () => hands.watch(() => true) } : {}),
  };
}

/** CPU µs a request over `n` requests through `deps`. */
async function measure(deps, n) {
  const state = new HostRuntimes().of(HOST);
  const stop = new AbortController();
  const run = async (count) => {
    for (let i = 0; i < count; i++) {
      const cleared = await waitForRequest(HOST, state, RULES, stop.signal, deps);
      cleared.release.sent();
      cleared.release();
      cleared.endTurn();
    }
  };
  await run(Math.min(n, 20_000));
  const before = process.cpuUsage();
  await run(n);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const rows = [];
for (const cluster of [false, true]) {
  const figures = { acquire: [], tryAcquire: [] };
  for (let round = 0; round < flags.rounds; round++) {
    figures.acquire.push(await measure(depsOf(cluster, false), flags.requests));
    figures.tryAcquire.push(await measure(depsOf(cluster, true), flags.requests));
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const slow = median(figures.acquire);
  const fast = median(figures.tryAcquire);
  rows.push({
    agent: cluster ? "a cluster's" : "alone",
    acquireUs: slow,
    tryAcquireUs: fast,
    savedUs: slow - fast,
  });
}

if (flags.json) console.log(JSON.stringify(rows, null, 2));
else {
  console.log(
    `CPU µs a request of the wait's last step, its slot free (${flags.requests} requests, median of ${flags.rounds} alternating rounds)\n`,
  );
  console.log(
    formatTable(
      ["agent", "through acquire µs", "tryAcquire µs", "saved µs"],
      rows.map((row) => [
        row.agent,
        fixed(row.acquireUs, 2),
        fixed(row.tryAcquireUs, 2),
        fixed(row.savedUs, 2),
      ]),
    ),
  );
}
