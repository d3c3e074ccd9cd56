import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { IpGate } from "../../src/frontier/ip-gate.js";
import { IpSpacing } from "../../src/frontier/ip-spacing.js";
import { ManualClock } from "../support/manual-clock.js";
import { flush } from "./helpers.js";

/** Starts an acquire and records when (in which order) it is granted. */
function acquireTracked(
  gate: IpGate,
  ip: string,
  name: string,
  granted: string[],
  signal?: AbortSignal,
): { release: Promise<() => void>; error: Promise<unknown> } {
  const release = gate.acquire(ip, signal);
  release.then(
    () => granted.push(name),
    () => {},
  );
  return {
    release,
    error: release.then(
      () => undefined,
      (reason: unknown) => reason,
    ),
  };
}

describe("IpGate", () => {
  it("rejects a limit that is not a positive integer", () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        new IpGate(limit);
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
    }
    expect(new IpGate(3).maxPerIp).toBe(3);
  });

  it("lets maxPerIp requests through at once and holds the next one until a release", async () => {
    const gate = new IpGate(2);
    const granted: string[] = [];
    const a = acquireTracked(gate, "10.0.0.1", "a", granted);
    const b = acquireTracked(gate, "10.0.0.1", "b", granted);
    const c = acquireTracked(gate, "10.0.0.1", "c", granted);
    await flush();
    expect(granted).toEqual(["a", "b"]);
    expect(gate.inFlight("10.0.0.1")).toBe(2);
    (await a.release)();
    await flush();
    expect(granted).toEqual(["a", "b", "c"]);
    expect(gate.inFlight("10.0.0.1")).toBe(2); // the slot went straight to c
    (await b.release)();
    (await c.release)();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
  });

  it("counts each IP on its own", async () => {
    const gate = new IpGate(1);
    const granted: string[] = [];
    acquireTracked(gate, "10.0.0.1", "a", granted);
    acquireTracked(gate, "10.0.0.2", "b", granted);
    acquireTracked(gate, "::1", "c", granted);
    acquireTracked(gate, "10.0.0.1", "d", granted);
    await flush();
    expect(granted).toEqual(["a", "b", "c"]);
    expect([gate.inFlight("10.0.0.1"), gate.inFlight("10.0.0.2"), gate.inFlight("10.0.0.3")]).toEqual([
      1, 1, 0,
    ]);
  });

  it("hands slots to waiters first come, first served, and newcomers queue behind them", async () => {
    const gate = new IpGate(1);
    const granted: string[] = [];
    const holder = acquireTracked(gate, "10.0.0.1", "holder", granted);
    const waiters = ["w1", "w2", "w3"].map((name) => acquireTracked(gate, "10.0.0.1", name, granted));
    await flush();
    (await holder.release)();
    // Arrives after the release but before w1 ran: must not overtake w2 and w3.
    const late = acquireTracked(gate, "10.0.0.1", "late", granted);
    await flush();
    expect(granted).toEqual(["holder", "w1"]);
    for (const waiter of waiters) {
      (await waiter.release)();
      await flush();
    }
    expect(granted).toEqual(["holder", "w1", "w2", "w3", "late"]);
    (await late.release)();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
  });

  it("removes a waiter whose signal aborts, rejecting it with the signal's reason", async () => {
    const gate = new IpGate(1);
    const granted: string[] = [];
    const holder = acquireTracked(gate, "10.0.0.1", "holder", granted);
    const controller = new AbortController();
    const aborted = acquireTracked(gate, "10.0.0.1", "aborted", granted, controller.signal);
    const next = acquireTracked(gate, "10.0.0.1", "next", granted);
    await flush();
    const reason = new Error("visit stopped");
    controller.abort(reason);
    expect(await aborted.error).toBe(reason);
    (await holder.release)();
    await flush();
    // The slot skipped the aborted waiter.
    expect(granted).toEqual(["holder", "next"]);
    expect(gate.inFlight("10.0.0.1")).toBe(1);
    (await next.release)();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
    // Aborting after the grant changes nothing.
    const other = new AbortController();
    const release = await gate.acquire("10.0.0.1", other.signal);
    other.abort();
    expect(gate.inFlight("10.0.0.1")).toBe(1);
    release();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
  });

  it("rejects at once a waiter whose signal is already aborted", async () => {
    const gate = new IpGate(1);
    const granted: string[] = [];
    const holder = acquireTracked(gate, "10.0.0.1", "holder", granted);
    const reason = new Error("already stopped");
    const late = acquireTracked(gate, "10.0.0.1", "late", granted, AbortSignal.abort(reason));
    expect(await late.error).toBe(reason);
    (await holder.release)();
    await flush();
    expect(granted).toEqual(["holder"]);
    expect(gate.inFlight("10.0.0.1")).toBe(0);
    // Even with a free slot: an aborted caller takes none.
    await expect(gate.acquire("10.0.0.9", AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(gate.inFlight("10.0.0.9")).toBe(0);
  });

  it("ignores a second release of the same slot", async () => {
    const gate = new IpGate(2);
    const granted: string[] = [];
    const a = acquireTracked(gate, "10.0.0.1", "a", granted);
    const b = acquireTracked(gate, "10.0.0.1", "b", granted);
    const c = acquireTracked(gate, "10.0.0.1", "c", granted);
    const d = acquireTracked(gate, "10.0.0.1", "d", granted);
    await flush();
    const releaseA = await a.release;
    releaseA();
    releaseA(); // must not hand a second slot to d
    await flush();
    expect(granted).toEqual(["a", "b", "c"]);
    expect(gate.inFlight("10.0.0.1")).toBe(2);
    (await b.release)();
    await flush();
    expect(granted).toEqual(["a", "b", "c", "d"]);
    const releaseC = await c.release;
    releaseC();
    releaseC();
    releaseC();
    expect(gate.inFlight("10.0.0.1")).toBe(1);
    (await d.release)();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
  });
});

