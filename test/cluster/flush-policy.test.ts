import { describe, expect, it } from "vitest";
import { type BatchState, FlushPolicy } from "../../src/cluster/index.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { ManualClock } from "../support/manual-clock.js";

const OPTIONS = { targetBatchUrls: 100, maxDelayMs: 2000, urgentDelayMs: 50, starvingQueuedUrls: 10 };

/** A batch of 5 URLs that started now on `clock`, for a busy peer, while this agent is busy. */
function batch(clock: ManualClock, changes: Partial<BatchState> = {}): BatchState {
  return {
    urls: 5,
    oldestAtMs: clock.now(),
    peerQueuedUrls: 1000,
    localIdle: false,
    fruitlessBatches: 0,
    ...changes,
  };
}

describe("FlushPolicy", () => {
  it("checks its options, naming the bad one", () => {
    for (const bad of [
      { targetBatchUrls: 0 },
      { maxDelayMs: -1 },
      { urgentDelayMs: 1.5 },
      { starvingQueuedUrls: Number.NaN },
      { maxDelayMs: 10, urgentDelayMs: 20 },
    ]) {
      let error: unknown;
      try {
        new FlushPolicy(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument), JSON.stringify(bad)).toBe(true);
      for (const name of Object.keys(bad)) expect((error as Error).message).toContain(name);
    }
    expect(new FlushPolicy().options).toEqual({
      targetBatchUrls: 1000,
      maxDelayMs: 30_000,
      urgentDelayMs: 250,
      starvingQueuedUrls: 20,
    });
  });

  it("sends a batch at the size target at once, and an empty one never", () => {
    const clock = new ManualClock();
    const policy = new FlushPolicy(OPTIONS);
    expect(policy.delayMs(batch(clock, { urls: 100 }), clock.now())).toBe(0);
    expect(policy.delayMs(batch(clock, { urls: 99 }), clock.now())).toBe(2000);
    expect(policy.delayMs(batch(clock, { urls: 0, localIdle: true }), clock.now())).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it("lets a small batch for a busy peer wait the longest delay, counted from its oldest URL", () => {
    const clock = new ManualClock();
    const policy = new FlushPolicy(OPTIONS);
    const state = batch(clock);
    clock.advance(1500);
    expect(policy.delayMs(state, clock.now())).toBe(500);
    clock.advance(600);
    // Overdue (a late timer or a busy event loop): now.
    expect(policy.delayMs(state, clock.now())).toBe(0);
  });

  it("sends soon when the peer is short of work, or unknown peers wait like busy ones", () => {
    const clock = new ManualClock();
    const policy = new FlushPolicy(OPTIONS);
    expect(policy.delayMs(batch(clock, { peerQueuedUrls: 9 }), clock.now())).toBe(50);
    expect(policy.delayMs(batch(clock, { peerQueuedUrls: 0 }), clock.now())).toBe(50);
    expect(policy.delayMs(batch(clock, { peerQueuedUrls: 10 }), clock.now())).toBe(2000);
    expect(policy.delayMs(batch(clock, { peerQueuedUrls: undefined }), clock.now())).toBe(2000);
    expect(policy.isStarving(undefined)).toBe(false);
    expect(policy.isStarving(3)).toBe(true);
  });

  it("sends a busy peer's batch urgentDelayMs after it first held a host new to the peer (with slots to spare)", () => {
    const clock = new ManualClock();
    const policy = new FlushPolicy(OPTIONS);
    const state = batch(clock);
    clock.advance(1000);
    expect(policy.delayMs({ ...state, newHostAtMs: clock.now() }, clock.now())).toBe(50);
    clock.advance(20);
    expect(policy.delayMs({ ...state, newHostAtMs: clock.now() - 20 }, clock.now())).toBe(30);
    // Sooner than that anyway: the longest delay, counted from the oldest URL.
    clock.advance(975);
    expect(policy.delayMs({ ...state, newHostAtMs: clock.now() }, clock.now())).toBe(5);
    expect(policy.delayMs({ ...state, newHostAtMs: undefined }, clock.now())).toBe(5);
  });

  it("sends soon when this agent is idle: nothing more will fill the batch", () => {
    const clock = new ManualClock();
    const policy = new FlushPolicy(OPTIONS);
    const state = batch(clock);
    clock.advance(30);
    expect(policy.delayMs({ ...state, localIdle: true }, clock.now())).toBe(20);
    clock.advance(1000);
    expect(policy.delayMs({ ...state, localIdle: true }, clock.now())).toBe(0);
  });

  it("doubles the wait for a starving peer with each fruitless batch, up to the longest delay", () => {
    const clock = new ManualClock();
    const policy = new FlushPolicy(OPTIONS);
    const starving = (fruitlessBatches: number, localIdle = false) =>
      policy.delayMs(batch(clock, { peerQueuedUrls: 0, fruitlessBatches, localIdle }), clock.now());
    expect([0, 1, 2, 3, 5, 6, 100, 5000].map((n) => starving(n))).toEqual([
      50, 100, 200, 400, 1600, 2000, 2000, 2000,
    ]);
    // Idle here, or a busy peer: the count changes nothing.
    expect(starving(4, true)).toBe(50);
    expect(policy.delayMs(batch(clock, { fruitlessBatches: 3 }), clock.now())).toBe(2000);
  });
});
