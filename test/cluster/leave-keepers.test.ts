import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { FoundLink } from "../../src/agent/link-origins.js";
import { entrustToKeepers } from "../../src/cluster/leave-keepers.js";
import { UNACKED_PEER } from "../../src/cluster/unacked-urls.js";
import { outboxOp, StateStore } from "../../src/storage/index.js";
import type { UrlBatch, UrlBatchAck } from "../../src/transport/index.js";
import { hostKey, UrlFingerprinter } from "../../src/url/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * A leaving agent "self" gives what it alone answered for to keepers: its outbox, in a real LevelDB
 * store, and the links it noted, over fake ownership (a keeper by host and holder) and a fake peer
 * that records the batches it gets and answers them as told.
 */

let cleanup: (() => Promise<void>) | undefined;

afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function setUp(outbox: Record<string, readonly string[]>, links: readonly FoundLink[] = []) {
  const dir = await mkdtemp(join(tmpdir(), "ubicrawl-keepers-"));
  const store = await StateStore.open(dir);
  cleanup = async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
  const fingerprinter = await UrlFingerprinter.create();
  await store.write(
    Object.entries(outbox).flatMap(([peer, urls]) =>
      urls.map((url) => outboxOp(peer, fingerprinter.fingerprint(url), { url, depth: 2, attempts: 1 })),
    ),
  );
  const clock = new ManualClock(1_000);
  const staying = new Set(["c1", "c2", "k1", "k2"]);
  /** The keeper of a host's URLs held by an agent: "k" + the holder's number, none for c3's. */
  const keeperFor = (_host: string, holder: string) => (holder === "c3" ? undefined : `k${holder.slice(1)}`);
  const batches: { peer: string; batch: UrlBatch }[] = [];
  const failures = { remaining: 0 };
  const remaining = [...links];
  const deps = {
    selfId: "self",
    clock,
    store,
    ownership: { ownerOnceGone: (host: string) => (host.startsWith("two.") ? "c2" : "c1"), keeperFor },
    isStaying: (id: string) => staying.has(id),
    takeAllLinks: () => remaining.splice(0),
    submit: async (peer: string, batch: UrlBatch): Promise<UrlBatchAck> => {
      if (failures.remaining > 0) {
        failures.remaining--;
        throw new Error(`${peer} did not answer`);
      }
      batches.push({ peer, batch });
      return { accepted: 0, forwarded: 0, duplicates: 0, kept: batch.urls.length };
    },
  };
  return { deps, clock, staying, batches, failures };
}

const link = (url: string, done = false): FoundLink => ({
  url,
  depth: 1,
  host: hostKey(url),
  traits: { attempts: 2 },
  ...(done ? { done } : {}),
});

it("gives the links it noted and its outbox to each holder's keeper, in keep batches, skipping what no one can keep", async () => {
  const { deps, batches } = await setUp(
    {
      c1: ["http://one.test/a", "http://one.test/b"],
      c2: ["http://two.test/a"],
      // Not staying, or no keeper: skipped. Nor the pseudo-peer of unacknowledged URLs.
      gone: ["http://gone.test/a"],
      c3: ["http://three.test/a"],
      [UNACKED_PEER]: ["http://one.test/a"],
    },
    [link("http://one.test/found", true), link("http://two.test/found")],
  );
  expect(await entrustToKeepers(deps, 10_000)).toBe(true);
  const byPeer = new Map(batches.map(({ peer, batch }) => [peer, batch]));
  expect([...byPeer.keys()].sort()).toEqual(["k1", "k2"]);
  for (const batch of byPeer.values()) {
    expect(batch.keepForOwners).toBe(true);
    expect(batch.fromId).toBe("self");
  }
  expect(byPeer.get("k1")?.urls).toEqual([
    { url: "http://one.test/found", depth: 1, attempts: 2 },
    { url: "http://one.test/a", depth: 2, attempts: 1 },
    { url: "http://one.test/b", depth: 2, attempts: 1 },
  ]);
  expect(byPeer.get("k2")?.urls.map((item) => item.url)).toEqual([
    "http://two.test/found",
    "http://two.test/a",
  ]);
});

it("sends a batch every 1,000 URLs, so its memory stays bounded, and ids that differ", async () => {
  const urls = Array.from({ length: 2_500 }, (_, i) => `http://one.test/p${String(i).padStart(4, "0")}`);
  const { deps, batches } = await setUp({ c1: urls });
  expect(await entrustToKeepers(deps, 10_000)).toBe(true);
  expect(batches.map(({ batch }) => batch.urls.length)).toEqual([1_000, 1_000, 500]);
  expect(new Set(batches.map(({ batch }) => batch.batchId)).size).toBe(3);
  expect(batches.flatMap(({ batch }) => batch.urls.map((item) => item.url)).sort()).toEqual(urls);
});

it("sends a batch again after a failure, and says false when the deadline comes first", async () => {
  const retried = await setUp({ c1: ["http://one.test/a"] });
  retried.failures.remaining = 2;
  const done = entrustToKeepers(retried.deps, 10_000);
  // Two waits of 200 ms.
  await advance(retried.clock, 600);
  expect(await done).toBe(true);
  expect(retried.batches).toHaveLength(1);
  expect(retried.failures.remaining).toBe(0);

  const late = await setUp({ c1: ["http://one.test/a"] });
  late.failures.remaining = 1_000;
  const given = entrustToKeepers(late.deps, 1_500);
  await advance(late.clock, 600);
  expect(await given).toBe(false);
  expect(late.batches).toEqual([]);
});

/** Moves the clock `ms` forward in steps, letting the I/O between them run. */
async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let moved = 0; moved < ms; moved += 20) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    clock.advance(20);
  }
}
