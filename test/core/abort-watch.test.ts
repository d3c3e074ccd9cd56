import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { eitherAborted, watchAbort } from "../../src/abort-watch.js";
import { sleep, systemClock } from "../../src/clock.js";

describe("watchAbort", () => {
  it("calls each callback still watching once at the abort, through one listener on the signal", () => {
    const controller = new AbortController();
    const called: number[] = [];
    const unwatches = Array.from({ length: 1000 }, (_, i) =>
      watchAbort(controller.signal, () => called.push(i)),
    );
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    for (let i = 0; i < 1000; i += 2) unwatches[i]?.();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    unwatches[0]?.(); // a second call does nothing
    controller.abort();
    controller.abort();
    expect(called).toEqual(Array.from({ length: 500 }, (_, i) => 2 * i + 1));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("removes the signal's listener with its last watcher, and adds it again for the next", () => {
    const controller = new AbortController();
    const called: string[] = [];
    const first = watchAbort(controller.signal, () => called.push("first"));
    first();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    watchAbort(controller.signal, () => called.push("second"));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    first(); // stale: changes nothing
    controller.abort();
    expect(called).toEqual(["second"]);
  });

  it("keeps the signals apart", () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const called: string[] = [];
    watchAbort(a.signal, () => called.push("a"));
    watchAbort(b.signal, () => called.push("b"));
    b.abort();
    expect(called).toEqual(["b"]);
    a.abort();
    expect(called).toEqual(["b", "a"]);
  });

  it("lets sleep end early on the signal, and on time without it, watching no more after", async () => {
    const controller = new AbortController();
    await sleep(systemClock, 1, controller.signal);
    const asleep = sleep(systemClock, 60_000, controller.signal);
    controller.abort(new Error("stopped"));
    await expect(asleep).rejects.toThrow("stopped");
    await expect(sleep(systemClock, 1, controller.signal)).rejects.toThrow("stopped");
  });
});

describe("eitherAborted", () => {
  it("aborts with the reason of whichever signal aborts first, and at once when one has already", () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const either = eitherAborted(a.signal, b.signal);
    expect(either.signal.aborted).toBe(false);
    b.abort("paused");
    expect(either.signal.aborted).toBe(true);
    expect(either.signal.reason).toBe("paused");
    a.abort("stopped");
    expect(either.signal.reason).toBe("paused");
    expect(eitherAborted(a.signal, new AbortController().signal).signal.reason).toBe("stopped");
  });

  it("stops watching both signals once disposed", () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const either = eitherAborted(a.signal, b.signal);
    expect(getEventListeners(a.signal, "abort")).toHaveLength(1);
    either.dispose();
    expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
    expect(getEventListeners(b.signal, "abort")).toHaveLength(0);
    a.abort();
    expect(either.signal.aborted).toBe(false);
  });
});
