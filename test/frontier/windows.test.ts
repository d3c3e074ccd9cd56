import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/frontier.js";
import { HostQueue } from "../../src/frontier/host-queue.js";
import { HostTable } from "../../src/frontier/host-table.js";
import { GroupCommit } from "../../src/storage/group-commit.js";
import {
  type FrontierEnv,
  mustTake,
  openFrontierEnv,
  sharedFingerprinter,
  takeAll,
  urlsOf,
} from "./helpers.js";

// Memory that does not grow with the frontier (issue 4): idle hosts keep their URLs on disk only, and
// at most maxWindowedHosts windows stay in memory.

let env: FrontierEnv | undefined;

async function setUp(options: FrontierOptions): Promise<FrontierEnv> {
  env = await openFrontierEnv(options);
  return env;
}

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("Frontier windows", () => {
  it("keeps the URLs of hosts not visited yet on disk only", async () => {
    const { frontier } = await setUp({ queueWindow: 8 });
    for (let h = 0; h < 50; h++) {
      for (const url of urlsOf(`h${h}.test`, 0, 5)) frontier.add(url, 0, `h${h}.test`);
    }
    expect(frontier.waitingUrls).toBe(250);
    expect(frontier.windowedUrls).toBe(0);
    // A take loads one window (the host's 5 URLs), and URLs found meanwhile join it.
    expect((await mustTake(frontier, "h7.test")).url).toBe("http://h7.test/p0");
    expect(frontier.windowedUrls).toBe(4);
    frontier.add("http://h7.test/p5", 0, "h7.test");
    frontier.add("http://h8.test/p5", 0, "h8.test");
    expect(frontier.windowedUrls).toBe(5);
    expect(await takeAll(frontier, "h7.test")).toEqual(urlsOf("h7.test", 1, 6));
    expect(await takeAll(frontier, "h8.test")).toEqual(urlsOf("h8.test", 0, 6));
  });

  it("holds at most maxWindowedHosts windows, and every host still comes out in order", async () => {
    const { frontier } = await setUp({ queueWindow: 3, maxWindowedHosts: 2 });
    const hosts = ["a.test", "b.test", "c.test", "d.test", "e.test"];
    for (let i = 0; i < 10; i++) for (const host of hosts) frontier.add(`http://${host}/p${i}`, 0, host);
    const taken = new Map<string, string[]>(hosts.map((host) => [host, []]));
    // Visits in turn, one URL each, so each load evicts another host's window.
    for (let round = 0; round < 10; round++) {
      for (const host of hosts) {
        const entry = await mustTake(frontier, host);
        taken.get(host)?.push(entry.url);
        frontier.complete(host, entry, { done: true, counted: true });
        await frontier.commit();
        expect(frontier.windowedUrls).toBeLessThanOrEqual(2 * 3);
      }
    }
    for (const host of hosts) expect(taken.get(host)).toEqual(urlsOf(host, 0, 10));
    expect(frontier.waitingUrls).toBe(0);
    expect(frontier.isEmpty).toBe(true);
  });

  it("does not evict the window of a host with a URL in flight, and puts back in order", async () => {
    const { frontier } = await setUp({ queueWindow: 4, maxWindowedHosts: 1 });
    for (const host of ["busy.test", "x.test", "y.test"]) {
      for (const url of urlsOf(host, 0, 6)) frontier.add(url, 0, host);
    }
    const busy = await mustTake(frontier, "busy.test");
    // Two other loads past the bound of 1: busy.test is in flight, so its window stays.
    const x = await mustTake(frontier, "x.test");
    frontier.complete("x.test", x, { done: true, counted: true });
    const y = await mustTake(frontier, "y.test");
    expect(frontier.peek("busy.test", 2)).toEqual(urlsOf("busy.test", 1, 3));
    frontier.putBack("busy.test", busy);
    frontier.putBack("y.test", y);
    expect(await takeAll(frontier, "busy.test")).toEqual(urlsOf("busy.test", 0, 6));
    expect(await takeAll(frontier, "y.test")).toEqual(urlsOf("y.test", 0, 6));
    expect(await takeAll(frontier, "x.test")).toEqual(urlsOf("x.test", 1, 6));
  });

  it("keeps evicted URLs durable across a restart", async () => {
    const e = await setUp({ queueWindow: 2, maxWindowedHosts: 1 });
    for (const host of ["m.test", "n.test"])
      for (const url of urlsOf(host, 0, 5)) e.frontier.add(url, 0, host);
    const m = await mustTake(e.frontier, "m.test");
    e.frontier.complete("m.test", m, { done: true, counted: true });
    const n = await mustTake(e.frontier, "n.test"); // evicts m.test's window
    e.frontier.complete("n.test", n, { done: true, counted: true });
    await e.frontier.commit();
    await e.reopen();
    expect(e.frontier.waitingUrls).toBe(8);
    expect(await takeAll(e.frontier, "m.test")).toEqual(urlsOf("m.test", 1, 5));
    expect(await takeAll(e.frontier, "n.test")).toEqual(urlsOf("n.test", 1, 5));
  });

  it("rejects a maxWindowedHosts that is not a positive integer", async () => {
    const e = await setUp({});
    for (const maxWindowedHosts of [0, -3, 2.5, Number.NaN]) {
      const attempt = Frontier.open(
        { maxWindowedHosts },
        {
          store: e.store,
          committer: new GroupCommit((ops) => e.store.write(ops)),
          fingerprinter: await sharedFingerprinter(),
          onHostReady: () => {},
        },
      );
      await expect(attempt).rejects.toSatisfy(
        (error: unknown) => isUbiError(error) && error.code === ErrorCode.InvalidArgument,
      );
    }
  });
});