describe("IpGate.tryAcquire: a slot now, or nothing taken", () => {
  it("takes a free slot at once and counts it as acquire would; undefined once the address is full", async () => {
    const gate = new IpGate(2);
    const first = gate.tryAcquire("10.0.0.1");
    const second = gate.tryAcquire("10.0.0.1");
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(gate.tryAcquire("10.0.0.1")).toBeUndefined();
    expect(gate.inFlight("10.0.0.1")).toBe(2);
    expect(gate.tryAcquire("10.0.0.2")).toBeDefined();
    // A waiter in line gets the slot a try took, when it is given back, before any new try.
    const granted: string[] = [];
    const waiting = acquireTracked(gate, "10.0.0.1", "w", granted);
    first?.();
    await flush();
    expect(granted).toEqual(["w"]);
    expect(gate.tryAcquire("10.0.0.1")).toBeUndefined();
    second?.();
    (await waiting.release)();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
  });

  it("takes nothing while the address's spacing asks for a wait, or a request there is not written yet", () => {
    const clock = new ManualClock();
    const gate = new IpGate(2, { spacing: new IpSpacing(100, clock) });
    const first = gate.tryAcquire("10.0.0.1");
    expect(first).toBeDefined();
    // Its turn came, not written yet: the next start waits for it.
    expect(gate.tryAcquire("10.0.0.1")).toBeUndefined();
    expect(first?.sent()).toBe(true);
    clock.advance(99);
    expect(gate.tryAcquire("10.0.0.1")).toBeUndefined();
    expect(gate.inFlight("10.0.0.1")).toBe(1);
    clock.advance(1);
    expect(gate.tryAcquire("10.0.0.1")).toBeDefined();
    expect(gate.inFlight("10.0.0.1")).toBe(2);
  });
});

describe("IpGate edges (issue 19: mutation survivors)", () => {
  it("names the bad limit in its error", () => {
    expect(() => new IpGate(0)).toThrow("max requests per IP must be a positive integer, got 0");
  });

  it("leaves no abort listener behind on a signal shared by many waits", async () => {
    const gate = new IpGate(1);
    const controller = new AbortController();
    const { signal } = controller;
    const listeners = () => getEventListeners(signal, "abort").length;
    const holder = await gate.acquire("10.0.0.1", signal);
    expect(listeners()).toBe(0); // a free slot: no wait, no listener
    const granted: string[] = [];
    const waiter = acquireTracked(gate, "10.0.0.1", "waiter", granted, signal);
    await flush();
    expect(listeners()).toBe(1);
    holder();
    await flush();
    expect(granted).toEqual(["waiter"]);
    expect(listeners()).toBe(0); // removed at the grant
    // A waiter removed by the abort leaves none either.
    const aborted = acquireTracked(gate, "10.0.0.1", "aborted", granted, signal);
    await flush();
    expect(listeners()).toBe(1);
    controller.abort(new Error("stop"));
    expect(await aborted.error).toBeInstanceOf(Error);
    expect(listeners()).toBe(0);
    (await waiter.release)();
    expect(gate.inFlight("10.0.0.1")).toBe(0);
  });
});
