import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Level } from "level";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  asideBeyondOp,
  asideCounts,
  asideDoneOp,
  asideOf,
  asideOp,
  dequeueOp,
  digestForgetOp,
  digestOp,
  enqueueOp,
  fetchedOf,
  fetchedOps,
  forEachFetched,
  forEachPayloadDigest,
  forEachSeen,
  getMeta,
  hasFetched,
  hostRecordOp,
  hostRecords,
  type KeyRange,
  keyRange,
  metaEntries,
  metaOp,
  outboxDoneOp,
  outboxEntries,
  outboxOp,
  outboxPeers,
  pageOp,
  pageValue,
  pageValues,
  pageValuesOf,
  payloadOriginals,
  putOp,
  readQueue,
  robotsSnapshotOp,
  robotsSnapshots,
  type StateOp,
  StateStore,
  scanQueues,
  seenOp,
  unfetchedOps,
} from "../../src/storage/index.js";

// Each owner's key range and encoding, byte for byte: what its operations write to LevelDB (the
// on-disk layout, which data dirs of earlier versions hold) and what its reads make of it.

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-records-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes `ops` through a store, then lists every raw LevelDB entry, in key order. */
async function rawAfter(ops: readonly StateOp[]): Promise<[string, string][]> {
  const store = await StateStore.open(dir);
  await store.write(ops);
  await store.close();
  const db = new Level<string, string>(dir);
  try {
    return await db.iterator().all();
  } finally {
    await db.close();
  }
}

