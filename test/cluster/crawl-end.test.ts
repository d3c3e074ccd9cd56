import { expect, it } from "vitest";
import { CrawlEnd } from "../../src/cluster/crawl-end.js";
import type { WorkLoad } from "../../src/cluster/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { idle } from "../support/work-load.js";

/**
 * CrawlEnd of agent "a" on a manual clock: the other agents' loads are the heartbeat replies and
 * requests the test makes up; the rule itself is TerminationDetector's (tested on its own).
 */

const SUSPECT_AFTER_MS = 1_000;
const PULSE_GAP_MS = 100;

const busy = (overrides: Partial<WorkLoad> = {}): WorkLoad =>
  idle({ idle: false, queuedUrls: 5, ...overrides });

function setUp(alive: readonly string[] = ["a", "b"], startMs?: number) {
  const clock = new ManualClock(startMs);
  /** This agent's load, and when the latest suspicion standing began (none unless a test says so). */
  const state = { self: idle(), lastSuspicionAtMs: Number.NEGATIVE_INFINITY };
  const counts = { pulses: 0, awaitingEnd: 0 };
  const crawlEnd = new CrawlEnd({
    selfId: "a",
    clock,
    suspectAfterMs: SUSPECT_AFTER_MS,
    load: () => state.self,
    aliveIds: () => alive,
    lastSuspicionAtMs: () => state.lastSuspicionAtMs,
    pulse: () => counts.pulses++,
    onAwaitingEnd: () => counts.awaitingEnd++,
  });
  /** Replies of `ids` with `load`, to requests sent now. */
  const reply = (ids: readonly string[], load: WorkLoad = idle()) => {
    for (const id of ids) crawlEnd.observeReply(id, load, clock.now());
  };
  return { clock, state, counts, crawlEnd, reply };
}

it("is complete once every alive agent reported idle, unmoved loads in two rounds, the second fresh", () => {
  const { clock, crawlEnd, reply } = setUp(["a", "b", "c"]);
  reply(["b", "c"]);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  const firstRoundAt = clock.now();
  clock.advance(300);
  reply(["b"]);
  // c's last report is from before the first round.
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  // A reply measured no earlier than its request: one sent before the first round is no fresh report.
  clock.advance(50);
  crawlEnd.observeReply("c", idle(), firstRoundAt - 100);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  crawlEnd.observeReply("c", idle(), firstRoundAt + 1);
  expect(crawlEnd.isCrawlComplete()).toBe(true);
});

it("counts this agent's own load: not complete while it is busy", () => {
  const { clock, state, crawlEnd, reply } = setUp();
  state.self = busy();
  for (let round = 0; round < 3; round++) {
    reply(["b"]);
    expect(crawlEnd.isCrawlComplete()).toBe(false);
    clock.advance(200);
  }
  state.self = idle();
  reply(["b"]);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  clock.advance(200);
  reply(["b"]);
  expect(crawlEnd.isCrawlComplete()).toBe(true);
});

it("is not complete while a suspicion stands for less than twice the suspicion timeout", () => {
  const { clock, state, counts, crawlEnd, reply } = setUp();
  reply(["b"]);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  const pulses = counts.pulses;
  state.lastSuspicionAtMs = clock.now() + 50;
  clock.advance(100);
  // The second round would end the crawl, and a round short of fresh reports would pulse: neither.
  reply(["b"]);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  expect(counts.pulses).toBe(pulses);
  clock.advance(state.lastSuspicionAtMs + 2 * SUSPECT_AFTER_MS - 1 - clock.now());
  reply(["b"]);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  clock.advance(1);
  expect(crawlEnd.isCrawlComplete()).toBe(true);
});

it("is never complete before the crawl started; seeds, a reply or a request with work start it", () => {
  const nothing = idle({ urlBatchesSent: 0, urlBatchesReceived: 0, pagesFetched: 0 });
  const { clock, state, crawlEnd, reply } = setUp();
  state.self = nothing;
  for (let round = 0; round < 3; round++) {
    reply(["b"], nothing);
    expect(crawlEnd.isCrawlComplete()).toBe(false);
    clock.advance(200);
  }
  expect(crawlEnd.hasStarted).toBe(false);
  crawlEnd.markStarted();
  expect(crawlEnd.hasStarted).toBe(true);
  reply(["b"], nothing);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  clock.advance(200);
  reply(["b"], nothing);
  expect(crawlEnd.isCrawlComplete()).toBe(true);

  const byReply = setUp();
  byReply.crawlEnd.observeReply("b", idle({ pagesFetched: 0, queuedUrls: 1 }), byReply.clock.now());
  expect(byReply.crawlEnd.hasStarted).toBe(true);
  const byRequest = setUp();
  byRequest.crawlEnd.observeRequest("b", busy({ pagesFetched: 1, queuedUrls: 0 }));
  expect(byRequest.crawlEnd.hasStarted).toBe(true);
  // A request is of unknown freshness: it starts the crawl, but is no report.
  expect(byRequest.crawlEnd.hasReportFrom("b")).toBe(false);
});

