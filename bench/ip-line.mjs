// What the line of held asks at an IP authority buys at a fast shared address: n agents' ClusterIpGates
// (the real parts: IpAuthority, ClusterIpGate, the IpGrants RPC over gRPC on loopback) send requests to
// one HTTP server on 127.0.0.1 answering in --response-ms, --ip-delay-ms 0. Each agent crawls --hosts
// hosts there (a worker each: one request at a time, then --pause-ms for the page's processing); the
// address's authority is another agent, reached over gRPC (--authority-sends: the first of them, whose
// own asks are function calls). Each setting runs twice side by side, alternating which goes first:
// "poll" (holdMs 0: a full address is asked again every IP_POLL_MS and releases are batched, as before
// the line) and "line" (asks held in the address's line at the authority, answered when a slot frees).
// Measured once every agent has sent (the first user's lease is revoked at its renewal). Prints
// requests/s at the address, the peak at once the server saw (the run fails above --max-per-ip), and
// the messages to the authority per request. No timing assertion: figures only.
// Run after `npm run build`:  node bench/ip-line.mjs [--agents 2,3,4] [--max-per-ip 2,3,4] [--seconds 3] [--json]
import { createServer, Agent as HttpAgent, request } from "node:http";
import { systemClock } from "../dist/clock.js";
import { ClusterIpGate } from "../dist/cluster/cluster-ip-gate.js";
import { IpAuthority } from "../dist/cluster/ip-authority.js";
import { answerIpRequest, ipHoldOf } from "../dist/cluster/ip-wire.js";
import { ErrorCode, UbiError } from "../dist/errors.js";
import { AgentServer, INSECURE, PeerClient } from "../dist/transport/index.js";
import { AGENT_RPCS } from "../dist/transport/protocol.js";
import { parseBenchFlags } from "./lib/flags.mjs";
import { fixed, formatTable } from "./lib/report.mjs";

const FLAGS = {
  agents: { type: "string", help: "agent counts, comma-separated", default: "2,3,4" },
  "max-per-ip": { type: "string", help: "--max-per-ip values, comma-separated", default: "2,3,4" },
  seconds: { type: "integer", help: "how long each run is measured", default: 3, min: 1, max: 60 },
  "response-ms": {
    type: "integer",
    help: "how long the server takes to answer",
    default: 2,
    min: 0,
    max: 1000,
  },
  hosts: {
    type: "integer",
    help: "hosts at the address each agent crawls (one request at a time each)",
    default: 3,
    min: 1,
    max: 64,
  },
  "pause-ms": {
    type: "integer",
    help: "a host's pause between its requests (the page's processing)",
    default: 5,
    min: 0,
    max: 10_000,
  },
  rounds: {
    type: "integer",
    help: "rounds of each setting (poll and line alternating)",
    default: 1,
    min: 1,
    max: 10,
  },
  "authority-sends": {
    type: "boolean",
    help: "the address's authority is one of the agents sending (its asks are function calls)",
  },
  json: { type: "boolean", help: "print JSON instead of a table" },
};
const MODES = { poll: 0, line: undefined };
const IP = "127.0.0.1";
const IP_DEADLINE_MS = 2_000;

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/ip-line.mjs [flags]");
const counts = (text) => text.split(",").map((n) => Number.parseInt(n, 10));
flags.agents ??= FLAGS.agents.default;
flags["max-per-ip"] ??= FLAGS["max-per-ip"].default;
const log = (text) => process.stderr.write(`${text}\n`);

/** The fast server: answers at once; counts requests and the peak at once. */
async function startServer(responseMs) {
  const state = { inFlight: 0, peak: 0, served: 0 };
  const server = createServer((_req, res) => {
    state.inFlight++;
    state.peak = Math.max(state.peak, state.inFlight);
    res.on("finish", () => {
      state.inFlight--;
      state.served++;
    });
    if (responseMs === 0) res.end("ok");
    else setTimeout(() => res.end("ok"), responseMs);
  });
  await new Promise((resolve) => server.listen(0, IP, resolve));
  return { server, state, port: server.address().port };
}

