import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { DEFAULT_QUEUE_WINDOW, Frontier } from "../../src/frontier/frontier.js";
import { GroupCommit } from "../../src/storage/group-commit.js";
import {
  type FrontierEnv,
  mustTake,
  openFrontierEnv,
  sharedFingerprinter,
  takeAll,
  urlsOf,
} from "./helpers.js";

let env: FrontierEnv | undefined;

async function setUp(queueWindow?: number): Promise<FrontierEnv> {
  env = await openFrontierEnv(queueWindow === undefined ? {} : { queueWindow });
  return env;
}

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("Frontier add and take", () => {
  it("queues a URL once, however often it is added", async () => {
    const { frontier } = await setUp();
    expect(frontier.add("http://a.test/", 0, "a.test")).toBe(true);
    expect(frontier.add("http://a.test/", 3, "a.test")).toBe(false);
    expect(frontier.add("http://a.test/x", 1, "a.test")).toBe(true);
    expect(frontier.waitingUrls).toBe(2);
    expect(frontier.waitingOf("a.test")).toBe(2);
    expect(frontier.seen.size).toBe(2);
    const first = await mustTake(frontier, "a.test");
    expect(first).toMatchObject({ url: "http://a.test/", depth: 0 });
    // Taken (and even completed) URLs stay seen.
    expect(frontier.add("http://a.test/", 0, "a.test")).toBe(false);
    frontier.complete("a.test", first, { done: true, counted: true });
    expect(frontier.add("http://a.test/", 0, "a.test")).toBe(false);
  });

  it("serves each host first in, first out, hosts independent of each other", async () => {
    const { frontier } = await setUp();
    const hosts = ["a.test", "a.test:8080", "b.test"];
    for (let i = 0; i < 10; i++) {
      for (const host of hosts) frontier.add(`http://${host}/p${i}`, i % 3, host);
    }
    expect(frontier.waitingUrls).toBe(30);
    const taken = await takeAll(frontier, "a.test:8080");
    expect(taken).toEqual(urlsOf("a.test:8080", 0, 10));
    expect(await takeAll(frontier, "b.test")).toEqual(urlsOf("b.test", 0, 10));
    expect(await takeAll(frontier, "a.test")).toEqual(urlsOf("a.test", 0, 10));
    expect(await frontier.take("a.test")).toBeUndefined();
    expect(await frontier.take("never.test")).toBeUndefined();
  });

  it("gives out entries with their depth and increasing sequence numbers", async () => {
    const { frontier } = await setUp();
    frontier.add("http://d.test/a", 0, "d.test");
    frontier.add("http://d.test/b", 4, "d.test");
    const a = await mustTake(frontier, "d.test");
    const b = await mustTake(frontier, "d.test");
    expect(a).toEqual({ seq: 0, url: "http://d.test/a", depth: 0 });
    expect(b).toEqual({ seq: 1, url: "http://d.test/b", depth: 4 });
    expect(frontier.record("d.test").nextSeq).toBe(2);
  });

  it("yields every URL in order with a window much smaller than the queue", async () => {
    const { frontier } = await setUp(4);
    for (const url of urlsOf("w.test", 0, 50)) frontier.add(url, 0, "w.test");
    expect(frontier.waitingOf("w.test")).toBe(50);
    expect(await takeAll(frontier, "w.test")).toEqual(urlsOf("w.test", 0, 50));
    expect(frontier.waitingUrls).toBe(0);
    expect(frontier.inFlightUrls).toBe(50);
  });

  it("keeps order when URLs are added while the window is partly taken", async () => {
    const { frontier } = await setUp(4);
    const expected: string[] = [];
    const taken: string[] = [];
    let next = 0;
    const addSome = (n: number) => {
      for (let k = 0; k < n; k++, next++) {
        const url = `http://w.test/p${next}`;
        frontier.add(url, 0, "w.test");
        expected.push(url);
      }
    };
    const takeSome = async (n: number) => {
      for (let k = 0; k < n; k++) {
        const entry = await frontier.take("w.test");
        if (entry) taken.push(entry.url);
      }
    };
    // A mix of window states: partial, full, overflowing, drained, refilled from disk.
    addSome(2);
    await takeSome(1);
    addSome(3); // fits the window: 1 left + 3
    addSome(6); // overflows to disk only
    await takeSome(5);
    addSome(1);
    await takeSome(2);
    addSome(9);
    await takeSome(20); // more than waiting: drains the queue
    addSome(1); // the queue was empty: straight into the window again
    addSome(7);
    await takeSome(3);
    addSome(2);
    await takeSome(100);
    expect(taken).toEqual(expected);
    expect(frontier.waitingUrls).toBe(0);
    expect(frontier.inFlightUrls).toBe(expected.length);
  });

  it("returns a put-back entry first, before later ones", async () => {
    const { frontier } = await setUp(2);
    for (const url of urlsOf("p.test", 0, 5)) frontier.add(url, 0, "p.test");
    const first = await mustTake(frontier, "p.test");
    const second = await mustTake(frontier, "p.test");
    expect(frontier.inFlightUrls).toBe(2);
    frontier.putBack("p.test", second);
    frontier.putBack("p.test", first);
    expect(frontier.waitingUrls).toBe(5);
    expect(frontier.inFlightUrls).toBe(0);
    expect(await takeAll(frontier, "p.test")).toEqual(urlsOf("p.test", 0, 5));
  });

  it("puts back into a window that had run dry, then goes on reading from disk", async () => {
    const { frontier } = await setUp(2);
    for (const url of urlsOf("p.test", 0, 6)) frontier.add(url, 0, "p.test");
    await frontier.take("p.test");
    const second = await mustTake(frontier, "p.test"); // window now empty, 4 still on disk
    frontier.putBack("p.test", second);
    expect(await takeAll(frontier, "p.test")).toEqual(urlsOf("p.test", 1, 6));
  });

  it("rejects a queueWindow that is not a positive integer", async () => {
    const { store } = await setUp();
    const fingerprinter = await sharedFingerprinter();
    for (const queueWindow of [0, -1, 1.5, Number.NaN]) {
      const error = await Frontier.open(
        { queueWindow },
        { store, committer: new GroupCommit(async () => {}), fingerprinter, onHostReady: () => {} },
      ).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
    }
    expect(DEFAULT_QUEUE_WINDOW).toBe(256);
  });
});

