import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { IpGate } from "../../src/frontier/ip-gate.js";
import { IpSpacing } from "../../src/frontier/ip-spacing.js";
import { ManualClock } from "../support/manual-clock.js";
import { flush } from "./helpers.js";

const IP = "10.0.0.1";

/**
 * A gate of two at `IP`, 1 s apart, on a manual clock: the first request's turn taken, the second's
 * asked for (`startedAt` gets the time its turn comes).
 */
async function twoAtOneAddress() {
  const clock = new ManualClock();
  const gate = new IpGate(2, { spacing: new IpSpacing(1_000, clock) });
  const first = await gate.acquire(IP);
  const startedAt: number[] = [];
  const second = gate.acquire(IP).then((release) => {
    startedAt.push(clock.now());
    return release;
  });
  return { clock, first, second, startedAt };
}

describe("IpSpacing", () => {
  it("rejects a delay that is not a non-negative integer, naming it", () => {
    for (const delay of [-1, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        new IpSpacing(delay, new ManualClock());
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
      expect(String(error)).toContain("IP delay");
    }
  });

  it("makes a request wait the delay since the last start at its address, and no other address", () => {
    const clock = new ManualClock();
    const spacing = new IpSpacing(1_000, clock);
    expect(spacing.waitMs(IP)).toBe(0);
    spacing.started(IP)(); // written at once
    expect(spacing.waitMs(IP)).toBe(1_000);
    expect(spacing.waitMs("10.0.0.2")).toBe(0);
    clock.advance(400);
    expect(spacing.waitMs(IP)).toBe(600);
    clock.advance(600);
    expect(spacing.waitMs(IP)).toBe(0);
  });

  it("spaces an address by a longer Crawl-delay of one of its hosts, never by a shorter one", () => {
    const clock = new ManualClock();
    const spacing = new IpSpacing(1_000, clock);
    spacing.raise(IP, 500);
    expect(spacing.delayOf(IP)).toBe(1_000);
    spacing.raise(IP, 5_000);
    spacing.raise(IP, 2_000);
    expect(spacing.delayOf(IP)).toBe(5_000);
    expect(spacing.delayOf("10.0.0.2")).toBe(1_000);
    spacing.started(IP);
    expect(spacing.waitMs(IP)).toBe(5_000);
  });

  it("with no delay, nothing waits", () => {
    const spacing = new IpSpacing(0, new ManualClock());
    spacing.started(IP);
    expect(spacing.waitMs(IP)).toBe(0);
  });
});

describe("IpGate with an IP delay", () => {
  it("starts the requests to one address the delay apart, even when they had slots at once", async () => {
    const clock = new ManualClock();
    const gate = new IpGate(2, { spacing: new IpSpacing(1_000, clock) });
    const startedAt: number[] = [];
    const acquire = () =>
      gate.acquire(IP).then((release) => {
        startedAt.push(clock.now());
        release.sent(); // written at once
        return release;
      });
    const first = acquire();
    const second = acquire();
    await flush();
    expect(startedAt).toEqual([1_000_000]);
    clock.advance(999);
    await flush();
    expect(startedAt).toHaveLength(1);
    clock.advance(1);
    await flush();
    expect(startedAt).toEqual([1_000_000, 1_001_000]);
    await Promise.all([first, second]);
  });

  it("spaces the next start from when a request is written, not from its turn: a request held up on its way brings none closer", async () => {
    const { clock, first, second, startedAt } = await twoAtOneAddress();
    // The first request's connection is still opening a whole delay after its turn: the next waits.
    clock.advance(1_000);
    await flush();
    expect(startedAt).toEqual([]);
    clock.advance(300);
    first.sent();
    await flush();
    clock.advance(999);
    await flush();
    expect(startedAt).toEqual([]);
    clock.advance(1);
    await flush();
    expect(startedAt).toEqual([1_002_300]);
    first();
    (await second)();
  });

  it("a request ended unwritten (its connection failed) lets the next start the delay after its end", async () => {
    const { clock, first, second, startedAt } = await twoAtOneAddress();
    clock.advance(1_500);
    first();
    await flush();
    expect(startedAt).toEqual([]);
    clock.advance(1_000);
    await flush();
    expect(startedAt).toEqual([1_002_500]);
    (await second)();
  });

  it("stopped while a request there is not written yet, gives its slot back", async () => {
    const clock = new ManualClock();
    const gate = new IpGate(2, { spacing: new IpSpacing(1_000, clock) });
    const first = await gate.acquire(IP);
    const controller = new AbortController();
    const second = gate.acquire(IP, controller.signal);
    const error = second.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    await flush();
    controller.abort(new Error("stop"));
    expect(String(await error)).toContain("stop");
    expect(gate.inFlight(IP)).toBe(1);
    first();
    expect(gate.inFlight(IP)).toBe(0);
  });

  it("gives its slot back when stopped while waiting for the delay", async () => {
    const clock = new ManualClock();
    const gate = new IpGate(1, { spacing: new IpSpacing(1_000, clock) });
    (await gate.acquire(IP))();
    const controller = new AbortController();
    const waiting = gate.acquire(IP, controller.signal).catch((error: unknown) => error);
    await flush();
    expect(gate.inFlight(IP)).toBe(1);
    controller.abort(new Error("stop"));
    expect(await waiting).toMatchObject({ message: "stop" });
    expect(gate.inFlight(IP)).toBe(0);
  });
});
