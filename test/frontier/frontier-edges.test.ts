import { afterEach, describe, expect, it, vi } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/frontier.js";
import type { QueuedUrl } from "../../src/storage/index.js";
import { dequeueOp, enqueueOp, outboxOp } from "../../src/storage/index.js";
import {
  deferred,
  type FrontierEnv,
  mustTake,
  openFrontierEnv,
  sharedFingerprinter,
  takeAll,
  urlsOf,
} from "./helpers.js";

// The parts of the Frontier the hand-over, retry and recovery code paths use (issue 19: these had no
// unit test, so mutation testing found them uncovered), and the edges of its window bookkeeping.

let env: FrontierEnv | undefined;

async function setUp(options: FrontierOptions = {}): Promise<FrontierEnv> {
  env = await openFrontierEnv(options);
  return env;
}

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function fingerprint(url: string): Promise<bigint> {
  return (await sharedFingerprinter()).fingerprint(url);
}

/** The rejection of `promise`, or undefined when it fulfils. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
}

describe("Frontier options", () => {
  it("accepts a window of one entry and names the bad value in its errors", async () => {
    const e = await setUp({ queueWindow: 1, maxWindowedHosts: 1 });
    for (const url of urlsOf("one.test", 0, 3)) e.frontier.add(url, 0, "one.test");
    expect(await takeAll(e.frontier, "one.test")).toEqual(urlsOf("one.test", 0, 3));
    const deps = {
      store: e.store,
      committer: e.committer,
      fingerprinter: await sharedFingerprinter(),
      onHostReady: () => {},
    };
    const badWindow = await rejectionOf(Frontier.open({ queueWindow: 0 }, deps));
    expect(isUbiError(badWindow, ErrorCode.InvalidArgument)).toBe(true);
    expect((badWindow as Error).message).toBe("queueWindow must be a positive integer, got 0");
    const badHosts = await rejectionOf(Frontier.open({ maxWindowedHosts: -2 }, deps));
    expect((badHosts as Error).message).toBe("maxWindowedHosts must be a positive integer, got -2");
  });
});

describe("Frontier questions about unknown hosts", () => {
  it("answers without creating the host", async () => {
    const { frontier } = await setUp();
    expect(frontier.recordIfKnown("none.test")).toBeUndefined();
    expect(frontier.waitingOf("none.test")).toBe(0);
    expect(frontier.needsFetchedCheck("none.test")).toBe(false);
    expect(frontier.peek("none.test", 5)).toEqual([]);
    expect(await frontier.drainHost("none.test")).toEqual([]);
    expect(await frontier.take("none.test")).toBeUndefined();
    expect([...frontier.knownHosts()]).toEqual([]);
    frontier.add("http://known.test/", 1, "known.test");
    expect(frontier.recordIfKnown("known.test")).toEqual({ nextSeq: 1, fetched: 0 });
    expect(frontier.recordIfKnown("known.test")).toBe(frontier.record("known.test"));
    expect(frontier.needsFetchedCheck("known.test")).toBe(false);
    expect([...frontier.knownHosts()]).toEqual(["known.test"]);
  });

  it("writes nothing for a host touched but never created", async () => {
    const e = await setUp();
    e.frontier.touch("ghost.test");
    await e.frontier.commit();
    await e.reopen();
    expect([...e.frontier.knownHosts()]).toEqual([]);
  });
});

describe("Frontier isEmpty", () => {
  it("is false while a URL is in flight, or waiting, even with nothing left to write", async () => {
    const { frontier } = await setUp();
    frontier.add("http://busy.test/", 0, "busy.test");
    await frontier.commit();
    expect(frontier.isEmpty).toBe(false); // waiting only
    const entry = await mustTake(frontier, "busy.test");
    await frontier.commit();
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([0, 1]);
    expect(frontier.isEmpty).toBe(false); // in flight only
    frontier.complete("busy.test", entry, { done: true, counted: true });
    await frontier.commit();
    expect(frontier.isEmpty).toBe(true);
  });
});

describe("Frontier entries with failed attempts", () => {
  it("keeps the attempts of a URL queued with some, and none for a fresh one", async () => {
    const e = await setUp();
    e.frontier.add("http://at.test/fresh", 1, "at.test");
    e.frontier.add("http://at.test/retried", 2, "at.test", { attempts: 3 });
    e.frontier.add("http://at.test/zero", 0, "at.test", { attempts: 0 });
    const fresh = await mustTake(e.frontier, "at.test");
    expect(fresh).toStrictEqual({ seq: 0, url: "http://at.test/fresh", depth: 1 });
    expect(await mustTake(e.frontier, "at.test")).toStrictEqual({
      seq: 1,
      url: "http://at.test/retried",
      depth: 2,
      attempts: 3,
    });
    expect(await mustTake(e.frontier, "at.test")).toStrictEqual({
      seq: 2,
      url: "http://at.test/zero",
      depth: 0,
    });
    // The same straight into a live window (the host is being visited), not read back from disk.
    e.frontier.add("http://at.test/live-zero", 0, "at.test", { attempts: 0 });
    e.frontier.add("http://at.test/live-retried", 1, "at.test", { attempts: 1 });
    expect(e.frontier.windowedUrls).toBe(2);
    expect(await mustTake(e.frontier, "at.test")).toStrictEqual({
      seq: 3,
      url: "http://at.test/live-zero",
      depth: 0,
    });
    expect(await mustTake(e.frontier, "at.test")).toStrictEqual({
      seq: 4,
      url: "http://at.test/live-retried",
      depth: 1,
      attempts: 1,
    });
  });

  it("retryLater puts the entry back first, with its attempts, durably", async () => {
    const e = await setUp();
    for (const url of urlsOf("rt.test", 0, 3)) e.frontier.add(url, 2, "rt.test");
    const first = await mustTake(e.frontier, "rt.test");
    expect(e.frontier.isTaken("rt.test", first)).toBe(true);
    expect(e.frontier.isTaken("rt.test", { ...first, seq: 1, url: "http://rt.test/p1" })).toBe(false);
    e.frontier.retryLater("rt.test", first, 2);
    expect(e.frontier.isTaken("rt.test", first)).toBe(false);
    expect([e.frontier.waitingUrls, e.frontier.inFlightUrls]).toEqual([3, 0]);
    expect(await mustTake(e.frontier, "rt.test")).toStrictEqual({
      seq: 0,
      url: "http://rt.test/p0",
      depth: 2,
      attempts: 2,
    });
    // Taken again and not completed: after a restart it is queued with its attempts, in its place.
    await e.frontier.commit();
    await e.reopen();
    expect(await mustTake(e.frontier, "rt.test")).toStrictEqual({
      seq: 0,
      url: "http://rt.test/p0",
      depth: 2,
      attempts: 2,
    });
    expect(await takeAll(e.frontier, "rt.test")).toEqual(urlsOf("rt.test", 1, 3));
  });

  it("keeps a sitemap mark and a lastmod with the entry, through a retry and a restart", async () => {
    const e = await setUp();
    e.frontier.add("http://sm.test/sitemap.xml", 0, "sm.test", { sitemap: true });
    e.frontier.add("http://sm.test/page", 1, "sm.test", { lastmod: "2026-11-27T10:00:00+00:00" });
    e.frontier.add("http://sm.test/for-other.xml", 0, "sm.test", {
      sitemap: true,
      sitemapFor: "other.test:8080",
    });
    const sitemap = await mustTake(e.frontier, "sm.test");
    expect(sitemap).toStrictEqual({ seq: 0, url: "http://sm.test/sitemap.xml", depth: 0, sitemap: true });
    e.frontier.retryLater("sm.test", sitemap, 1);
    await e.frontier.commit();
    await e.reopen();
    expect(await mustTake(e.frontier, "sm.test")).toStrictEqual({
      seq: 0,
      url: "http://sm.test/sitemap.xml",
      depth: 0,
      attempts: 1,
      sitemap: true,
    });
    expect(await mustTake(e.frontier, "sm.test")).toStrictEqual({
      seq: 1,
      url: "http://sm.test/page",
      depth: 1,
      lastmod: "2026-11-27T10:00:00+00:00",
    });
    expect(await mustTake(e.frontier, "sm.test")).toStrictEqual({
      seq: 2,
      url: "http://sm.test/for-other.xml",
      depth: 0,
      sitemap: true,
      sitemapFor: "other.test:8080",
    });
  });

  it("hands each drained URL to handOff as its dequeue is recorded, attempts included", async () => {
    const e = await setUp({ queueWindow: 2 });
    e.frontier.add("http://dr.test/a", 0, "dr.test");
    e.frontier.add("http://dr.test/b", 1, "dr.test", { attempts: 4 });
    e.frontier.add("http://dr.test/c", 2, "dr.test");
    const handed: QueuedUrl[] = [];
    const drained = await e.frontier.drainHost("dr.test", (entry) => {
      handed.push(entry);
      expect(e.committer.pendingOps).toBe(handed.length - 1);
    });
    const expected = [
      { url: "http://dr.test/a", depth: 0 },
      { url: "http://dr.test/b", depth: 1, attempts: 4 },
      { url: "http://dr.test/c", depth: 2 },
    ];
    expect(handed).toStrictEqual(expected);
    expect(drained).toStrictEqual(expected);
    expect(e.committer.pendingOps).toBe(3);
  });
});

describe("Frontier flights and quiesce", () => {
  it("tracks a URL as taken until it is completed or put back", async () => {
    const { frontier } = await setUp();
    for (const url of urlsOf("fl.test", 0, 2)) frontier.add(url, 0, "fl.test");
    const a = await mustTake(frontier, "fl.test");
    const b = await mustTake(frontier, "fl.test");
    expect([frontier.isTaken("fl.test", a), frontier.isTaken("fl.test", b)]).toEqual([true, true]);
    frontier.complete("fl.test", a, { done: true, counted: true });
    frontier.putBack("fl.test", b);
    expect([frontier.isTaken("fl.test", a), frontier.isTaken("fl.test", b)]).toEqual([false, false]);
  });

  it("returns true at once when nothing of the host is in flight, after writing every change", async () => {
    const { frontier, committer } = await setUp();
    frontier.add("http://other.test/", 0, "other.test");
    await mustTake(frontier, "other.test"); // another host's flight does not count
    frontier.add("http://qa.test/", 0, "qa.test");
    expect(committer.pendingOps).toBeGreaterThan(0);
    expect(await frontier.quiesce("qa.test", 10_000)).toBe(true);
    expect(committer.pendingOps).toBe(0);
  });

  it("waits for the host's URLs in flight to complete, not for other hosts'", async () => {
    const { frontier, committer } = await setUp();
    for (const url of urlsOf("qw.test", 0, 2)) frontier.add(url, 0, "qw.test");
    frontier.add("http://slow.test/", 0, "slow.test");
    await mustTake(frontier, "slow.test"); // never completed
    const a = await mustTake(frontier, "qw.test");
    const b = await mustTake(frontier, "qw.test");
    let answer: boolean | undefined;
    const quiet = frontier.quiesce("qw.test", 10_000).then((settled) => {
      answer = settled;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answer).toBeUndefined();
    frontier.complete("qw.test", a, { done: true, counted: true });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answer).toBeUndefined(); // b is still in flight
    frontier.putBack("qw.test", b);
    await quiet;
    expect(answer).toBe(true);
    expect(committer.pendingOps).toBe(0);
  });

  it("gives up after maxWaitMs and answers false, still writing the changes", async () => {
    const { frontier, committer } = await setUp();
    frontier.add("http://stuck.test/", 0, "stuck.test");
    await mustTake(frontier, "stuck.test");
    const started = Date.now();
    expect(await frontier.quiesce("stuck.test", 30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(committer.pendingOps).toBe(0);
  });
});

describe("Frontier flights of a URL taken twice", () => {
  it("waits for both copies of a URL handed away and back while its first copy was in flight", async () => {
    const { frontier } = await setUp();
    const url = "http://twice.test/";
    frontier.add(url, 0, "twice.test");
    const first = await mustTake(frontier, "twice.test");
    // Handed to another agent meanwhile, then back: queued again, and taken while the first is in flight.
    frontier.markSentAway(await fingerprint(url));
    expect(frontier.add(url, 0, "twice.test")).toBe(true);
    const second = await mustTake(frontier, "twice.test");
    expect(second.url).toBe(url);
    expect(frontier.inFlightUrls).toBe(2);
    frontier.complete("twice.test", first, { done: true, counted: true });
    // The second copy is still in flight: the host is not quiet; the first copy is no longer taken.
    expect(frontier.isTaken("twice.test", first)).toBe(false);
    expect(frontier.isTaken("twice.test", second)).toBe(true);
    expect(await frontier.quiesce("twice.test", 20)).toBe(false);
    frontier.complete("twice.test", second, { done: true, counted: false });
    expect(frontier.isTaken("twice.test", second)).toBe(false);
    expect(frontier.inFlightUrls).toBe(0);
    expect(await frontier.quiesce("twice.test", 20)).toBe(true);
  });
});

describe("Frontier adopt (a host handed over by another agent)", () => {
  it("records the done URLs as seen and done, and counts the ones new here", async () => {
    const e = await setUp();
    for (const url of urlsOf("ad.test", 0, 2)) e.frontier.add(url, 0, "ad.test");
    const doneHere = await fingerprint("http://ad.test/p0");
    const doneThere = await fingerprint("http://ad.test/elsewhere");
    expect(e.frontier.seen.size).toBe(2);
    expect(e.frontier.adopt("ad.test", { done: [doneHere, doneThere], pagesFetched: 0 })).toBe(1);
    expect(e.frontier.seen.size).toBe(3);
    expect(e.frontier.add("http://ad.test/elsewhere", 0, "ad.test")).toBe(false);
    // URLs queued here that were done there are checked before their fetch.
    expect(e.frontier.needsFetchedCheck("ad.test")).toBe(true);
    await e.frontier.commit();
    expect(
      await e.frontier.wasFetched(["http://ad.test/p0", "http://ad.test/elsewhere", "http://ad.test/p1"]),
    ).toEqual([true, true, false]);
    expect((await e.frontier.doneOf("ad.test", 0, 10)).sort()).toEqual([doneHere, doneThere].sort());
    expect(await e.frontier.doneOf("ad.test", 0, 1)).toHaveLength(1);
    expect(await e.frontier.doneOf("ad.test", 2, 10)).toEqual([]);
    expect(await e.frontier.doneOf("other.test", 0, 10)).toEqual([]);
    // All of it durable: the seen set, the done set and the recheck flag.
    await e.reopen();
    expect(e.frontier.seen.size).toBe(3);
    expect(e.frontier.add("http://ad.test/elsewhere", 0, "ad.test")).toBe(false);
    expect(e.frontier.needsFetchedCheck("ad.test")).toBe(true);
    expect(e.frontier.record("ad.test")).toStrictEqual({ nextSeq: 2, fetched: 0 });
    expect(await e.frontier.wasFetched(["http://ad.test/elsewhere"])).toEqual([true]);
  });

  it("marks the queue for checking only when done URLs come and URLs are waiting", async () => {
    const e = await setUp();
    const done = [await fingerprint("http://x.test/done")];
    e.frontier.add("http://wait.test/", 0, "wait.test");
    e.frontier.adopt("wait.test", { done: [], pagesFetched: 1 });
    expect(e.frontier.needsFetchedCheck("wait.test")).toBe(false);
    e.frontier.adopt("idle.test", { done, pagesFetched: 0 });
    expect(e.frontier.needsFetchedCheck("idle.test")).toBe(false);
    e.frontier.adopt("wait.test", { done, pagesFetched: 0 });
    expect(e.frontier.needsFetchedCheck("wait.test")).toBe(true);
    // The flag survives a restart with the record; a host without it comes back without it.
    e.frontier.add("http://plain.test/", 0, "plain.test");
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.needsFetchedCheck("wait.test")).toBe(true);
    expect(e.frontier.needsFetchedCheck("plain.test")).toBe(false);
    expect(e.frontier.needsFetchedCheck("idle.test")).toBe(false);
    expect(e.frontier.record("wait.test")).toStrictEqual({ nextSeq: 1, fetched: 1 });
  });

  it("keeps the larger page count and the first reason to give the host up", async () => {
    const e = await setUp();
    e.frontier.adopt("pg.test", { done: [], pagesFetched: 5 });
    expect(e.frontier.record("pg.test")).toStrictEqual({ nextSeq: 0, fetched: 5 });
    e.frontier.adopt("pg.test", { done: [], pagesFetched: 3, abandoned: "robots-unavailable" });
    expect(e.frontier.record("pg.test")).toStrictEqual({
      nextSeq: 0,
      fetched: 5,
      abandoned: "robots-unavailable",
    });
    e.frontier.adopt("pg.test", { done: [], pagesFetched: 9, abandoned: "too-many-errors" });
    expect(e.frontier.record("pg.test")).toStrictEqual({
      nextSeq: 0,
      fetched: 9,
      abandoned: "robots-unavailable",
    });
    e.frontier.adopt("fresh.test", { done: [], pagesFetched: 0 });
    expect(e.frontier.record("fresh.test")).toStrictEqual({ nextSeq: 0, fetched: 0 });
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.record("pg.test")).toStrictEqual({
      nextSeq: 0,
      fetched: 9,
      abandoned: "robots-unavailable",
    });
  });
});

describe("Frontier recovery from the store", () => {
  it("rebuilds the record of a queue whose host record is missing", async () => {
    const e = await setUp();
    await e.store.write([
      enqueueOp("orphan.test", 5, { url: "http://orphan.test/a", depth: 1 }),
      enqueueOp("orphan.test", 6, { url: "http://orphan.test/b", depth: 2 }),
    ]);
    await e.reopen();
    expect(e.frontier.waitingOf("orphan.test")).toBe(2);
    expect(e.frontier.record("orphan.test")).toStrictEqual({ nextSeq: 7, fetched: 0 });
    expect(e.frontier.hostsWithWork()).toEqual(["orphan.test"]);
    e.frontier.add("http://orphan.test/c", 0, "orphan.test");
    expect(await takeAll(e.frontier, "orphan.test")).toEqual([
      "http://orphan.test/a",
      "http://orphan.test/b",
      "http://orphan.test/c",
    ]);
  });

  it("fails a take with StorageFailed when the queue on disk is shorter than its count", async () => {
    const e = await setUp();
    for (const url of urlsOf("short.test", 0, 2)) e.frontier.add(url, 0, "short.test");
    await e.frontier.commit();
    // Behind the frontier's back: the entries vanish from the store.
    await e.store.write([dequeueOp("short.test", 0), dequeueOp("short.test", 1)]);
    const error = await rejectionOf(e.frontier.take("short.test"));
    expect(isUbiError(error, ErrorCode.StorageFailed)).toBe(true);
    expect((error as Error).message).toBe("queue of short.test is shorter on disk than its count says");
  });
});

describe("Frontier windows, at their bounds", () => {
  it("grows a live window up to queueWindow entries only; the rest waits on disk", async () => {
    const { frontier } = await setUp({ queueWindow: 2 });
    frontier.add("http://g.test/p0", 0, "g.test");
    await mustTake(frontier, "g.test"); // the window is loaded (and live, now empty)
    expect(frontier.windowedUrls).toBe(0);
    for (const url of urlsOf("g.test", 1, 6)) frontier.add(url, 0, "g.test");
    expect(frontier.windowedUrls).toBe(2);
    expect(frontier.peek("g.test", 10)).toEqual(urlsOf("g.test", 1, 3));
    expect(await takeAll(frontier, "g.test")).toEqual(urlsOf("g.test", 1, 6));
  });

  it("hands out each entry once to two takes loading the same window", async () => {
    const { frontier } = await setUp({ queueWindow: 4 });
    for (const url of urlsOf("two.test", 0, 3)) frontier.add(url, 0, "two.test");
    const [a, b] = await Promise.all([frontier.take("two.test"), frontier.take("two.test")]);
    // Which of the two resolves first depends on LevelDB's read order (it differed on Node 22): each
    // gets one of the first two entries, neither gets both.
    expect([a?.url, b?.url].sort()).toEqual(["http://two.test/p0", "http://two.test/p1"]);
    expect(await takeAll(frontier, "two.test")).toEqual(["http://two.test/p2"]);
  });

  it("evicts only as many idle windows as the bound needs, oldest first", async () => {
    const { frontier } = await setUp({ queueWindow: 3, maxWindowedHosts: 2 });
    for (const host of ["a.test", "b.test", "c.test"]) {
      for (const url of urlsOf(host, 0, 5)) frontier.add(url, 0, host);
    }
    for (const host of ["a.test", "b.test", "c.test"]) {
      const entry = await mustTake(frontier, host);
      frontier.complete(host, entry, { done: true, counted: true });
    }
    // a.test's window went; b.test's and c.test's (two entries left each) stay.
    expect(frontier.peek("a.test", 5)).toEqual([]);
    expect(frontier.peek("b.test", 5)).toEqual(urlsOf("b.test", 1, 3));
    expect(frontier.windowedUrls).toBe(4);
  });

  it("keeps counting the window of a host with a URL in flight, past the bound", async () => {
    const { frontier } = await setUp({ queueWindow: 4, maxWindowedHosts: 1 });
    for (const host of ["busy.test", "x.test"])
      for (const url of urlsOf(host, 0, 6)) frontier.add(url, 0, host);
    await mustTake(frontier, "busy.test");
    await mustTake(frontier, "x.test");
    expect(frontier.peek("busy.test", 5)).toEqual(urlsOf("busy.test", 1, 4));
    expect(frontier.windowedUrls).toBe(6);
  });

  it("evicts the window of a host whose every taken URL was put back", async () => {
    const { frontier } = await setUp({ queueWindow: 4, maxWindowedHosts: 1 });
    for (const host of ["back.test", "y.test"])
      for (const url of urlsOf(host, 0, 6)) frontier.add(url, 0, host);
    const entry = await mustTake(frontier, "back.test");
    frontier.putBack("back.test", entry);
    await mustTake(frontier, "y.test");
    expect(frontier.peek("back.test", 5)).toEqual([]);
    expect(frontier.windowedUrls).toBe(3);
    expect(await takeAll(frontier, "back.test")).toEqual(urlsOf("back.test", 0, 6));
  });
});

describe("Frontier take racing a drain and an eviction", () => {
  it("hands out no drained URL when the loading host is evicted and drained before its read returns", async () => {
    const e = await setUp({ queueWindow: 2, maxWindowedHosts: 1 });
    for (const url of urlsOf("h.test", 0, 6)) e.frontier.add(url, 0, "h.test");
    for (const url of urlsOf("x.test", 0, 3)) e.frontier.add(url, 0, "x.test");
    // h.test's first window (p0, p1) is taken and completed: its window is loaded, empty, nothing in flight.
    for (const url of urlsOf("h.test", 0, 2)) {
      const entry = await mustTake(e.frontier, "h.test");
      expect(entry.url).toBe(url);
      e.frontier.complete("h.test", entry, { done: true, counted: true });
    }
    await e.frontier.commit();
    // The next take of h.test reads its second window from disk; the reply is held until released.
    const readDone = deferred<void>();
    const release = deferred<void>();
    const realRange = e.store.range.bind(e.store);
    let held = false;
    vi.spyOn(e.store, "range").mockImplementation((range) => {
      const reader = realRange(range);
      if (range.name !== "q" || held) return reader;
      held = true;
      // The queue's range, whose next read of entries is held.
      return new Proxy(reader, {
        get: (target, name) => {
          if (name !== "getMany") {
            const value: unknown = Reflect.get(target, name, target);
            return typeof value === "function" ? value.bind(target) : value;
          }
          return async (keys: string[]) => {
            const values = await target.getMany(keys);
            readDone.resolve();
            await release.promise;
            return values;
          };
        },
      });
    });
    const loading = e.frontier.take("h.test");
    await readDone.promise;
    // Meanwhile x.test loads a window past the bound of one: h.test's (empty) window is evicted ...
    const x = await mustTake(e.frontier, "x.test");
    expect(x.url).toBe("http://x.test/p0");
    // ... and h.test is handed to another agent: every waiting URL of it goes.
    const handed: string[] = [];
    const drained = await e.frontier.drainHost("h.test", (entry) => handed.push(entry.url));
    expect(handed).toEqual(urlsOf("h.test", 2, 6));
    expect(drained.map((entry) => entry.url)).toEqual(handed);
    release.resolve();
    // The window read before the drain is stale: the take hands out nothing, so no URL is fetched twice.
    const taken = await loading;
    expect({
      taken: taken?.url,
      waitingOfHost: e.frontier.waitingOf("h.test"),
      waiting: e.frontier.waitingUrls,
      inFlight: e.frontier.inFlightUrls,
    }).toEqual({ taken: undefined, waitingOfHost: 0, waiting: 2, inFlight: 1 });
    expect(e.frontier.hostsWithWork()).toEqual(["x.test"]);
    expect(await e.frontier.take("h.test")).toBeUndefined();
    // The host comes back later: a new URL of it is queued, reported ready and taken as usual.
    e.ready.length = 0;
    expect(e.frontier.add("http://h.test/new", 0, "h.test")).toBe(true);
    expect(e.ready).toEqual(["h.test"]);
    expect([e.frontier.waitingOf("h.test"), e.frontier.waitingUrls]).toEqual([1, 3]);
    const fresh = await mustTake(e.frontier, "h.test");
    expect(fresh.url).toBe("http://h.test/new");
    e.frontier.complete("h.test", fresh, { done: true, counted: true });
    expect(await e.frontier.take("h.test")).toBeUndefined();
    expect([e.frontier.waitingUrls, e.frontier.inFlightUrls]).toEqual([2, 1]);
    // Durably so: after a restart nothing of h.test is queued; x.test's URL in flight is waiting again.
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.waitingOf("h.test")).toBe(0);
    expect(e.frontier.record("h.test")).toStrictEqual({ nextSeq: 7, fetched: 3 });
    expect(await takeAll(e.frontier, "x.test")).toEqual(urlsOf("x.test", 0, 3));
  });
});

describe("URLs handed away", () => {
  it("are remembered as sent away, across a restart through the outbox", async () => {
    const e = await setUp();
    const url = "http://away.test/x";
    const fp = await fingerprint(url);
    expect(e.frontier.wasSentAway(fp)).toBe(false);
    e.frontier.markSentAway(fp);
    expect(e.frontier.wasSentAway(fp)).toBe(true);
    expect(e.frontier.wasSentAway(await fingerprint("http://away.test/y"))).toBe(false);
    await e.store.write([outboxOp("peer-1", fp, { url, depth: 0 })]);
    await e.reopen();
    expect(e.frontier.wasSentAway(fp)).toBe(true);
  });
});