describe("Frontier counters and host readiness", () => {
  it("reports a host ready only when it goes from no waiting URL to some", async () => {
    const { frontier, ready } = await setUp();
    frontier.add("http://a.test/1", 0, "a.test");
    frontier.add("http://a.test/2", 0, "a.test");
    frontier.add("http://b.test/1", 0, "b.test");
    frontier.add("http://a.test/1", 0, "a.test"); // duplicate: no change
    expect(ready).toEqual(["a.test", "b.test"]);
    const a1 = await mustTake(frontier, "a.test");
    expect(ready).toHaveLength(2); // still one waiting
    const a2 = await mustTake(frontier, "a.test");
    // a.test has nothing waiting (two in flight): the next add makes it ready again.
    frontier.add("http://a.test/3", 0, "a.test");
    expect(ready).toEqual(["a.test", "b.test", "a.test"]);
    frontier.add("http://a.test/4", 0, "a.test");
    frontier.complete("a.test", a1, { done: true, counted: true });
    frontier.complete("a.test", a2, { done: false, counted: false });
    expect(ready).toHaveLength(3);
  });

  it("keeps waitingUrls, inFlightUrls and isEmpty right through a URL's life", async () => {
    const e = await setUp();
    const { frontier } = e;
    expect(frontier.isEmpty).toBe(true);
    frontier.add("http://c.test/1", 0, "c.test");
    frontier.add("http://c.test/2", 0, "c.test");
    frontier.add("http://d.test/1", 0, "d.test");
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([3, 0]);
    expect(frontier.isEmpty).toBe(false);
    const c1 = await mustTake(frontier, "c.test");
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([2, 1]);
    const d1 = await mustTake(frontier, "d.test");
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([1, 2]);
    frontier.putBack("d.test", d1);
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([2, 1]);
    frontier.complete("c.test", c1, { done: true, counted: true });
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([2, 0]);
    for (const host of ["c.test", "d.test"]) {
      for (;;) {
        const entry = await frontier.take(host);
        if (!entry) break;
        frontier.complete(host, entry, { done: true, counted: true });
      }
    }
    expect([frontier.waitingUrls, frontier.inFlightUrls]).toEqual([0, 0]);
    // Completions not yet written keep the frontier from being empty.
    expect(frontier.isEmpty).toBe(false);
    await frontier.commit();
    expect(frontier.isEmpty).toBe(true);
    expect(frontier.hostsWithWork()).toEqual([]);
    expect([...frontier.knownHosts()].sort()).toEqual(["c.test", "d.test"]);
  });

  it("counts fetches against the host record only when counted", async () => {
    const { frontier } = await setUp();
    for (const url of urlsOf("r.test", 0, 3)) frontier.add(url, 0, "r.test");
    const [a, b, c] = [
      await mustTake(frontier, "r.test"),
      await mustTake(frontier, "r.test"),
      await mustTake(frontier, "r.test"),
    ];
    frontier.complete("r.test", a, { done: true, counted: true });
    frontier.complete("r.test", b, { done: true, counted: false });
    frontier.complete("r.test", c, { done: false, counted: false });
    expect(frontier.record("r.test").fetched).toBe(1);
    await frontier.commit();
    expect(await frontier.wasFetched(urlsOf("r.test", 0, 3))).toEqual([true, true, false]);
  });

  it("answers wasFetched only for completed fetches once committed", async () => {
    const { frontier } = await setUp();
    frontier.add("http://f.test/a", 0, "f.test");
    frontier.add("http://f.test/b", 0, "f.test");
    const a = await mustTake(frontier, "f.test");
    await frontier.take("f.test"); // in flight, not fetched
    frontier.complete("f.test", a, { done: true, counted: true });
    expect(await frontier.wasFetched(["http://f.test/a"])).toEqual([false]); // not yet durable
    await frontier.commit();
    expect(await frontier.wasFetched(["http://f.test/b", "http://f.test/a", "http://never.test/"])).toEqual([
      false,
      true,
      false,
    ]);
    expect(await frontier.wasFetched([])).toEqual([]);
  });
});