/** Handlers for every RPC: IpGrants answered by `authority`, the rest refused (not used here). */
function handlers(authority) {
  const refuse = async () => {
    throw new UbiError(ErrorCode.InvalidArgument, "not served by this bench");
  };
  const all = Object.fromEntries(Object.keys(AGENT_RPCS).map((name) => [name, refuse]));
  return { ...all, ipGrants: async (req) => answerIpRequest(authority, req) };
}

/** One run: `n` agents, `maxPerIp` workers each, for `seconds`, with the gates' `holdMs`. */
async function run(n, maxPerIp, holdMs, seconds, web) {
  const ids = Array.from({ length: n }, (_, i) => `a${i}`);
  const authorityId = flags["authority-sends"] ? "a0" : "authority";
  const limits = { maxPerIp, ipDelayMs: 0 };
  const authorityOptions = { ...limits, leaseTtlMs: 5_000, slotTtlMs: 32_000, graceMs: 40_000 };
  const authority = new IpAuthority(authorityOptions, {
    clock: systemClock,
    owns: () => true,
    isAlive: () => true,
    takeOver: async () => undefined,
  });
  const server = new AgentServer({ security: INSECURE }, { handlers: handlers(authority) });
  const address = await server.start("127.0.0.1:0");
  const clients = [];
  let messages = 0;
  const gates = ids.map((id) => {
    const client = id === authorityId ? undefined : new PeerClient(address, { security: INSECURE });
    if (client) clients.push(client);
    return new ClusterIpGate(
      id,
      { ...limits, ...(holdMs === undefined ? {} : { holdMs }) },
      {
        clock: systemClock,
        authorityOf: () => authorityId,
        send: async (_to, req) =>
          client
            ? client.ipGrants(req, { deadlineMs: IP_DEADLINE_MS + ipHoldOf(req) })
            : answerIpRequest(authority, req),
        onMessage: () => messages++,
      },
    );
  });
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: n * flags.hosts });
  const get = () =>
    new Promise((resolve, reject) => {
      const req = request({ host: IP, port: web.port, path: "/", agent: httpAgent }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end();
    });
  const stop = new AbortController();
  // Measured once every agent has sent a request: the first asker's lease is revoked at its renewal
  // (up to half a lease's time later), and until then it sends alone, as in a crawl.
  let startedAt = performance.now();
  let measuring = false;
  let sent = 0;
  let messagesBefore = 0;
  let servedBefore = web.state.served;
  const perAgent = new Map();
  let timer;
  const begin = () => {
    measuring = true;
    startedAt = performance.now();
    sent = 0;
    messagesBefore = messages;
    servedBefore = web.state.served;
    web.state.peak = web.state.inFlight;
    timer = setTimeout(() => stop.abort(), seconds * 1000);
  };
  const warmUp = setTimeout(begin, 10_000); // a run whose agents did not all send by then is measured as it is
  const pause = () => new Promise((resolve) => setTimeout(resolve, flags["pause-ms"]));
  const worker = async (gate) => {
    while (!stop.signal.aborted) {
      let release;
      try {
        release = await gate.acquire(IP, stop.signal);
      } catch {
        return;
      }
      try {
        await get();
        sent++;
        perAgent.set(gate.selfId, (perAgent.get(gate.selfId) ?? 0) + 1);
        if (!measuring && perAgent.size === n) {
          clearTimeout(warmUp);
          begin();
        }
      } finally {
        release();
      }
      await pause();
    }
  };
  await Promise.all(gates.flatMap((gate) => Array.from({ length: flags.hosts }, () => worker(gate))));
  clearTimeout(timer);
  const wallS = (performance.now() - startedAt) / 1000;
  for (const gate of gates) gate.close();
  authority.close();
  for (const client of clients) client.close();
  await server.stop();
  httpAgent.destroy();
  return {
    agents: n,
    maxPerIp,
    mode: holdMs === 0 ? "poll" : "line",
    requests: sent,
    requestsPerS: sent / wallS,
    served: web.state.served - servedBefore,
    peakAtOnce: web.state.peak,
    messagesPerRequest: sent > 0 ? (messages - messagesBefore) / sent : 0,
  };
}