describe("HostQueue", () => {
  it("packs its flags and frees an empty window", () => {
    const queue = new HostQueue("q.test", { nextSeq: 3, fetched: 0 }, 3, 0);
    expect(queue.windowComplete).toBe(false);
    expect(queue.windowLive).toBe(false);
    queue.mayRepeat = true;
    queue.draining = true;
    expect([queue.mayRepeat, queue.draining, queue.windowComplete]).toEqual([true, true, false]);
    queue.draining = false;
    expect([queue.mayRepeat, queue.draining]).toEqual([true, false]);
    queue.window = [
      { seq: 1, url: "http://q.test/1", depth: 0 },
      { seq: 2, url: "http://q.test/2", depth: 0 },
    ];
    queue.windowComplete = true;
    expect(queue.windowLive).toBe(true);
    expect(queue.windowLength).toBe(2);
    // Evicting leaves the entries to be read again from the first one's sequence number.
    expect(queue.evictWindow()).toBe(2);
    expect([queue.windowLength, queue.windowComplete, queue.nextReadSeq]).toEqual([0, false, 1]);
    expect(queue.mayRepeat).toBe(true);
    queue.window = [];
    expect(queue.windowLength).toBe(0);
  });
});

describe("HostTable", () => {
  const entry = (seq: number) => ({ seq, url: `http://t.test/${seq}`, depth: 0 });

  it("packs idle hosts into columns and unpacks them with the same state", () => {
    const table = new HostTable();
    for (let i = 0; i < 3000; i++) {
      const queue = new HostQueue(`h${i}.test`, { nextSeq: i + 5, fetched: i }, i % 3, i);
      if (i % 7 === 0) queue.mayRepeat = true;
      if (i === 42) queue.record.abandoned = "robots-unavailable";
      table.set(`h${i}.test`, queue);
    }
    expect(table.sweep()).toBe(0);
    expect(table.liveSize).toBe(0);
    expect(table.size).toBe(3000);
    // Counting needs no unpacking.
    expect(table.totalWaiting()).toBe(3000);
    expect(table.hostsWithWork()).toHaveLength(2000);
    expect(table.liveSize).toBe(0);
    for (const i of [0, 1, 42, 1023, 1024, 2999]) {
      const queue = table.get(`h${i}.test`);
      expect(queue?.record).toEqual({
        nextSeq: i + 5,
        fetched: i,
        ...(i === 42 ? { abandoned: "robots-unavailable" } : {}),
      });
      expect([queue?.waiting, queue?.nextReadSeq, queue?.mayRepeat]).toEqual([i % 3, i, i % 7 === 0]);
      expect(queue?.windowComplete).toBe(i % 3 === 0);
    }
    expect(table.get("unknown.test")).toBeUndefined();
    expect([...table.keys()].slice(0, 2)).toEqual(["h0.test", "h1.test"]);
  });

  it("keeps a queue in object form while it has a window, a URL in flight or a drain", () => {
    const table = new HostTable();
    const windowed = new HostQueue("w.test", { nextSeq: 3, fetched: 0 }, 3, 0);
    windowed.window = [entry(0)];
    const loading = new HostQueue("l.test", { nextSeq: 3, fetched: 0 }, 3, 0);
    expect(loading.window).toHaveLength(0); // a take about to load holds the empty array
    const busy = new HostQueue("b.test", { nextSeq: 3, fetched: 0 }, 2, 1);
    busy.inFlight = 1;
    const draining = new HostQueue("d.test", { nextSeq: 3, fetched: 0 }, 3, 0);
    draining.draining = true;
    const idle = new HostQueue("i.test", { nextSeq: 3, fetched: 0 }, 3, 0);
    for (const queue of [windowed, loading, busy, draining, idle]) table.set(queue.host, queue);
    expect(table.sweep()).toBe(4);
    for (const queue of [windowed, loading, busy, draining]) expect(table.get(queue.host)).toBe(queue);
    expect(table.get("i.test")).not.toBe(idle);
    expect(table.get("i.test")?.waiting).toBe(3);
  });
});