describe("Frontier restart from the store", () => {
  it("resumes with exactly the URLs not completed, in order, taken-but-not-completed ones included", async () => {
    const e = await setUp(4);
    let { frontier } = e;
    for (const url of urlsOf("a.test", 0, 20)) frontier.add(url, 0, "a.test");
    for (const url of urlsOf("b.test", 0, 3)) frontier.add(url, 1, "b.test");
    // Complete a.test's p0..p4, take p5..p7 without completing.
    for (let i = 0; i < 5; i++) {
      const entry = await mustTake(frontier, "a.test");
      frontier.complete("a.test", entry, { done: true, counted: true });
    }
    for (let i = 0; i < 3; i++) await frontier.take("a.test");
    // b.test: all three done.
    for (let i = 0; i < 3; i++) {
      const entry = await mustTake(frontier, "b.test");
      frontier.complete("b.test", entry, { done: true, counted: i !== 1 });
    }
    frontier.record("a.test").abandoned = "robots-unavailable";
    frontier.touch("a.test");
    await frontier.commit();

    await e.reopen();
    frontier = e.frontier;
    expect(frontier.waitingUrls).toBe(15);
    expect(frontier.inFlightUrls).toBe(0);
    expect(frontier.hostsWithWork()).toEqual(["a.test"]);
    expect(frontier.record("a.test")).toEqual({ nextSeq: 20, fetched: 5, abandoned: "robots-unavailable" });
    expect(frontier.record("b.test")).toEqual({ nextSeq: 3, fetched: 2 });
    // The seen set came back: nothing already queued or fetched is queued again.
    expect(frontier.seen.size).toBe(23);
    for (const url of [...urlsOf("a.test", 0, 20), ...urlsOf("b.test", 0, 3)]) {
      expect(frontier.add(url, 0, url.includes("a.test") ? "a.test" : "b.test")).toBe(false);
    }
    expect(await frontier.wasFetched(urlsOf("a.test", 0, 8))).toEqual([
      ...Array<boolean>(5).fill(true),
      ...Array<boolean>(3).fill(false),
    ]);
    // New URLs go after the old ones, with fresh sequence numbers.
    expect(frontier.add("http://a.test/new", 0, "a.test")).toBe(true);
    const rest = [];
    for (;;) {
      const entry = await frontier.take("a.test");
      if (!entry) break;
      rest.push(entry);
    }
    expect(rest.map((r) => r.url)).toEqual([...urlsOf("a.test", 5, 20), "http://a.test/new"]);
    expect(rest.at(-1)?.seq).toBe(20);
  });

  it("reopens a frontier whose every queue is empty and appends after the old sequence numbers", async () => {
    const e = await setUp(4);
    for (const url of urlsOf("e.test", 0, 3)) e.frontier.add(url, 0, "e.test");
    for (let i = 0; i < 3; i++) {
      const entry = await mustTake(e.frontier, "e.test");
      e.frontier.complete("e.test", entry, { done: true, counted: true });
    }
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.isEmpty).toBe(true);
    expect(e.frontier.hostsWithWork()).toEqual([]);
    e.ready.length = 0;
    expect(e.frontier.add("http://e.test/later", 2, "e.test")).toBe(true);
    expect(e.ready).toEqual(["e.test"]);
    expect(await e.frontier.take("e.test")).toEqual({ seq: 3, url: "http://e.test/later", depth: 2 });
  });

  it("does not report hosts ready while loading; hostsWithWork lists them instead", async () => {
    const e = await setUp();
    e.frontier.add("http://x.test/", 0, "x.test");
    e.frontier.add("http://y.test/", 0, "y.test");
    await e.frontier.commit();
    e.ready.length = 0;
    await e.reopen();
    expect(e.ready).toEqual([]);
    expect(e.frontier.hostsWithWork().sort()).toEqual(["x.test", "y.test"]);
  });

  it("loses uncommitted changes on a crash but keeps the committed state complete", async () => {
    const e = await setUp(4);
    for (const url of urlsOf("k.test", 0, 10)) e.frontier.add(url, 0, "k.test");
    for (let i = 0; i < 4; i++) {
      const entry = await mustTake(e.frontier, "k.test");
      e.frontier.complete("k.test", entry, { done: true, counted: true });
    }
    await e.frontier.commit();
    // Taken before the adds: a take that refills the window from disk commits the buffer first.
    const fifth = await mustTake(e.frontier, "k.test");
    // After the last commit: more adds and a completion that never reach the disk.
    for (const url of urlsOf("k.test", 10, 15)) e.frontier.add(url, 0, "k.test");
    e.frontier.add("http://other.test/", 0, "other.test");
    e.frontier.complete("k.test", fifth, { done: true, counted: true });
    // The "crash": the store closes with the group commit's buffer unwritten.
    const lost = e.committer.pendingOps;
    expect(lost).toBeGreaterThan(0);
    await e.reopen();
    const { frontier } = e;
    expect(frontier.waitingUrls).toBe(6);
    expect(frontier.record("k.test")).toEqual({ nextSeq: 10, fetched: 4 });
    expect(await frontier.wasFetched(urlsOf("k.test", 0, 10))).toEqual([
      ...Array<boolean>(4).fill(true),
      ...Array<boolean>(6).fill(false),
    ]);
    // The uncommitted adds were never seen; the committed ones were.
    expect(frontier.add("http://k.test/p12", 0, "k.test")).toBe(true);
    expect(frontier.add("http://other.test/", 0, "other.test")).toBe(true);
    expect(frontier.add("http://k.test/p9", 0, "k.test")).toBe(false);
    expect(await takeAll(frontier, "k.test")).toEqual([...urlsOf("k.test", 4, 10), "http://k.test/p12"]);
  });
});

