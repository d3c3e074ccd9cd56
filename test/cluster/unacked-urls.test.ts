import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resendUnacked, UNACKED_PEER } from "../../src/cluster/unacked-urls.js";
import { GroupCommit, outboxEntries, outboxOp, StateStore } from "../../src/storage/index.js";

let cleanup: (() => Promise<void>) | undefined;

afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function openStore() {
  const dir = await mkdtemp(join(tmpdir(), "ubicrawl-unacked-"));
  const store = await StateStore.open(dir);
  cleanup = async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
  const committer = new GroupCommit((ops) => store.write(ops));
  return { store, committer };
}

async function fingerprintsOf(store: StateStore, peer: string): Promise<bigint[]> {
  const out: bigint[] = [];
  for await (const { fingerprint } of outboxEntries(store, peer)) out.push(fingerprint);
  return out;
}

describe("resendUnacked", () => {
  it("routes every unacknowledged URL again with its depth, host and attempts, and clears its mark", async () => {
    const { store, committer } = await openStore();
    await store.write([
      outboxOp(UNACKED_PEER, 1n, { url: "http://a.test:8080/x", depth: 2, attempts: 1 }),
      outboxOp(UNACKED_PEER, 2n, { url: "https://b.test/y", depth: 0 }),
      // A real peer's outbox is not this record: it stays as it is.
      outboxOp("p", 3n, { url: "http://c.test/z", depth: 1 }),
    ]);
    const routed: unknown[] = [];
    const count = await resendUnacked(store, committer, (url, depth, host, attempts) =>
      routed.push({ url, depth, host, attempts }),
    );
    expect(count).toBe(2);
    expect(routed).toEqual(
      expect.arrayContaining([
        { url: "http://a.test:8080/x", depth: 2, host: "a.test:8080", attempts: 1 },
        { url: "https://b.test/y", depth: 0, host: "b.test", attempts: undefined },
      ]),
    );
    expect(routed).toHaveLength(2);
    // The clearing is committed before resendUnacked returns.
    expect(await fingerprintsOf(store, UNACKED_PEER)).toEqual([]);
    expect(await fingerprintsOf(store, "p")).toEqual([3n]);
  });

  it("keeps the mark of a URL the route hands off again in the same commit", async () => {
    const { store, committer } = await openStore();
    const entry = { url: "http://a.test/x", depth: 1 };
    await store.write([outboxOp(UNACKED_PEER, 7n, entry)]);
    const count = await resendUnacked(store, committer, () =>
      committer.add(outboxOp(UNACKED_PEER, 7n, entry)),
    );
    expect(count).toBe(1);
    expect(await fingerprintsOf(store, UNACKED_PEER)).toEqual([7n]);
  });

  it("routes nothing and counts zero when no URL is marked", async () => {
    const { store, committer } = await openStore();
    const count = await resendUnacked(store, committer, () => expect.unreachable("nothing to route"));
    expect(count).toBe(0);
  });
});