describe("Frontier with many hosts", () => {
  it("packs idle hosts while a take is loading a window, losing nothing", async () => {
    const e = await setUp({ queueWindow: 2 });
    const hosts = Array.from({ length: 6000 }, (_, i) => `m${i}.test`);
    for (const host of hosts) for (const url of urlsOf(host, 0, 3)) e.frontier.add(url, 0, host);
    await e.frontier.commit();
    // The take reads its window from disk; meanwhile thousands of lookups make the table sweep.
    const loading = e.frontier.take("m0.test");
    for (const host of hosts) expect(e.frontier.waitingOf(host)).toBe(3);
    expect((await loading)?.url).toBe("http://m0.test/p0");
    const first = await mustTake(e.frontier, "m1.test");
    e.frontier.complete("m1.test", first, { done: true, counted: true });
    expect(e.frontier.record("m1.test").fetched).toBe(1);
    expect(e.frontier.hostsWithWork()).toHaveLength(6000);
    expect(e.frontier.waitingUrls).toBe(6000 * 3 - 2);
    for (const host of hosts.slice(1, 50)) {
      const expected = host === "m1.test" ? urlsOf(host, 1, 3) : urlsOf(host, 0, 3);
      expect(await takeAll(e.frontier, host)).toEqual(expected);
    }
    await e.frontier.commit();
    await e.reopen();
    // m0's URL was taken, not completed: it is waiting again after a restart.
    expect(e.frontier.waitingUrls).toBe(6000 * 3 - 1);
    expect(e.frontier.record("m1.test").fetched).toBe(1);
    expect(await takeAll(e.frontier, "m0.test")).toEqual(urlsOf("m0.test", 0, 3));
  });
});