describe("Frontier hand-over of a host (drainHost, requeue, peek)", () => {
  it("drains every waiting URL in order, window and disk alike, leaving the in-flight ones", async () => {
    const e = await setUp(3);
    for (const url of urlsOf("g.test", 0, 10)) e.frontier.add(url, 1, "g.test");
    e.frontier.add("http://stay.test/", 0, "stay.test");
    const inFlight = await mustTake(e.frontier, "g.test");
    expect(e.frontier.peek("g.test", 5)).toEqual(urlsOf("g.test", 1, 3)); // memory only: the window
    const drained = await e.frontier.drainHost("g.test");
    expect(drained).toEqual(urlsOf("g.test", 1, 10).map((url) => ({ url, depth: 1 })));
    expect(e.frontier.waitingOf("g.test")).toBe(0);
    expect(e.frontier.waitingUrls).toBe(1);
    expect(e.frontier.inFlightUrls).toBe(1);
    expect(e.frontier.hostsWithWork()).toEqual(["stay.test"]);
    expect(await e.frontier.take("g.test")).toBeUndefined();
    expect(await e.frontier.drainHost("g.test")).toEqual([]);
    expect(e.frontier.peek("g.test", 5)).toEqual([]);
    // Drained URLs stay seen: this agent does not queue them again on its own.
    expect(e.frontier.add("http://g.test/p4", 0, "g.test")).toBe(false);
    await e.frontier.commit();
    await e.reopen();
    // Durable: only the URL that was in flight is still queued here.
    expect(e.frontier.waitingOf("g.test")).toBe(1);
    expect(await takeAll(e.frontier, "g.test")).toEqual([inFlight.url]);
  });

  it("makes a drain called while another is under way wait for it: its URLs are handed off on return", async () => {
    // A hand-over drains its host's queue before it looks whether what it handed off was acknowledged:
    // returning at once while the view's re-examination drains it would look too early.
    const { frontier } = await setUp(3);
    for (const url of urlsOf("d.test", 0, 4)) frontier.add(url, 0, "d.test");
    const first: string[] = [];
    const second: string[] = [];
    const under = frontier.drainHost("d.test", (entry) => first.push(entry.url));
    const again = frontier.drainHost("d.test", (entry) => second.push(entry.url));
    await again;
    expect(first).toEqual(urlsOf("d.test", 0, 4));
    expect(second).toEqual([]);
    expect(await under).toHaveLength(4);
    // Queued after: drained by the next call, which no drain holds up.
    frontier.add("http://d.test/later", 0, "d.test");
    await frontier.drainHost("d.test", (entry) => second.push(entry.url));
    expect(second).toEqual(["http://d.test/later"]);
    expect(frontier.waitingOf("d.test")).toBe(0);
  });

  it("drains a URL queued while it reads the store: none is left on disk that memory forgot", async () => {
    const e = await setUp(2);
    // No take yet: the queue's window is not loaded, so the drain reads the store.
    for (const url of urlsOf("w.test", 0, 6)) e.frontier.add(url, 0, "w.test");
    const handed: string[] = [];
    const drain = e.frontier.drainHost("w.test", (entry) => handed.push(entry.url));
    // Queued after the drain's commit began, before its read: in the commit buffer alone.
    expect(e.frontier.add("http://w.test/late", 0, "w.test")).toBe(true);
    await drain;
    expect(handed).toEqual([...urlsOf("w.test", 0, 6), "http://w.test/late"]);
    expect(e.frontier.waitingOf("w.test")).toBe(0);
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.waitingOf("w.test")).toBe(0);
    expect(e.frontier.hostsWithWork()).toEqual([]);
  });

  it("drains a URL put back while it reads the store, in its place at the head", async () => {
    const e = await setUp(2);
    for (const url of urlsOf("b.test", 0, 6)) e.frontier.add(url, 0, "b.test");
    // Taken: the window holds p1 and is incomplete, so the drain reads the store.
    const taken = await mustTake(e.frontier, "b.test");
    let writes = 0;
    e.committer.afterWrite(() => {
      // The drain's second commit (a URL came during its first read): its fetch could not go on.
      if (++writes === 2) e.frontier.putBack("b.test", taken);
    });
    const handed: string[] = [];
    const drain = e.frontier.drainHost("b.test", (entry) => handed.push(entry.url));
    e.frontier.add("http://b.test/late", 0, "b.test");
    await drain;
    expect(writes).toBeGreaterThanOrEqual(2);
    expect(handed).toEqual([...urlsOf("b.test", 0, 6), "http://b.test/late"]);
    expect(e.frontier.waitingOf("b.test")).toBe(0);
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.waitingOf("b.test")).toBe(0);
  });

  it("makes a take that raced with a drain hand out nothing twice", async () => {
    const { frontier } = await setUp(2);
    for (const url of urlsOf("r.test", 0, 6)) frontier.add(url, 0, "r.test");
    const taken = [await mustTake(frontier, "r.test"), await mustTake(frontier, "r.test")];
    // The window is empty: this take must read from disk, and a drain starts meanwhile.
    const racing = frontier.take("r.test");
    const drained = await frontier.drainHost("r.test");
    const third = await racing;
    const handedOut = [
      ...taken.map((t) => t.url),
      ...(third ? [third.url] : []),
      ...drained.map((d) => d.url),
    ];
    expect(handedOut.sort()).toEqual(urlsOf("r.test", 0, 6).sort());
    expect(frontier.waitingUrls).toBe(0);
    expect(frontier.inFlightUrls).toBe(taken.length + (third ? 1 : 0));
  });
});