const web = await startServer(flags["response-ms"]);
const results = [];
try {
  for (let round = 1; round <= flags.rounds; round++) {
    for (const n of counts(flags.agents)) {
      for (const maxPerIp of counts(flags["max-per-ip"])) {
        const order = (round + n + maxPerIp) % 2 === 0 ? ["poll", "line"] : ["line", "poll"];
        for (const mode of order) {
          const result = await run(n, maxPerIp, MODES[mode], flags.seconds, web);
          results.push({ round, ...result });
          log(
            `${n} agents, --max-per-ip ${maxPerIp}, ${mode}: ${fixed(result.requestsPerS, 1)} requests/s, ` +
              `peak ${result.peakAtOnce} at once, ${fixed(result.messagesPerRequest, 2)} messages/request`,
          );
        }
      }
    }
  }
} finally {
  await new Promise((resolve) => web.server.close(resolve));
}

const rows = [];
for (const n of counts(flags.agents)) {
  for (const maxPerIp of counts(flags["max-per-ip"])) {
    const of = (mode) => results.filter((r) => r.agents === n && r.maxPerIp === maxPerIp && r.mode === mode);
    const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
    const poll = of("poll");
    const line = of("line");
    rows.push({
      agents: n,
      maxPerIp,
      pollPerS: mean(poll, "requestsPerS"),
      linePerS: mean(line, "requestsPerS"),
      ratio: mean(line, "requestsPerS") / mean(poll, "requestsPerS"),
      peakPoll: Math.max(...poll.map((r) => r.peakAtOnce)),
      peakLine: Math.max(...line.map((r) => r.peakAtOnce)),
      messagesPoll: mean(poll, "messagesPerRequest"),
      messagesLine: mean(line, "messagesPerRequest"),
    });
  }
}
const overLimit = results.filter((r) => r.peakAtOnce > r.maxPerIp);
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ flags, results, rows }, null, 2)}\n`);
} else {
  const headers = [
    "agents",
    "--max-per-ip",
    "poll req/s",
    "line req/s",
    "line/poll",
    "peak at once (poll, line)",
    "messages/request (poll, line)",
    "ideal req/s",
  ];
  const table = rows.map((r) => [
    r.agents,
    r.maxPerIp,
    fixed(r.pollPerS, 1),
    fixed(r.linePerS, 1),
    `${fixed(r.ratio, 1)}x`,
    `${r.peakPoll}, ${r.peakLine}`,
    `${fixed(r.messagesPoll, 2)}, ${fixed(r.messagesLine, 2)}`,
    flags["response-ms"] > 0 ? fixed((r.maxPerIp * 1000) / flags["response-ms"], 0) : "-",
  ]);
  process.stdout.write(`${formatTable(headers, table)}\n`);
  process.stdout.write(
    `--ip-delay-ms 0, a server on ${IP} answering in ${flags["response-ms"]} ms, ${flags.hosts} hosts per agent ` +
      `pausing ${flags["pause-ms"]} ms between requests, measured ${flags.seconds} s a run ` +
      `once every agent sent; the authority ${flags["authority-sends"] ? "is a0" : "sends nothing"}; ` +
      `messages: IpGrants calls to the authority from the other agents; ideal: ` +
      `--max-per-ip requests always in flight.\n`,
  );
}
if (overLimit.length > 0) {
  log(`over --max-per-ip at the server in ${overLimit.length} runs`);
  process.exitCode = 1;
}
