import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Level } from "level";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  dequeueOp,
  digestOp,
  enqueueOp,
  fetchedOf,
  fetchedOps,
  forEachFetched,
  forEachPayloadDigest,
  forEachSeen,
  getMeta,
  type HostRecord,
  hasFetched,
  hostRecordOp,
  hostRecords,
  metaOp,
  outboxDoneOp,
  outboxEntries,
  outboxOp,
  outboxPeers,
  payloadOriginals,
  readQueue,
  robotsSnapshotOp,
  robotsSnapshots,
  type StateOp,
  StateStore,
  scanQueues,
  seenOp,
} from "../../src/storage/index.js";

let dir: string;
let store: StateStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-state-"));
  store = await StateStore.open(join(dir, "state"));
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function enqueue(host: string, seq: number, url: string, depth = 0): StateOp {
  return enqueueOp(host, seq, { url, depth });
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

async function allFingerprints(
  each: (visit: (fingerprint: bigint) => void) => Promise<void>,
): Promise<bigint[]> {
  const out: bigint[] = [];
  await each((fingerprint) => out.push(fingerprint));
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function expectStorageFailed(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => expect.unreachable("expected a rejection"),
    (reason: unknown) => reason,
  );
  expect(isUbiError(error, ErrorCode.StorageFailed)).toBe(true);
}

describe("StateStore queues", () => {
  it("reads a host's entries in sequence order, not insertion or string order", async () => {
    // Written out of order, and with seqs whose decimal strings would sort differently (9 < 10 < 255).
    await store.write([
      enqueue("a.test", 255, "http://a.test/255", 3),
      enqueue("a.test", 10, "http://a.test/10", 1),
      enqueue("a.test", 9, "http://a.test/9", 0),
      enqueue("a.test", 4096, "http://a.test/4096", 2),
    ]);
    const entries = await readQueue(store, "a.test", 0, 100);
    expect(entries).toEqual([
      { seq: 9, url: "http://a.test/9", depth: 0 },
      { seq: 10, url: "http://a.test/10", depth: 1 },
      { seq: 255, url: "http://a.test/255", depth: 3 },
      { seq: 4096, url: "http://a.test/4096", depth: 2 },
    ]);
  });

  it("honours fromSeq and limit", async () => {
    const ops: StateOp[] = [];
    for (let seq = 0; seq < 20; seq++) ops.push(enqueue("h.test", seq, `http://h.test/${seq}`));
    await store.write(ops);
    const page = await readQueue(store, "h.test", 5, 4);
    expect(page.map((e) => e.seq)).toEqual([5, 6, 7, 8]);
    expect(await readQueue(store, "h.test", 18, 10)).toHaveLength(2);
    expect(await readQueue(store, "h.test", 20, 10)).toEqual([]);
    expect(await readQueue(store, "unknown.test", 0, 10)).toEqual([]);
  });

  it("keeps hosts with shared prefixes apart", async () => {
    await store.write([
      enqueue("a.test", 0, "http://a.test/x"),
      enqueue("a.test:8080", 0, "http://a.test:8080/y"),
      enqueue("a.test:8080", 1, "http://a.test:8080/z"),
      enqueue("a.tes", 0, "http://a.tes/w"),
      enqueue("a.test.example", 7, "http://a.test.example/v"),
    ]);
    expect((await readQueue(store, "a.test", 0, 100)).map((e) => e.url)).toEqual(["http://a.test/x"]);
    expect((await readQueue(store, "a.test:8080", 0, 100)).map((e) => e.url)).toEqual([
      "http://a.test:8080/y",
      "http://a.test:8080/z",
    ]);
    expect((await readQueue(store, "a.tes", 0, 100)).map((e) => e.url)).toEqual(["http://a.tes/w"]);
    const scan = await scanQueues(store);
    expect(Object.fromEntries(scan)).toEqual({
      "a.tes": { count: 1, headSeq: 0 },
      "a.test": { count: 1, headSeq: 0 },
      "a.test:8080": { count: 2, headSeq: 0 },
      "a.test.example": { count: 1, headSeq: 7 },
    });
  });

  it("keeps URLs containing tabs and non-ASCII characters intact", async () => {
    const url = "http://u.test/p\u00e4th?q=\u6f22\u5b57\t#x";
    await store.write([enqueue("u.test", 0, url, 12)]);
    expect(await readQueue(store, "u.test", 0, 1)).toEqual([{ seq: 0, url, depth: 12 }]);
  });

  it("keeps a URL's failed attempts with it, and reads entries written without them", async () => {
    const url = "http://u.test/a,b?c=1,2";
    await store.write([
      enqueueOp("u.test", 0, { url, depth: 3, attempts: 2 }),
      enqueueOp("u.test", 1, { url: `${url}x`, depth: 4, attempts: 0 }),
    ]);
    expect(await readQueue(store, "u.test", 0, 2)).toEqual([
      { seq: 0, url, depth: 3, attempts: 2 },
      { seq: 1, url: `${url}x`, depth: 4 },
    ]);
  });

  it("dequeues entries and reports count and lowest seq per host", async () => {
    const ops: StateOp[] = [];
    for (let seq = 0; seq < 10; seq++) ops.push(enqueue("b.test", seq, `http://b.test/${seq}`));
    ops.push(enqueue("c.test", 3, "http://c.test/3"));
    await store.write(ops);
    // Dequeue out of order: the head and one in the middle.
    await store.write([dequeueOp("b.test", 0), dequeueOp("b.test", 1), dequeueOp("b.test", 5)]);
    const scan = await scanQueues(store);
    expect(scan.get("b.test")).toEqual({ count: 7, headSeq: 2 });
    expect(scan.get("c.test")).toEqual({ count: 1, headSeq: 3 });
    expect((await readQueue(store, "b.test", 0, 100)).map((e) => e.seq)).toEqual([2, 3, 4, 6, 7, 8, 9]);
    await store.write([dequeueOp("c.test", 3)]);
    expect((await scanQueues(store)).has("c.test")).toBe(false);
  });

  it("reads a window by key up to endSeq, and past a hole by range scan", async () => {
    const ops: StateOp[] = [];
    for (let seq = 0; seq < 2000; seq++) ops.push(enqueue("e.test", seq, `http://e.test/${seq}`));
    await store.write(ops);
    await store.write([dequeueOp("e.test", 4)]);
    // Bounded by endSeq although more is stored.
    expect((await readQueue(store, "e.test", 0, 10, 3)).map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(await readQueue(store, "e.test", 3, 10, 3)).toEqual([]);
    // The hole at 4 is skipped: the window still holds `limit` entries, in order.
    const window = await readQueue(store, "e.test", 2, 5, 2000);
    expect(window.map((e) => e.seq)).toEqual([2, 3, 5, 6, 7]);
    expect(window[2]).toEqual({ seq: 5, url: "http://e.test/5", depth: 0 });
    // Past the point-read size, a range scan in chunks returns the rest.
    const all = await readQueue(store, "e.test", 0, Number.MAX_SAFE_INTEGER);
    expect(all).toHaveLength(1999);
    expect(all.at(-1)?.seq).toBe(1999);
    expect((await readQueue(store, "e.test", 1990, 1500)).map((e) => e.seq)).toEqual([
      1990, 1991, 1992, 1993, 1994, 1995, 1996, 1997, 1998, 1999,
    ]);
  });

  it("applies a batch atomically in op order (the last put of a key wins)", async () => {
    await store.write([
      enqueue("d.test", 0, "http://d.test/old"),
      dequeueOp("d.test", 0),
      enqueue("d.test", 1, "http://d.test/first"),
      enqueue("d.test", 1, "http://d.test/second"),
      hostRecordOp("d.test", { nextSeq: 1, fetched: 0 }),
      hostRecordOp("d.test", { nextSeq: 2, fetched: 1 }),
    ]);
    expect(await readQueue(store, "d.test", 0, 10)).toEqual([
      { seq: 1, url: "http://d.test/second", depth: 0 },
    ]);
    expect(await collect(hostRecords(store))).toEqual([["d.test", { nextSeq: 2, fetched: 1 }]]);
  });

  it("accepts an empty batch", async () => {
    await store.write([]);
    expect((await scanQueues(store)).size).toBe(0);
  });
});

describe("StateStore fingerprints, records, outbox, robots and meta", () => {
  it("round-trips seen and fetched fingerprints, including the extremes", async () => {
    const seen = [1n, 0xffff_ffff_ffff_ffffn, 0x0123_4567_89ab_cdefn, 255n];
    await store.write(seen.map((fingerprint) => seenOp(fingerprint)));
    await store.write([
      ...fetchedOps("h.test:80", 255n),
      ...fetchedOps("h.test:80", 0xffff_ffff_ffff_ffffn),
      seenOp(255n), // a second put of the same key is not a second member
    ]);
    expect(await allFingerprints((v) => forEachSeen(store, v))).toEqual([
      1n,
      255n,
      0x0123_4567_89ab_cdefn,
      0xffff_ffff_ffff_ffffn,
    ]);
    expect(await allFingerprints((v) => forEachFetched(store, v))).toEqual([255n, 0xffff_ffff_ffff_ffffn]);
  });

  it("answers hasFetched per fingerprint, in argument order", async () => {
    await store.write([
      ...fetchedOps("h.test:80", 10n),
      ...fetchedOps("h.test:80", 30n),
      seenOp(20n), // seen is not fetched
    ]);
    expect(await hasFetched(store, [30n, 20n, 10n, 40n, 10n])).toEqual([true, false, true, false, true]);
    expect(await hasFetched(store, [])).toEqual([]);
  });

  it("lists a host's done fingerprints apart from other hosts', with skip and limit", async () => {
    await store.write([
      ...fetchedOps("a.test:80", 3n),
      ...fetchedOps("a.test:80", 1n),
      ...fetchedOps("a.test:8080", 2n),
      ...fetchedOps("a.test:80", 0xffff_ffff_ffff_ffffn),
      ...fetchedOps("b.test:80", 4n),
    ]);
    expect(await fetchedOf(store, "a.test:80", 0, 10)).toEqual([1n, 3n, 0xffff_ffff_ffff_ffffn]);
    expect(await fetchedOf(store, "a.test:80", 1, 1)).toEqual([3n]);
    expect(await fetchedOf(store, "a.test:80", 3, 10)).toEqual([]);
    expect(await fetchedOf(store, "a.test:8080", 0, 10)).toEqual([2n]);
    expect(await fetchedOf(store, "c.test:80", 0, 10)).toEqual([]);
    expect(await hasFetched(store, [2n, 4n, 5n])).toEqual([true, true, false]);
  });

  it("stores host records and lists them all", async () => {
    const a: HostRecord = { nextSeq: 5, fetched: 2 };
    const b: HostRecord = { nextSeq: 0, fetched: 0, abandoned: "robots-unavailable" };
    await store.write([hostRecordOp("a.test", a), hostRecordOp("b.test:81", b)]);
    const records = new Map(await collect(hostRecords(store)));
    expect(records).toEqual(
      new Map([
        ["a.test", a],
        ["b.test:81", b],
      ]),
    );
  });

  it("keeps outbox entries per peer and removes them when done", async () => {
    await store.write([
      outboxOp("agent-1", 7n, { url: "http://x.test/7", depth: 0 }),
      outboxOp("agent-1", 8n, { url: "http://x.test/8", depth: 2 }),
      outboxOp("agent-10", 7n, { url: "http://y.test/7", depth: 1 }),
    ]);
    const entries = await collect(outboxEntries(store));
    expect(entries).toHaveLength(3);
    expect(entries).toContainEqual({
      peer: "agent-1",
      fingerprint: 8n,
      entry: { url: "http://x.test/8", depth: 2 },
    });
    expect(entries).toContainEqual({
      peer: "agent-10",
      fingerprint: 7n,
      entry: { url: "http://y.test/7", depth: 1 },
    });
    // One peer's entries only; "agent-10" shares the prefix of "agent-1" but is another peer.
    const ofAgent1 = await collect(outboxEntries(store, "agent-1"));
    expect(ofAgent1.map((e) => e.fingerprint).sort()).toEqual([7n, 8n]);
    expect(ofAgent1.every((e) => e.peer === "agent-1")).toBe(true);
    expect((await collect(outboxEntries(store, "agent-10"))).map((e) => e.entry.url)).toEqual([
      "http://y.test/7",
    ]);
    expect(await collect(outboxEntries(store, "agent-2"))).toEqual([]);
    await store.write([outboxDoneOp("agent-1", 7n)]);
    const left = await collect(outboxEntries(store));
    expect(left.map((e) => `${e.peer}/${e.fingerprint}`).sort()).toEqual(["agent-1/8", "agent-10/7"]);
  });

  it("lists the peers with outbox entries once each, prefixes apart, and none once all are done", async () => {
    expect(await outboxPeers(store)).toEqual([]);
    const entry = { url: "http://x.test/", depth: 0 };
    await store.write([
      ...[1n, 2n, 3n].map((fingerprint) => outboxOp("agent-1", fingerprint, entry)),
      outboxOp("agent-10", 1n, entry),
      outboxOp("~unacked", 9n, entry),
      outboxOp("b", 2n ** 64n - 1n, entry),
    ]);
    expect(await outboxPeers(store)).toEqual(["agent-1", "agent-10", "b", "~unacked"]);
    await store.write([1n, 2n, 3n].map((fingerprint) => outboxDoneOp("agent-1", fingerprint)));
    expect(await outboxPeers(store)).toEqual(["agent-10", "b", "~unacked"]);
  });

  it("stores robots snapshots by origin, the latest one winning", async () => {
    await store.write([
      robotsSnapshotOp("http://a.test", { status: 200, body: "v1" }),
      robotsSnapshotOp("http://b.test:8080", { status: 404 }),
    ]);
    await store.write([robotsSnapshotOp("http://a.test", { status: 200, body: "v2" })]);
    const snapshots = await collect(robotsSnapshots(store));
    expect(snapshots).toHaveLength(2);
    expect(snapshots).toContainEqual({ status: 200, body: "v2" });
    expect(snapshots).toContainEqual({ status: 404 });
  });

  it("stores metadata and answers undefined for unknown keys", async () => {
    await store.write([metaOp("agent-id", "node-7")]);
    expect(await getMeta(store, "agent-id")).toBe("node-7");
    expect(await getMeta(store, "missing")).toBeUndefined();
  });
});

describe("StateStore durability and failures", () => {
  it("keeps everything across close and reopen", async () => {
    await store.write([
      enqueue("a.test", 0, "http://a.test/0"),
      enqueue("a.test", 1, "http://a.test/1", 1),
      dequeueOp("a.test", 0),
      seenOp(11n),
      seenOp(12n),
      ...fetchedOps("h.test:80", 11n),
      hostRecordOp("a.test", { nextSeq: 2, fetched: 1 }),
      metaOp("k", "v"),
      robotsSnapshotOp("http://a.test", { rules: ["Disallow: /x"] }),
      outboxOp("p", 13n, { url: "http://b.test/", depth: 0 }),
    ]);
    await store.close();
    await store.close(); // idempotent
    store = await StateStore.open(join(dir, "state"));
    expect(await readQueue(store, "a.test", 0, 10)).toEqual([{ seq: 1, url: "http://a.test/1", depth: 1 }]);
    expect(Object.fromEntries(await scanQueues(store))).toEqual({ "a.test": { count: 1, headSeq: 1 } });
    expect(await allFingerprints((v) => forEachSeen(store, v))).toEqual([11n, 12n]);
    expect(await hasFetched(store, [11n, 12n])).toEqual([true, false]);
    expect(await collect(hostRecords(store))).toEqual([["a.test", { nextSeq: 2, fetched: 1 }]]);
    expect(await getMeta(store, "k")).toBe("v");
    expect(await collect(robotsSnapshots(store))).toEqual([{ rules: ["Disallow: /x"] }]);
    expect(await collect(outboxEntries(store))).toEqual([
      { peer: "p", fingerprint: 13n, entry: { url: "http://b.test/", depth: 0 } },
    ]);
  });

  it("writes no empty value: classic-level leaks a malloc chunk for each one", async () => {
    await store.write([
      seenOp(1n),
      ...fetchedOps("h.test:80", 1n),
      enqueue("a.test", 0, "http://a.test/"),
      hostRecordOp("a.test", { nextSeq: 1, fetched: 0 }),
    ]);
    await store.close();
    const db = new Level<string, string>(join(dir, "state"));
    const entries = await db.iterator().all();
    await db.close();
    expect(entries.length).toBe(5); // the fetched mark is written twice: by fingerprint, and by host

    for (const [key, value] of entries) expect(value.length, key).toBeGreaterThan(0);
  });

  it("asks LevelDB to sync every batch, without copying the option into each operation", async () => {
    // What classic-level hands its binding: the binding reads `sync` with a property lookup
    // (napi_has_named_property), and abstract-level copies a batch's enumerable options into every op,
    // ~1.7 KB of V8 heap each on Node 20 (bench/README "Frontier memory", issue 32).
    type Binding = (ops: Array<Record<string, unknown>>, options: Record<string, unknown>) => Promise<void>;
    const db = (store as unknown as { db: { _batch: Binding } }).db;
    const calls: Array<{ ops: Array<Record<string, unknown>>; options: Record<string, unknown> }> = [];
    const batch = db._batch.bind(db);
    db._batch = (ops, options) => {
      calls.push({ ops, options });
      return batch(ops, options);
    };
    await store.write([seenOp(1n), enqueue("a.test", 0, "http://a.test/")]);
    await store.write([dequeueOp("a.test", 0)]);

    expect(calls.length).toBe(2);
    for (const { ops, options } of calls) {
      expect("sync" in options && options.sync).toBe(true);
      expect(Object.keys(options)).toEqual([]);
      for (const op of ops) expect(Object.hasOwn(op, "sync"), String(op.key)).toBe(false);
    }
    expect(await readQueue(store, "a.test", 0, 10)).toEqual([]);
    expect(await allFingerprints((v) => forEachSeen(store, v))).toEqual([1n]);
  });

  it("reads seen and fetched marks written empty by earlier versions", async () => {
    await store.close();
    const db = new Level<string, string>(join(dir, "state"));
    await db.batch([
      { type: "put", key: "!s!00000000000000ab", value: "" },
      { type: "put", key: "!f!00000000000000ab", value: "" },
    ]);
    await db.close();
    store = await StateStore.open(join(dir, "state"));
    expect(await allFingerprints((v) => forEachSeen(store, v))).toEqual([0xabn]);
    expect(await allFingerprints((v) => forEachFetched(store, v))).toEqual([0xabn]);
    expect(await hasFetched(store, [0xabn, 0xacn])).toEqual([true, false]);
  });

  it("fails a write after close with StorageFailed", async () => {
    await store.close();
    await expectStorageFailed(store.write([seenOp(1n)]));
    await expectStorageFailed(store.write([enqueue("a.test", 0, "http://a.test/")]));
  });

  it("fails to open where a directory cannot be created, with StorageFailed", async () => {
    const file = join(dir, "not-a-dir");
    await writeFile(file, "x");
    await expectStorageFailed(StateStore.open(join(file, "state")));
  });

  it("fails to open a folder another open store holds, with DataDirInUse naming its lock", async () => {
    const error = await StateStore.open(join(dir, "state")).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isUbiError(error, ErrorCode.DataDirInUse)).toBe(true);
    expect((error as Error).message).toContain(`${join(dir, "state", "LOCK")} is held`);
  });
});

describe("StateStore payload digests", () => {
  it("lists every registered digest after a reopen, and answers their originals", async () => {
    const original = { url: "http://a.test/", date: "2026-11-28T10:00:00.000Z", recordId: "<urn:uuid:1>" };
    const digests = [`sha1:${"A".repeat(32)}`, `sha1:${"B".repeat(32)}`];
    await store.write(digests.map((digest) => digestOp(digest, original)));
    await store.close();
    store = await StateStore.open(join(dir, "state"));
    const listed: string[] = [];
    await forEachPayloadDigest(store, (digest) => listed.push(digest));
    expect(listed.sort()).toEqual(digests);
    expect(await payloadOriginals(store, [digests[1] as string, `sha1:${"C".repeat(32)}`])).toEqual([
      original,
      undefined,
    ]);
  });
});
