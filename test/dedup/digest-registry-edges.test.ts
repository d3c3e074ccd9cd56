import { describe, expect, it } from "vitest";
import { DEFAULT_RECENT_DIGESTS, DigestRegistry } from "../../src/dedup/digest-registry.js";
import type { PayloadOriginal } from "../../src/storage/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** The edges of the digest registry's rules: lease ends, stale claims, forgetting, sweeping, the cache. */

const digest = (n: number) => `sha1:${String(n).padStart(32, "A")}`;
const original = (n: number): PayloadOriginal => ({
  url: `http://a.test/${n}`,
  date: "2026-11-27T10:00:00.000Z",
  recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
});

function registry(options: { claimLeaseMs?: number; recentDigests?: number } = {}) {
  const clock = new ManualClock();
  const lookups: string[][] = [];
  const saves: number[] = [];
  const reg = new DigestRegistry(options, {
    clock,
    lookup: async (digests) => {
      lookups.push([...digests]);
      return digests.map(() => undefined);
    },
    save: (confirmed) => saves.push(confirmed.length),
  });
  return { reg, clock, lookups, saves };
}

describe("DigestRegistry edges", () => {
  it("a claim holds for exactly its lease: pending until then, claimable from its last millisecond on", async () => {
    const { reg, clock } = registry({ claimLeaseMs: 1000 });
    // An earlier claim sets the sweeper going, so it does not run at the very moment the second ends.
    await reg.check([{ digest: digest(0), asker: "z" }]);
    clock.advance(300);
    expect(await reg.check([{ digest: digest(1), asker: "a" }])).toEqual([{ kind: "new" }]);
    clock.advance(999);
    expect(await reg.check([{ digest: digest(1), asker: "b" }])).toEqual([{ kind: "pending" }]);
    clock.advance(1);
    expect(await reg.check([{ digest: digest(1), asker: "b" }])).toEqual([{ kind: "new" }]);
  });

  it("only the same agent's later life voids a claim: another agent's higher incarnation does not", async () => {
    const { reg } = registry();
    expect(await reg.check([{ digest: digest(1), asker: "a", incarnation: 3 }])).toEqual([{ kind: "new" }]);
    expect(await reg.check([{ digest: digest(1), asker: "b", incarnation: 9 }])).toEqual([
      { kind: "pending" },
    ]);
    expect(await reg.check([{ digest: digest(1), asker: "a", incarnation: 3 }])).toEqual([
      { kind: "pending" },
    ]);
    expect(await reg.check([{ digest: digest(1), asker: "a", incarnation: 4 }])).toEqual([{ kind: "new" }]);
  });

  it("forgets only the gone agent's claims", async () => {
    const { reg } = registry();
    await reg.check([
      { digest: digest(1), asker: "a" },
      { digest: digest(2), asker: "b" },
    ]);
    reg.forget("a");
    expect(reg.claimsHeld).toBe(1);
    expect(await reg.check([{ digest: digest(2), asker: "c" }])).toEqual([{ kind: "pending" }]);
    expect(await reg.check([{ digest: digest(1), asker: "c" }])).toEqual([{ kind: "new" }]);
  });

  it("a release of a digest no one claimed, or another agent's claim, changes nothing", async () => {
    const { reg } = registry();
    expect(() => reg.release(digest(7), "a")).not.toThrow();
    await reg.check([{ digest: digest(1), asker: "a" }]);
    reg.release(digest(1), "b");
    expect(await reg.check([{ digest: digest(1), asker: "b" }])).toEqual([{ kind: "pending" }]);
  });

  it("saves nothing for a settlement of releases only, and each confirmation once", async () => {
    const { reg, saves } = registry();
    await reg.check([
      { digest: digest(1), asker: "a" },
      { digest: digest(2), asker: "a" },
    ]);
    reg.settle("a", [{ digest: digest(1) }]);
    expect(saves).toEqual([]);
    reg.settle("a", [
      { digest: digest(2), original: original(2) },
      { digest: digest(2), original: original(3) },
    ]);
    expect(saves).toEqual([1]);
  });

  it("keeps recentDigests confirmed digests in memory, the newest, and asks the store about older ones", async () => {
    const { reg, lookups } = registry({ recentDigests: 2 });
    for (const n of [1, 2]) reg.confirm(digest(n), original(n));
    expect(await reg.check([{ digest: digest(1), asker: "x" }])).toEqual([
      { kind: "seen", original: original(1) },
    ]);
    expect(lookups).toEqual([]);
    reg.confirm(digest(3), original(3));
    expect(await reg.check([{ digest: digest(2), asker: "x" }])).toEqual([
      { kind: "seen", original: original(2) },
    ]);
    expect(await reg.check([{ digest: digest(1), asker: "x" }])).toEqual([{ kind: "new" }]);
    expect(lookups).toEqual([[digest(1)]]);
  });

  it(`keeps ${DEFAULT_RECENT_DIGESTS} confirmed digests by default`, async () => {
    const { reg, lookups } = registry();
    for (let n = 0; n <= DEFAULT_RECENT_DIGESTS; n++) reg.confirm(digest(n), original(n));
    await reg.check([{ digest: digest(1), asker: "x" }]);
    expect(lookups).toEqual([]);
    await reg.check([{ digest: digest(0), asker: "x" }]);
    expect(lookups).toEqual([[digest(0)]]);
  });

  it("sweeps with one timer a lease long, dropping expired claims only, and stop ends it", async () => {
    const { reg, clock } = registry({ claimLeaseMs: 1000 });
    await reg.check([{ digest: digest(1), asker: "a" }]);
    clock.advance(500);
    await reg.check([{ digest: digest(2), asker: "a" }]);
    expect(clock.pending).toBe(1);
    clock.advance(500);
    // The sweep at 1000 ms dropped the first claim (expired) and kept the second (500 ms left).
    expect(reg.claimsHeld).toBe(1);
    expect(clock.pendingDelays).toEqual([1000]);
    reg.stop();
    expect(clock.pending).toBe(0);
    reg.stop();
  });
});
