import { expect, it } from "vitest";
import { type LeaveOutcome, leaveCluster, leaveReport } from "../../src/cluster/graceful-leave.js";
import type { PushOutcome, PushSender } from "../../src/cluster/hand-over.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import type { HandOverReply, HandOverRequest } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * leaveCluster step by step on a manual clock: every collaborator is a fake that logs when it is
 * called (ms since the leave began) and waits for the test where the test says so.
 */

const TIMEOUT_MS = 20_000;

/** A promise the test settles. */
function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Never settles: a step that hangs. */
const hang = <T>() => new Promise<T>(() => {});

/** Lets every promise continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Moves the clock `ms` forward one timer at a time, letting the promises run after each, so the timers
 * that a continuation sets on the way fire too (`sleep` polls, `within` limits).
 */
async function elapse(clock: ManualClock, ms: number): Promise<void> {
  const end = clock.now() + ms;
  await settle();
  for (;;) {
    const next = clock.pendingDelays[0];
    if (next === undefined || clock.now() + next > end) break;
    clock.advance(next);
    await settle();
  }
  clock.advance(end - clock.now());
  await settle();
}

const REQUEST: HandOverRequest = {
  from: { id: "me", address: "me:1", capacity: 1, incarnation: 1, status: "ALIVE", lastHeardMsAgo: 0 },
  hosts: [],
};

/**
 * Agent "me" leaving. By default nothing is in flight and every step answers at once; `push` replaces
 * the desk's hand-over (it gets the sender and the quiescing time), `announce`, `settled` and `drain`
 * replace theirs.
 */
function setUp(
  over: {
    urlsInFlight?: number;
    push?: (send: PushSender, quiesceMs: number | undefined) => Promise<PushOutcome>;
    announce?: () => Promise<void>;
    handOffAddresses?: () => Promise<void>;
    settled?: () => Promise<void>;
    handOverRequeued?: () => Promise<void>;
    drain?: (signal: AbortSignal | undefined) => Promise<void>;
    send?: (peer: string, request: HandOverRequest) => Promise<HandOverReply>;
    others?: () => readonly string[];
    entrustAlone?: (deadlineAtMs: number) => Promise<boolean>;
  } = {},
) {
  const clock = new ManualClock();
  const startMs = clock.now();
  /** Every step, as "name@ms since the start". */
  const log: string[] = [];
  const note = (name: string) => log.push(`${name}@${clock.now() - startMs}`);
  const agent = {
    urlsInFlight: over.urlsInFlight ?? 0,
    queuedUrls: 0,
    pause: () => note("pause"),
  };
  const exchange = {
    pendingUrls: 0,
    drain: (signal?: AbortSignal) => {
      note("drain");
      return over.drain?.(signal) ?? Promise.resolve();
    },
  };
  const held = { hosts: 0 };
  /** The sends of the hand-over: peer, request and deadline. */
  const sent: { peer: string; request: HandOverRequest; deadlineMs: number }[] = [];
  const quiesced: (number | undefined)[] = [];
  const leaving: Promise<LeaveOutcome> = leaveCluster(TIMEOUT_MS, {
    clock,
    agent,
    claims: { stop: () => note("claims.stop") },
    desk: {
      close: () => note("desk.close"),
      pushAll: (send, quiesceMs) => {
        note("pushAll");
        quiesced.push(quiesceMs);
        return over.push?.(send, quiesceMs) ?? Promise.resolve({ handed: 0, failed: 0 });
      },
    },
    heldHosts: () => held.hosts,
    send: (peer, request, deadlineMs) => {
      note(`send:${peer}`);
      sent.push({ peer, request, deadlineMs });
      return over.send?.(peer, request) ?? Promise.resolve<HandOverReply>({ taken: request.hosts.length });
    },
    handOffAddresses: () => {
      note("handOff");
      return over.handOffAddresses?.() ?? Promise.resolve();
    },
    announce: () => {
      note("announce");
      return over.announce?.() ?? Promise.resolve();
    },
    settled: () => {
      note("settled");
      return over.settled?.() ?? Promise.resolve();
    },
    handOverRequeued: () => {
      note("handOverRequeued");
      return over.handOverRequeued?.() ?? Promise.resolve();
    },
    exchange,
    others: over.others ?? (() => ["b", "c"]),
    entrustAlone: (deadlineAtMs) => {
      note(`entrustAlone:${deadlineAtMs - startMs}`);
      return over.entrustAlone?.(deadlineAtMs) ?? Promise.resolve(true);
    },
  });
  /** The outcome once the leave returned, else undefined. */
  const outcome: { value?: LeaveOutcome } = {};
  void leaving.then((value) => {
    note("returned");
    outcome.value = value;
  });
  return { clock, log, agent, exchange, held, sent, quiesced, outcome, leaving };
}