it("tells onAwaitingEnd on every check, even while the view is settling", () => {
  const { clock, state, counts, crawlEnd } = setUp();
  state.lastSuspicionAtMs = clock.now();
  crawlEnd.isCrawlComplete();
  crawlEnd.isCrawlComplete();
  expect(counts.awaitingEnd).toBe(2);
});

it("pulses when this agent goes idle, not again while it stays idle", () => {
  const { clock, state, counts, crawlEnd, reply } = setUp();
  state.self = busy();
  reply(["b"], busy());
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(0);
  state.self = idle();
  clock.advance(200);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(1);
  // b is still busy: no round is waiting for fresh reports either.
  clock.advance(200);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(1);
  state.self = busy();
  clock.advance(200);
  crawlEnd.isCrawlComplete();
  state.self = idle();
  clock.advance(200);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(2);
});

it("pulses while a round lacks only fresh reports, not once one is busy", () => {
  const { clock, counts, crawlEnd, reply } = setUp();
  reply(["b"], busy());
  crawlEnd.isCrawlComplete();
  // Going idle pulsed.
  expect(counts.pulses).toBe(1);
  clock.advance(200);
  reply(["b"]);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  expect(counts.pulses).toBe(2);
  clock.advance(200);
  expect(crawlEnd.isCrawlComplete()).toBe(false);
  expect(counts.pulses).toBe(3);
  reply(["b"], busy());
  clock.advance(200);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(3);
});

it("pulses at most once per 100 ms", () => {
  const { clock, counts, crawlEnd, reply } = setUp();
  reply(["b"]);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(1);
  clock.advance(PULSE_GAP_MS - 1);
  crawlEnd.isCrawlComplete();
  crawlEnd.observeRequest("c", idle());
  expect(counts.pulses).toBe(1);
  clock.advance(1);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(2);
});

it("allows the first pulse at once, whatever the clock reads", () => {
  const { counts, crawlEnd } = setUp(["a", "b"], 0);
  crawlEnd.isCrawlComplete();
  crawlEnd.observeRequest("b", idle());
  expect(counts.pulses).toBe(1);
});

it("does not pulse for a newly idle sender while this agent is busy", () => {
  const { clock, state, counts, crawlEnd } = setUp(["a", "b", "c"]);
  state.self = busy();
  crawlEnd.isCrawlComplete();
  crawlEnd.observeRequest("b", idle());
  expect(counts.pulses).toBe(0);
  state.self = idle();
  clock.advance(200);
  crawlEnd.observeRequest("c", idle());
  expect(counts.pulses).toBe(1);
});

it("pulses for a request from a newly idle sender only once something awaits the end", () => {
  const { clock, counts, crawlEnd, reply } = setUp(["a", "b", "c"]);
  crawlEnd.observeRequest("b", idle());
  expect(counts.pulses).toBe(0);
  crawlEnd.isCrawlComplete();
  expect(counts.pulses).toBe(1);
  clock.advance(200);
  crawlEnd.observeRequest("b", busy());
  expect(counts.pulses).toBe(1);
  // Never observed yet: a fresh report of it may end the crawl.
  crawlEnd.observeRequest("b", idle());
  expect(counts.pulses).toBe(2);
  clock.advance(200);
  reply(["b"]);
  crawlEnd.observeRequest("b", idle());
  expect(counts.pulses).toBe(2);
  reply(["b"], busy());
  crawlEnd.observeRequest("b", idle());
  expect(counts.pulses).toBe(3);
});

it("forgets an agent gone from the view", () => {
  const { crawlEnd, reply } = setUp(["a", "b", "c"]);
  reply(["b", "c"]);
  expect(crawlEnd.hasReportFrom("b")).toBe(true);
  crawlEnd.forget("b");
  expect(crawlEnd.hasReportFrom("b")).toBe(false);
  expect(crawlEnd.hasReportFrom("c")).toBe(true);
});
