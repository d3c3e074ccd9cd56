import { describe, expect, it } from "vitest";
import { UnsyncedPages } from "../../src/agent/unsynced-pages.js";
import { deferred, flush } from "../frontier/helpers.js";

describe("UnsyncedPages", () => {
  it("refuses a limit under 1", () => {
    expect(() => new UnsyncedPages(0)).toThrow(RangeError);
    expect(() => new UnsyncedPages(1.5)).toThrow(/1\.5/);
  });

  it("lets the next fetch go while fewer than limit − 1 pages are finishing, and waits otherwise", async () => {
    const pages = new UnsyncedPages(2);
    await pages.waitForRoom();
    const first = deferred<void>();
    pages.add(first.promise);
    expect(pages.size).toBe(1);
    // One finishing + the one about to be fetched = 2: room.
    await pages.waitForRoom();
    const second = deferred<void>();
    pages.add(second.promise);
    let roomMade = false;
    void pages.waitForRoom().then(() => {
      roomMade = true;
    });
    await flush();
    expect(roomMade).toBe(false);
    first.resolve();
    await flush();
    expect(roomMade).toBe(true);
    expect(pages.size).toBe(1);
    second.resolve();
    await pages.drain();
    expect(pages.size).toBe(0);
  });

  it("with a limit of 1, waits for each page before the next fetch (the old chained behaviour)", async () => {
    const pages = new UnsyncedPages(1);
    const only = deferred<void>();
    pages.add(only.promise);
    let roomMade = false;
    void pages.waitForRoom().then(() => {
      roomMade = true;
    });
    await flush();
    expect(roomMade).toBe(false);
    only.resolve();
    await flush();
    expect(roomMade).toBe(true);
  });

  it("reports a page's failure once, at the next wait, and drain waits for every page", async () => {
    const pages = new UnsyncedPages(3);
    const failing = deferred<void>();
    const slow = deferred<void>();
    pages.add(failing.promise);
    pages.add(slow.promise);
    failing.reject(new Error("disk full"));
    await flush();
    await expect(pages.waitForRoom()).rejects.toThrow("disk full");
    await pages.waitForRoom();
    let drained = false;
    const draining = pages.drain().then(() => {
      drained = true;
    });
    await flush();
    expect(drained).toBe(false);
    slow.resolve();
    await draining;
    expect(drained).toBe(true);
  });
});