/** Writes raw LevelDB entries (as an earlier version wrote them), then opens a store on them. */
async function storeOn(entries: readonly [string, string][]): Promise<StateStore> {
  const db = new Level<string, string>(dir);
  await db.batch(entries.map(([key, value]) => ({ type: "put", key, value })));
  await db.close();
  return StateStore.open(dir);
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Between a key's host or peer and its fingerprint or sequence number. */
const NUL = "\u0000";
const FP = 0x0123_4567_89ab_cdefn;
const FP_HEX = "0123456789abcdef";

describe("the frontier's queues (range q)", () => {
  it("keys a host's entries by 12 hex digits of sequence, so they sort by number", async () => {
    expect(
      await rawAfter([
        enqueueOp("a.test", 255, { url: "http://a.test/x", depth: 3 }),
        enqueueOp("a.test", 16, { url: "http://a.test/y", depth: 0, attempts: 2, sitemap: true }),
        enqueueOp("a.test:8080", 1, {
          url: "http://a.test:8080/z",
          depth: 1,
          lastmod: "2024-01-02",
          sitemapFor: "b.test",
          revisit: true,
        }),
      ]),
    ).toEqual([
      [`!q!a.test${NUL}000000000010`, "0,2,s\thttp://a.test/y"],
      [`!q!a.test${NUL}0000000000ff`, "3\thttp://a.test/x"],
      [`!q!a.test:8080${NUL}000000000001`, "1,m=2024-01-02,f=b.test,r\thttp://a.test:8080/z"],
    ]);
  });

  it("reads entries written by earlier versions (depth and URL only) in sequence order", async () => {
    const store = await storeOn([
      [`!q!a.test${NUL}00000000000a`, "1\thttp://a.test/10"],
      [`!q!a.test${NUL}000000000009`, "0\thttp://a.test/9"],
      [`!q!a.test${NUL}000000001000`, "2,1\thttp://a.test/4096"],
      [`!q!b.test${NUL}000000000000`, "0\thttp://b.test/"],
    ]);
    try {
      expect(await readQueue(store, "a.test", 0, 10)).toEqual([
        { seq: 9, url: "http://a.test/9", depth: 0 },
        { seq: 10, url: "http://a.test/10", depth: 1 },
        { seq: 4096, url: "http://a.test/4096", depth: 2, attempts: 1 },
      ]);
      expect(await scanQueues(store)).toEqual(
        new Map([
          ["a.test", { count: 3, headSeq: 9 }],
          ["b.test", { count: 1, headSeq: 0 }],
        ]),
      );
    } finally {
      await store.close();
    }
  });

  it("keeps a sitemap's changefreq with its entry (c=), and reads entries without it, or with a value it does not know, as before", async () => {
    const hinted = {
      url: "http://a.test/p",
      depth: 1,
      attempts: 1,
      lastmod: "2024-01-02",
      changefreq: "weekly" as const,
      revisit: true as const,
    };
    expect(await rawAfter([enqueueOp("a.test", 1, hinted)])).toEqual([
      [`!q!a.test${NUL}000000000001`, "1,1,m=2024-01-02,c=weekly,r\thttp://a.test/p"],
    ]);
    const store = await storeOn([
      [`!q!a.test${NUL}000000000001`, "1,1,m=2024-01-02,c=weekly,r\thttp://a.test/p"],
      // Written before changefreq was kept.
      [`!q!a.test${NUL}000000000002`, "1,m=2024-01-02,f=b.test\thttp://a.test/q"],
      // A value of no sitemaps.org name (a later version's, or a damaged record): the entry without it.
      [`!q!a.test${NUL}000000000003`, "1,c=fortnightly,s\thttp://a.test/r"],
    ]);
    try {
      expect(await readQueue(store, "a.test", 0, 10)).toEqual([
        { seq: 1, ...hinted },
        { seq: 2, url: "http://a.test/q", depth: 1, lastmod: "2024-01-02", sitemapFor: "b.test" },
        { seq: 3, url: "http://a.test/r", depth: 1, sitemap: true },
      ]);
    } finally {
      await store.close();
    }
  });

  it("deletes an entry by its host and sequence", async () => {
    expect(
      await rawAfter([enqueueOp("a.test", 1, { url: "http://a.test/", depth: 0 }), dequeueOp("a.test", 1)]),
    ).toEqual([]);
  });
});

describe("the seen set (s) and the done URLs (f, g)", () => {
  it("keys fingerprints as 16 hex digits, done ones also by host, each valued 1", async () => {
    expect(await rawAfter([seenOp(FP), ...fetchedOps("h.test:80", 255n)])).toEqual([
      ["!f!00000000000000ff", "1"],
      [`!g!h.test:80${NUL}00000000000000ff`, "1"],
      [`!s!${FP_HEX}`, "1"],
    ]);
  });

  it("reads them back in numeric order, by host for the done ones", async () => {
    const store = await storeOn([
      [`!s!${FP_HEX}`, "1"],
      ["!s!ffffffffffffffff", "1"],
      ["!s!0000000000000002", "1"],
      ["!f!0000000000000002", "1"],
      [`!g!h.test${NUL}0000000000000002`, "1"],
      [`!g!h.test${NUL}0000000000000001`, "1"],
      [`!g!h.test:8080${NUL}0000000000000003`, "1"],
    ]);
    try {
      const seen: bigint[] = [];
      await forEachSeen(store, (fingerprint) => seen.push(fingerprint));
      expect(seen).toEqual([2n, FP, 2n ** 64n - 1n]);
      const fetched: bigint[] = [];
      await forEachFetched(store, (fingerprint) => fetched.push(fingerprint));
      expect(fetched).toEqual([2n]);
      expect(await hasFetched(store, [1n, 2n])).toEqual([false, true]);
      expect(await fetchedOf(store, "h.test", 0, 10)).toEqual([1n, 2n]);
      expect(await fetchedOf(store, "h.test", 1, 10)).toEqual([2n]);
    } finally {
      await store.close();
    }
  });

  it("forgets a done URL in both ranges", async () => {
    expect(await rawAfter([...fetchedOps("h.test", FP), ...unfetchedOps("h.test", FP)])).toEqual([]);
  });
});

describe("host records (h), robots snapshots (r), metadata (m)", () => {
  it("stores a host record and a robots snapshot as JSON, metadata as given", async () => {
    const raw = await rawAfter([
      hostRecordOp("a.test", { nextSeq: 2, fetched: 1, abandoned: "robots" }),
      robotsSnapshotOp("http://a.test", { status: 200, body: "User-agent: *" }),
      metaOp("agent-id", "a1"),
    ]);
    expect(raw).toEqual([
      ["!h!a.test", '{"nextSeq":2,"fetched":1,"abandoned":"robots"}'],
      ["!m!agent-id", "a1"],
      ["!r!http://a.test", '{"status":200,"body":"User-agent: *"}'],
    ]);
  });

  it("reads them back", async () => {
    const store = await storeOn([
      ["!h!b.test", '{"nextSeq":5,"fetched":3,"recheck":true}'],
      ["!r!http://b.test", '{"status":404}'],
      ["!m!warc-file:x.warc.gz", "1"],
      ["!m!warc-file:y.warc.gz", "2"],
      ["!m!warc-offloaded:x.warc.gz", ""],
    ]);
    try {
      expect(await collect(hostRecords(store))).toEqual([
        ["b.test", { nextSeq: 5, fetched: 3, recheck: true }],
      ]);
      expect(await collect(robotsSnapshots(store))).toEqual([{ status: 404 }]);
      expect(await getMeta(store, "warc-file:y.warc.gz")).toBe("2");
      expect(await getMeta(store, "absent")).toBeUndefined();
      expect(await collect(metaEntries(store, "warc-file:"))).toEqual([
        ["warc-file:x.warc.gz", "1"],
        ["warc-file:y.warc.gz", "2"],
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("the outbox (o) and the URLs aside (a, b)", () => {
  it("keys them by peer or host, then fingerprint; counts beyond the cap in decimal, 0 deleting", async () => {
    const entry = { url: "http://x.test/", depth: 2 };
    expect(
      await rawAfter([
        outboxOp("agent-1", FP, entry),
        outboxOp("agent-1", 1n, entry),
        outboxDoneOp("agent-1", 1n),
        asideOp("x.test", FP, { ...entry, attempts: 1 }),
        asideBeyondOp("x.test", 12),
        asideBeyondOp("y.test", 3),
        asideBeyondOp("y.test", 0),
      ]),
    ).toEqual([
      [`!a!x.test${NUL}${FP_HEX}`, "2,1\thttp://x.test/"],
      ["!b!x.test", "12"],
      [`!o!agent-1${NUL}${FP_HEX}`, "2\thttp://x.test/"],
    ]);
  });

  it("reads them back by peer or host, a peer's prefix not taken for another peer", async () => {
    const store = await storeOn([
      [`!o!agent-1${NUL}0000000000000002`, "0\thttp://a.test/2"],
      [`!o!agent-1${NUL}0000000000000001`, "0\thttp://a.test/1"],
      [`!o!agent-10${NUL}0000000000000001`, "1\thttp://b.test/"],
      [`!a!x.test${NUL}0000000000000005`, "0\thttp://x.test/5"],
      [`!a!x.test:81${NUL}0000000000000006`, "0\thttp://x.test:81/6"],
      ["!b!x.test", "4"],
    ]);
    try {
      expect(await outboxPeers(store)).toEqual(["agent-1", "agent-10"]);
      expect(await collect(outboxEntries(store, "agent-1"))).toEqual([
        { peer: "agent-1", fingerprint: 1n, entry: { url: "http://a.test/1", depth: 0 } },
        { peer: "agent-1", fingerprint: 2n, entry: { url: "http://a.test/2", depth: 0 } },
      ]);
      expect(await collect(outboxEntries(store))).toHaveLength(3);
      expect(await asideOf(store, "x.test")).toEqual([
        { fingerprint: 5n, entry: { url: "http://x.test/5", depth: 0 } },
      ]);
      expect(await asideCounts(store)).toEqual(
        new Map([
          ["x.test", { kept: 1, beyond: 4 }],
          ["x.test:81", { kept: 1, beyond: 0 }],
        ]),
      );
    } finally {
      await store.close();
    }
  });

  it("takes a URL aside back out", async () => {
    expect(
      await rawAfter([asideOp("x.test", 1n, { url: "http://x.test/", depth: 0 }), asideDoneOp("x.test", 1n)]),
    ).toEqual([]);
  });
});

describe("payload digests (d) and page histories (p)", () => {
  const original = { url: "http://a.test/", date: "2024-01-01T00:00:00Z", recordId: "<urn:uuid:1>" };

  it("stores a digest's first response as a JSON triple and a page's value as given", async () => {
    expect(
      await rawAfter([
        digestOp("sha1:AAAA", original),
        digestOp("sha1:BBBB", original),
        digestForgetOp("sha1:BBBB"),
        pageOp("a.test", FP, "opaque"),
      ]),
    ).toEqual([
      ["!d!sha1:AAAA", '["http://a.test/","2024-01-01T00:00:00Z","<urn:uuid:1>"]'],
      [`!p!a.test${NUL}${FP_HEX}`, "opaque"],
    ]);
  });

  it("reads them back", async () => {
    const store = await storeOn([
      ["!d!sha1:AAAA", '["http://a.test/","2024-01-01T00:00:00Z","<urn:uuid:1>"]'],
      [`!p!a.test${NUL}0000000000000002`, "v2"],
      [`!p!a.test${NUL}0000000000000001`, "v1"],
      [`!p!b.test${NUL}0000000000000001`, "w1"],
    ]);
    try {
      const digests: string[] = [];
      await forEachPayloadDigest(store, (digest) => digests.push(digest));
      expect(digests).toEqual(["sha1:AAAA"]);
      expect(await payloadOriginals(store, ["sha1:AAAA", "sha1:CCCC"])).toEqual([original, undefined]);
      expect(await pageValue(store, "a.test", 2n)).toBe("v2");
      expect(await pageValue(store, "a.test", 3n)).toBeUndefined();
      expect(await collect(pageValuesOf(store, "a.test", 1))).toEqual([{ fingerprint: 2n, value: "v2" }]);
      expect(await collect(pageValues(store))).toEqual([
        { host: "a.test", fingerprint: 1n, value: "v1" },
        { host: "a.test", fingerprint: 2n, value: "v2" },
        { host: "b.test", fingerprint: 1n, value: "w1" },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("key ranges", () => {
  it("are claimed once: a second owner of a name, an empty name or one holding ! is refused", () => {
    for (const name of ["q", "", "a!b"]) {
      let error: unknown;
      try {
        keyRange(name);
      } catch (thrown) {
        error = thrown;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
    }
    // Only keyRange makes one (checked by the type checker, which runs on the tests): a literal would
    // reach the queue's keys without a claim.
    // @ts-expect-error a KeyRange is branded
    const literal: KeyRange = { name: "q" };
    expect(literal.name).toBe("q");
  });

  it("apply one batch's operations in order, from several owners at once", async () => {
    const notes = keyRange("test-notes");
    const store = await StateStore.open(dir);
    try {
      await store.write([putOp(notes, "k", "1"), metaOp("k", "m"), putOp(notes, "k", "2")]);
      expect(await store.range(notes).get("k")).toBe("2");
      expect(await getMeta(store, "k")).toBe("m");
    } finally {
      await store.close();
    }
  });
});
