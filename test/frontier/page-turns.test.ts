import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { PageTurns } from "../../src/frontier/index.js";

/** Lets granted turns' promises settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("PageTurns", () => {
  it("grants up to the limit at once, then hands freed turns to the longest queues first", async () => {
    const turns = new PageTurns(2);
    const first = await turns.acquire(1);
    const second = await turns.acquire(1);
    expect(turns.inUse).toBe(2);
    const order: string[] = [];
    const waiting = [
      ["small", 3],
      ["big", 6000],
      ["mid", 100],
      ["small2", 2],
    ] as const;
    const releases = new Map<string, () => void>();
    const granted = waiting.map(([name, queued]) =>
      turns.acquire(queued).then((release) => {
        order.push(name);
        releases.set(name, release);
      }),
    );
    await settle();
    expect(order).toEqual([]);
    expect(turns.waiting).toBe(4);
    first();
    first(); // a second call does nothing
    await settle();
    expect(order).toEqual(["big"]);
    expect(turns.inUse).toBe(2);
    second();
    await settle();
    releases.get("big")?.();
    await settle();
    releases.get("mid")?.();
    await settle();
    // Same class (2–3 URLs): first come, first served.
    expect(order).toEqual(["big", "mid", "small", "small2"]);
    await Promise.all(granted);
    expect(turns.waiting).toBe(0);
  });

  it("serves a waiting host before a newcomer even with a turn free: no overtaking from outside", async () => {
    const turns = new PageTurns(1);
    const held = await turns.acquire(1);
    const order: string[] = [];
    const waiter = turns.acquire(1).then((release) => {
      order.push("waiter");
      return release;
    });
    held();
    const newcomer = turns.acquire(5000).then((release) => {
      order.push("newcomer");
      return release;
    });
    (await waiter)();
    (await newcomer)();
    expect(order).toEqual(["waiter", "newcomer"]);
  });

  it("grants waiting hosts when the limit rises, and lets held turns end when it falls", async () => {
    const turns = new PageTurns(1);
    const held = await turns.acquire(1);
    let granted = 0;
    const waiters = [turns.acquire(1), turns.acquire(1)].map((p) =>
      p.then((release) => {
        granted++;
        return release;
      }),
    );
    turns.setLimit(3);
    const [a, b] = await Promise.all(waiters);
    expect(granted).toBe(2);
    expect(turns.takePeak()).toBe(3);
    turns.setLimit(1);
    held();
    a?.();
    expect(turns.inUse).toBe(1);
    expect(turns.takePeak()).toBe(3);
    // The peak restarts from the turns held now.
    expect(turns.takePeak()).toBe(1);
    let late = false;
    const next = turns.acquire(1).then((release) => {
      late = true;
      return release;
    });
    await settle();
    expect(late).toBe(false);
    b?.();
    (await next)();
    expect(late).toBe(true);
    expect(turns.inUse).toBe(0);
  });

  it("drops a waiter whose signal aborts, and refuses at once with an aborted signal", async () => {
    const turns = new PageTurns(1);
    const held = await turns.acquire(1);
    const controller = new AbortController();
    const aborted = turns.acquire(10, controller.signal);
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    expect(turns.waiting).toBe(0);
    await expect(turns.acquire(1, controller.signal)).rejects.toThrow("stop");
    held();
    expect(turns.inUse).toBe(0);
  });

  it("rejects a limit that is not a positive integer", () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        new PageTurns(limit);
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument), String(limit)).toBe(true);
    }
    expect(() => new PageTurns(1).setLimit(0)).toThrow(/positive integer/);
  });
});