describe("URLs handed to another agent", () => {
  it("come back when their host does, although seen before", async () => {
    const env = await openFrontierEnv();
    try {
      const { frontier } = env;
      const url = "http://back.test/page";
      expect(frontier.add(url, 0, "back.test")).toBe(true);
      const [entry] = await frontier.drainHost("back.test");
      expect(entry?.url).toBe(url);
      // Seen, not handed away: a repeat is dropped.
      expect(frontier.add(url, 0, "back.test")).toBe(false);
      frontier.markSentAway((await sharedFingerprinter()).fingerprint(url));
      expect(frontier.add(url, 0, "back.test")).toBe(true);
      expect(frontier.needsFetchedCheck("back.test")).toBe(true);
      // Once, however many agents send it back (a dead peer's outbox, each sender's link).
      expect(frontier.add(url, 0, "back.test")).toBe(false);
      expect(frontier.waitingUrls).toBe(1);
      expect(await mustTake(frontier, "back.test")).toMatchObject({ url });
    } finally {
      await env.dispose();
    }
  });

  it("may come back again after being handed away again", async () => {
    const env = await openFrontierEnv();
    try {
      const { frontier } = env;
      const url = "http://again.test/page";
      const fingerprint = (await sharedFingerprinter()).fingerprint(url);
      frontier.add(url, 0, "again.test");
      await frontier.drainHost("again.test");
      frontier.markSentAway(fingerprint);
      expect(frontier.add(url, 0, "again.test")).toBe(true);
      await frontier.drainHost("again.test");
      frontier.markSentAway(fingerprint);
      expect(frontier.add(url, 1, "again.test")).toBe(true);
      expect(frontier.add(url, 1, "again.test")).toBe(false);
      expect(frontier.waitingUrls).toBe(1);
    } finally {
      await env.dispose();
    }
  });
});