/** The signal of a push nothing aborts. */
const NO_SIGNAL = new AbortController().signal;

/** A hand-over that sends one request to "b" and reports the hosts as the test says. */
const pushOne =
  (result: PushOutcome) =>
  async (send: PushSender): Promise<PushOutcome> => {
    await send("b", REQUEST, NO_SIGNAL);
    return result;
  };

it("pauses the agent, stops claiming and closes the desk at once, before anything is waited for", () => {
  const { log } = setUp({ urlsInFlight: 1 });
  expect(log).toEqual(["pause@0", "claims.stop@0", "desk.close@0"]);
});

it("runs the steps in order: hand-over, addresses, then the announcement, then the settled view change, then the drain, then the keepers", async () => {
  const { clock, log, outcome } = setUp({ push: pushOne({ handed: 1, failed: 0 }) });
  await elapse(clock, 0);
  expect(log).toEqual([
    "pause@0",
    "claims.stop@0",
    "desk.close@0",
    "pushAll@0",
    "send:b@0",
    "handOff@0",
    "announce@0",
    "settled@0",
    "drain@0",
    `entrustAlone:${TIMEOUT_MS}@0`,
    "returned@0",
  ]);
  expect(outcome.value).toEqual({
    hostsHanded: 1,
    hostsNotHanded: 0,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

it("starts the hand-over once the fetches in flight are done, polling every 20 ms", async () => {
  const { clock, log, agent } = setUp({ urlsInFlight: 2 });
  await elapse(clock, 1_000);
  expect(log.some((step) => step.startsWith("pushAll"))).toBe(false);
  agent.urlsInFlight = 0;
  await elapse(clock, 19);
  expect(log.some((step) => step.startsWith("pushAll"))).toBe(false);
  await elapse(clock, 1);
  expect(log).toContain("pushAll@1020");
});

it("waits for the fetches in flight a quarter of the time at most", async () => {
  const { clock, log } = setUp({ urlsInFlight: 1 });
  await elapse(clock, TIMEOUT_MS / 4 - 1);
  expect(log.some((step) => step.startsWith("pushAll"))).toBe(false);
  await elapse(clock, 1);
  expect(log).toContain(`pushAll@${TIMEOUT_MS / 4}`);
});

it("gives the hand-over half of the time left, as each send's deadline, and half of that to quiesce the hosts", async () => {
  const { clock, sent, quiesced } = setUp({ push: pushOne({ handed: 1, failed: 0 }) });
  await elapse(clock, 0);
  expect(quiesced).toEqual([TIMEOUT_MS / 4]);
  expect(sent).toEqual([{ peer: "b", request: REQUEST, deadlineMs: TIMEOUT_MS / 2 }]);

  // After a quarter spent waiting for a fetch: half of the three quarters left.
  const late = setUp({ urlsInFlight: 1, push: pushOne({ handed: 1, failed: 0 }) });
  await elapse(late.clock, TIMEOUT_MS / 4);
  expect(late.quiesced).toEqual([(TIMEOUT_MS * 3) / 16]);
  expect(late.sent.map((send) => send.deadlineMs)).toEqual([(TIMEOUT_MS * 3) / 8]);
});

it("still gives each send a positive deadline when no time is left", async () => {
  const clock = new ManualClock();
  const deadlines: number[] = [];
  const leaving = leaveCluster(0, {
    clock,
    agent: { pause: () => {}, urlsInFlight: 0, queuedUrls: 0 },
    claims: { stop: () => {} },
    desk: { close: () => {}, pushAll: pushOne({ handed: 1, failed: 0 }) },
    heldHosts: () => 1,
    handOffAddresses: () => Promise.resolve(),
    send: (_peer, request, deadlineMs) => {
      deadlines.push(deadlineMs);
      return Promise.resolve({ taken: request.hosts.length });
    },
    announce: () => Promise.resolve(),
    settled: () => Promise.resolve(),
    handOverRequeued: () => Promise.resolve(),
    exchange: { drain: () => Promise.resolve(), pendingUrls: 0 },
    others: () => ["b"],
    entrustAlone: () => Promise.resolve(true),
  });
  await elapse(clock, 0);
  await leaving;
  expect(deadlines).toEqual([1]);
});

it("reports the hosts the hand-over handed and those it could not", async () => {
  // Two hosts their next owner never takes: pushed again until the hand-over's budget is spent.
  const rounds = [{ handed: 5, failed: 2 }];
  const { clock, outcome, held } = setUp({
    push: async (send) => {
      await send("b", REQUEST, NO_SIGNAL);
      return rounds.shift() ?? { handed: 0, failed: 2 };
    },
  });
  held.hosts = 2;
  await elapse(clock, TIMEOUT_MS);
  expect(outcome.value).toEqual({
    hostsHanded: 5,
    hostsNotHanded: 2,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

it("a hand-over that hangs counts every host still held as not handed, and the leave goes on at half the time", async () => {
  const { clock, log, held, outcome } = setUp({ push: () => hang() });
  held.hosts = 3;
  await elapse(clock, TIMEOUT_MS / 2 - 1);
  expect(log.some((step) => step.startsWith("announce"))).toBe(false);
  // Read when the time is up, not when the leave began.
  held.hosts = 7;
  await elapse(clock, 1);
  expect(log).toContain(`announce@${TIMEOUT_MS / 2}`);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 7,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

it("a hand-over past its budget sends nothing more: the hosts left are not handed", async () => {
  const later = deferred<void>();
  const refused: unknown[] = [];
  const { clock, sent, held, outcome } = setUp({
    push: async (send) => {
      await send("b", REQUEST, NO_SIGNAL);
      await later.promise;
      await send("c", REQUEST, NO_SIGNAL).catch((error: unknown) => refused.push(error));
      return { handed: 1, failed: 1 };
    },
  });
  held.hosts = 1;
  await elapse(clock, TIMEOUT_MS / 2);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 1,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
  later.resolve();
  await elapse(clock, 0);
  expect(sent.map((send) => send.peer)).toEqual(["b"]);
  expect(refused).toHaveLength(1);
});

it("stops the drain at the timeout through its signal", async () => {
  let signal: AbortSignal | undefined;
  const { clock } = setUp({
    drain: (given) => {
      signal = given;
      return hang();
    },
  });
  await elapse(clock, TIMEOUT_MS - 1);
  expect(signal?.aborted).toBe(false);
  await elapse(clock, 1);
  expect(signal?.aborted).toBe(true);
});

it("leaves no timer behind when every step runs out of time", async () => {
  const { clock, outcome } = setUp({
    urlsInFlight: 1,
    push: () => hang(),
    announce: () => hang(),
    settled: () => hang(),
  });
  await elapse(clock, TIMEOUT_MS);
  expect(outcome.value).toBeDefined();
  // The wait for the fetch in flight stopped polling at its quarter.
  expect(clock.pendingDelays).toEqual([]);
});

it("a hand-over that fails counts every host held as not handed", async () => {
  const { clock, held, outcome } = setUp({ push: () => Promise.reject(new Error("peer gone")) });
  held.hosts = 4;
  await elapse(clock, 0);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 4,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

it("announces the leave only once the hand-over is done", async () => {
  const push = deferred<PushOutcome>();
  const { clock, log } = setUp({ push: () => push.promise });
  await elapse(clock, 3_000);
  expect(log.some((step) => step.startsWith("announce"))).toBe(false);
  push.resolve({ handed: 2, failed: 0 });
  await elapse(clock, 0);
  expect(log).toContain("announce@3000");
});

it("waits for the announcement a third of the time left at most", async () => {
  // The hand-over takes 2 s: 18 s are left, 6 s of them for the announcement.
  const push = deferred<PushOutcome>();
  const { clock, log } = setUp({ push: () => push.promise, announce: () => hang() });
  await elapse(clock, 2_000);
  push.resolve({ handed: 1, failed: 0 });
  await elapse(clock, 5_999);
  expect(log.some((step) => step.startsWith("settled"))).toBe(false);
  await elapse(clock, 1);
  expect(log).toContain("settled@8000");
});

it("hands the addresses over before the announcement, waiting a quarter of the time left at most", async () => {
  // The hand-over takes 2 s: 18 s are left, 4.5 s of them for the addresses.
  const push = deferred<PushOutcome>();
  const { clock, log } = setUp({ push: () => push.promise, handOffAddresses: () => hang() });
  await elapse(clock, 2_000);
  push.resolve({ handed: 1, failed: 0 });
  await elapse(clock, 4_499);
  expect(log).toContain("handOff@2000");
  expect(log.some((step) => step.startsWith("announce"))).toBe(false);
  await elapse(clock, 1);
  expect(log).toContain("announce@6500");
});

it("drains the exchange only once the view change has settled", async () => {
  const settled = deferred<void>();
  const { clock, log } = setUp({ settled: () => settled.promise });
  await elapse(clock, 2_000);
  expect(log.some((step) => step.startsWith("drain"))).toBe(false);
  settled.resolve();
  await elapse(clock, 0);
  expect(log).toContain("drain@2000");
});

it("a drain that hangs still returns at the timeout, counting the URLs pending and queued then", async () => {
  const { clock, log, agent, exchange, outcome } = setUp({ drain: () => hang() });
  agent.queuedUrls = 4;
  exchange.pendingUrls = 10;
  await elapse(clock, TIMEOUT_MS - 1);
  expect(outcome.value).toBeUndefined();
  exchange.pendingUrls = 3;
  await elapse(clock, 1);
  expect(log.at(-1)).toBe(`returned@${TIMEOUT_MS}`);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 0,
    urlsNotHanded: 7,
    noAgentStays: false,
    entrusted: true,
  });
});

it("a view change that never settles still returns at the timeout, without draining", async () => {
  const { clock, log, outcome } = setUp({ settled: () => hang() });
  await elapse(clock, TIMEOUT_MS - 1);
  expect(outcome.value).toBeUndefined();
  await elapse(clock, 1);
  expect(log.at(-1)).toBe(`returned@${TIMEOUT_MS}`);
  expect(log.some((step) => step.startsWith("drain"))).toBe(false);
});

it("counts the URLs still pending or queued after the drain as not handed", async () => {
  const drained = deferred<void>();
  const { clock, agent, exchange, outcome } = setUp({ drain: () => drained.promise });
  agent.queuedUrls = 9;
  exchange.pendingUrls = 20;
  await elapse(clock, 500);
  // The drain sends most of them; a few stay queued or unacknowledged.
  agent.queuedUrls = 1;
  exchange.pendingUrls = 2;
  drained.resolve();
  await elapse(clock, 0);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 0,
    urlsNotHanded: 3,
    noAgentStays: false,
    entrusted: true,
  });
});

it("hands over the URLs put back after the queues were: a fetch in flight past the first wait is waited for, then its URL handed over and drained", async () => {
  // A robots.txt request waiting for its address's slot, which the pause does not end: still in flight
  // when the queues are handed over; its URL comes back to its queue when it ends, 8 s in.
  const queue = { urls: 0 };
  const { clock, log, agent, outcome } = setUp({
    urlsInFlight: 1,
    // The URL put back goes to its owner (and is acknowledged by the drain).
    handOverRequeued: async () => {
      queue.urls = 0;
    },
  });
  Object.defineProperty(agent, "queuedUrls", { get: () => queue.urls });
  await elapse(clock, 7_999);
  expect(log.at(-1)).toBe("drain@5000");
  expect(outcome.value).toBeUndefined();
  agent.urlsInFlight = 0;
  queue.urls = 1;
  await elapse(clock, 20);
  expect(log.slice(-4)).toEqual([
    "handOverRequeued@8000",
    "drain@8000",
    `entrustAlone:${TIMEOUT_MS}@8000`,
    "returned@8000",
  ]);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 0,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

it("counts the URLs still in flight at the timeout as not handed (they stay in this agent's data)", async () => {
  const { clock, log, outcome } = setUp({ urlsInFlight: 2 });
  await elapse(clock, TIMEOUT_MS);
  expect(log.some((step) => step.startsWith("handOverRequeued"))).toBe(false);
  expect(log.at(-1)).toBe(`returned@${TIMEOUT_MS}`);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 0,
    urlsNotHanded: 2,
    noAgentStays: false,
    entrusted: true,
  });
});

it("uses the time the steps took, so a slow step leaves less for the next ones and the whole leave fits the timeout", async () => {
  // A fetch for 4 s, a hand-over for about 7 s, an announcement that hangs, a drain that hangs.
  const push = deferred<PushOutcome>();
  const { clock, log, agent, outcome } = setUp({
    urlsInFlight: 1,
    push: () => push.promise,
    announce: () => hang(),
    drain: () => hang(),
  });
  await elapse(clock, 4_000);
  agent.urlsInFlight = 0;
  await elapse(clock, 20);
  await elapse(clock, 6_980);
  push.resolve({ handed: 1, failed: 0 });
  // 9 s are left: a third of them for the announcement, the rest for the drain.
  await elapse(clock, 9_000);
  expect(log).toEqual([
    "pause@0",
    "claims.stop@0",
    "desk.close@0",
    "pushAll@4020",
    "handOff@11000",
    "announce@11000",
    "settled@14000",
    "drain@14000",
    `entrustAlone:${TIMEOUT_MS}@${TIMEOUT_MS}`,
    `returned@${TIMEOUT_MS}`,
  ]);
  expect(outcome.value).toEqual({
    hostsHanded: 1,
    hostsNotHanded: 0,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

/** A hand-over of one host to each of "b" and "c", as the desk does it: a failed send is a host kept. */
async function pushToBoth(send: PushSender): Promise<PushOutcome> {
  const results = await Promise.allSettled([send("b", REQUEST, NO_SIGNAL), send("c", REQUEST, NO_SIGNAL)]);
  const handed = results.filter((result) => result.status === "fulfilled").length;
  return { handed, failed: results.length - handed };
}

/** Refuses as an agent that is leaving itself does (its desk closed). */
const refuseLeaving = () =>
  Promise.reject(new UbiError(ErrorCode.Leaving, "HandOverHosts to b refused: this agent is leaving"));

it("says no agent stays when every other agent alive refused the hand-over because it is leaving too", async () => {
  const { clock, agent, outcome } = setUp({ push: pushToBoth, send: refuseLeaving });
  agent.queuedUrls = 6;
  await elapse(clock, 0);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 2,
    urlsNotHanded: 6,
    noAgentStays: true,
    entrusted: true,
  });
});

it("does not drain the queued URLs when no agent stays to take them: the leave ends at once", async () => {
  const { clock, log, outcome } = setUp({ push: pushToBoth, send: refuseLeaving, drain: () => hang() });
  await elapse(clock, 0);
  expect(log.some((step) => step.startsWith("drain"))).toBe(false);
  expect(log.at(-1)).toBe("returned@0");
  expect(outcome.value?.noAgentStays).toBe(true);
});

it("drains as usual when an agent alive was not asked (it may stay)", async () => {
  const { clock, log } = setUp({ push: pushOne({ handed: 0, failed: 1 }), send: refuseLeaving });
  await elapse(clock, 0);
  expect(log).toContain("drain@0");
});

it("says no agent stays when the others left meanwhile (none alive at the end)", async () => {
  const others = { ids: ["b", "c"] };
  const { clock, outcome } = setUp({
    push: pushToBoth,
    send: (peer) =>
      peer === "b" ? refuseLeaving() : Promise.reject(new UbiError(ErrorCode.PeerUnreachable, "gone")),
    others: () => others.ids,
    // Their leave announcements arrive while this agent announces its own.
    announce: async () => {
      others.ids = [];
    },
  });
  // c may stay: its hosts are pushed again until the budget is spent, then the leave is announced.
  await elapse(clock, TIMEOUT_MS);
  expect(outcome.value?.noAgentStays).toBe(true);
});

it("does not say no agent stays when an agent that is not leaving failed to take its hosts", async () => {
  const { clock, outcome, held } = setUp({
    push: pushToBoth,
    send: (peer) =>
      peer === "b" ? refuseLeaving() : Promise.reject(new UbiError(ErrorCode.PeerUnreachable, "timed out")),
  });
  held.hosts = 2;
  await elapse(clock, TIMEOUT_MS);
  expect(outcome.value).toEqual({
    hostsHanded: 0,
    hostsNotHanded: 2,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: true,
  });
});

it("does not say no agent stays when an agent alive was not asked (it may stay)", async () => {
  const { clock, outcome } = setUp({ push: pushOne({ handed: 0, failed: 1 }), send: refuseLeaving });
  await elapse(clock, 0);
  expect(outcome.value?.noAgentStays).toBe(false);
});

it("reports a whole hand-over plainly at info level", () => {
  expect(
    leaveReport({
      hostsHanded: 14,
      hostsNotHanded: 0,
      urlsNotHanded: 0,
      noAgentStays: false,
      entrusted: true,
    }),
  ).toEqual({
    level: "info",
    message: "left: 14 hosts handed over",
  });
});

it("reports hosts kept because no agent stays at info level, saying the data dir keeps them", () => {
  const report = leaveReport({
    hostsHanded: 0,
    hostsNotHanded: 14,
    urlsNotHanded: 30,
    noAgentStays: true,
    entrusted: true,
  });
  expect(report.level).toBe("info");
  expect(report.message).toBe(
    "left: 0 hosts handed over; no agent left to hand 14 hosts and 30 queued URLs to (every other agent is leaving too): " +
      "they stay in this data dir and are taken back at the next start",
  );
  expect(report.message).not.toContain("not in time");
});

it("keeps the warning for hosts an agent staying did not take in time", () => {
  const report = leaveReport({
    hostsHanded: 3,
    hostsNotHanded: 14,
    urlsNotHanded: 2,
    noAgentStays: false,
    entrusted: true,
  });
  expect(report.level).toBe("warn");
  expect(report.message).toContain(
    "not in time: 14 hosts (their next owners crawl them without this agent's record of them)",
  );
  expect(report.message).toContain("2 queued URLs");
});

it("pushes again, every 200 ms while its budget lasts, the hosts a next owner did not take", async () => {
  // A next owner busy past the deadline on a loaded machine: two hosts of three go in the next round.
  const rounds: PushOutcome[] = [
    { handed: 1, failed: 2 },
    { handed: 2, failed: 0 },
  ];
  const { clock, log, outcome } = setUp({ push: async () => rounds.shift() ?? { handed: 0, failed: 0 } });
  await elapse(clock, 0);
  expect(log.filter((step) => step.startsWith("pushAll"))).toEqual(["pushAll@0"]);
  await elapse(clock, 200);
  expect(log.filter((step) => step.startsWith("pushAll"))).toEqual(["pushAll@0", "pushAll@200"]);
  await elapse(clock, 0);
  expect(outcome.value).toMatchObject({ hostsHanded: 3, hostsNotHanded: 0 });
});

it("warns when what it alone answered for was not with keepers in time, even with everything handed over", () => {
  const report = leaveReport({
    hostsHanded: 3,
    hostsNotHanded: 0,
    urlsNotHanded: 0,
    noAgentStays: false,
    entrusted: false,
  });
  expect(report).toEqual({
    level: "warn",
    message:
      "left: 3 hosts handed over; not with keepers in time: some of the URLs it handed out and the links its " +
      "pages gave (a crash of an agent that took its hosts may lose them)",
  });
});

it("entrusts what it alone answered for last, with the leave's deadline, and says when the keepers were late", async () => {
  const { clock, log, outcome } = setUp({ entrustAlone: () => Promise.resolve(false) });
  await elapse(clock, 0);
  expect(log.slice(-3)).toEqual(["drain@0", `entrustAlone:${TIMEOUT_MS}@0`, "returned@0"]);
  expect(outcome.value?.entrusted).toBe(false);

  // A failure to read the outbox says the same, and ends the leave all the same.
  const failing = setUp({ entrustAlone: () => Promise.reject(new Error("store closed")) });
  await elapse(failing.clock, 0);
  expect(failing.outcome.value?.entrusted).toBe(false);
});

it("entrusts nothing when no agent stays", async () => {
  const { clock, log, outcome } = setUp({ push: pushToBoth, send: refuseLeaving });
  await elapse(clock, 0);
  expect(outcome.value?.noAgentStays).toBe(true);
  expect(outcome.value?.entrusted).toBe(true);
  expect(log.some((step) => step.startsWith("entrustAlone"))).toBe(false);
});