describe("HostQueue edges (issue 19: mutation survivors)", () => {
  const entry = (seq: number) => ({ seq, url: `http://e.test/${seq}`, depth: 0 });

  it("frees an empty window: nothing is held, the queue may be packed", () => {
    const queue = new HostQueue("e.test", { nextSeq: 0, fetched: 0 }, 0, 0);
    expect(queue.windowComplete).toBe(true);
    queue.window = [entry(0)];
    expect([queue.windowLive, queue.isIdle]).toEqual([true, false]);
    queue.window = [];
    expect([queue.windowLive, queue.isIdle, queue.windowLength]).toEqual([false, true, 0]);
  });

  it("keeps the window of a queue with a URL in flight or a drain running", () => {
    const queue = new HostQueue("e.test", { nextSeq: 5, fetched: 0 }, 3, 2);
    queue.window = [entry(2), entry(3), entry(4)];
    queue.windowComplete = true;
    const generation = queue.generation;
    queue.inFlight = 1;
    expect(queue.evictWindow()).toBe(0);
    queue.inFlight = 0;
    queue.draining = true;
    expect(queue.evictWindow()).toBe(0);
    expect([queue.windowLength, queue.windowComplete, queue.generation]).toEqual([3, true, generation]);
    queue.draining = false;
    expect(queue.evictWindow()).toBe(3);
    expect(queue.generation).toBeGreaterThan(generation);
    expect([queue.windowLength, queue.windowComplete, queue.nextReadSeq]).toEqual([0, false, 2]);
  });

  it("evicts no window where there is none, and an empty one without moving the read position", () => {
    const queue = new HostQueue("e.test", { nextSeq: 5, fetched: 0 }, 2, 3);
    queue.windowComplete = true;
    const generation = queue.generation;
    expect(queue.evictWindow()).toBe(0);
    expect(queue.generation).toBe(generation); // nothing to evict: a loading take need not start over
    expect(queue.window).toEqual([]); // a take about to load holds this empty array
    expect(queue.evictWindow()).toBe(0);
    // The take holding the empty array starts over; the queue still reads from where it was.
    expect(queue.generation).toBeGreaterThan(generation);
    expect([queue.nextReadSeq, queue.windowComplete]).toEqual([3, true]);
  });
});

describe("HostTable edges (issue 19: mutation survivors)", () => {
  const idle = (host: string, fetched = 0) => new HostQueue(host, { nextSeq: 1, fetched }, 1, 0);

  it("sweeps only once enough queues are live, on a lookup", () => {
    const table = new HostTable();
    for (let i = 0; i < 10; i++) table.set(`s${i}.test`, idle(`s${i}.test`));
    expect(table.get("s3.test")?.waiting).toBe(1);
    expect(table.liveSize).toBe(10); // far under the sweep bound: nothing packed
    for (let i = 10; i < 4096; i++) table.set(`s${i}.test`, idle(`s${i}.test`));
    expect(table.liveSize).toBe(4096);
    // At the bound, the next lookup packs every idle queue first.
    expect(table.get("s4000.test")?.waiting).toBe(1);
    expect(table.liveSize).toBe(1);
  });

  it("after a sweep with many busy queues, waits for twice as many before the next", () => {
    const table = new HostTable();
    for (let i = 0; i < 5000; i++) {
      const queue = idle(`b${i}.test`);
      queue.inFlight = 1;
      table.set(`b${i}.test`, queue);
    }
    for (let i = 0; i < 3; i++) table.set(`i${i}.test`, idle(`i${i}.test`, i));
    expect(table.sweep()).toBe(5000);
    // 5,000 live is under the new bound of 10,000: lookups unpack without sweeping.
    expect(table.get("i0.test")?.record.fetched).toBe(0);
    expect(table.get("i1.test")?.record.fetched).toBe(1);
    expect(table.get("i2.test")?.record.fetched).toBe(2);
    expect(table.liveSize).toBe(5003);
  });

  it("keeps a replaced host's slot, so no other host shares it", () => {
    const table = new HostTable();
    table.set("a.test", idle("a.test", 1));
    table.set("b.test", idle("b.test", 2));
    table.set("a.test", idle("a.test", 3));
    table.set("c.test", idle("c.test", 4));
    expect(table.size).toBe(3);
    expect(table.sweep()).toBe(0);
    expect(["a.test", "b.test", "c.test"].map((host) => table.get(host)?.record.fetched)).toEqual([3, 2, 4]);
  });

  it("unpacks a record without an abandoned field when none was set", () => {
    const table = new HostTable();
    table.set("plain.test", idle("plain.test", 7));
    table.sweep();
    expect(table.get("plain.test")?.record).toStrictEqual({ nextSeq: 1, fetched: 7 });
  });
});
