import { describe, expect, it } from "vitest";
import { DigestRegistry } from "../../src/dedup/index.js";
import type { PayloadOriginal } from "../../src/storage/index.js";
import { ManualClock } from "../support/manual-clock.js";

const D1 = `sha1:${"A".repeat(32)}`;
const D2 = `sha1:${"B".repeat(32)}`;
const ORIGINAL: PayloadOriginal = {
  url: "http://a.test/",
  date: "2026-11-27T10:00:00.000Z",
  recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
};

/** A registry over an in-memory "store" whose lookups can be held back, and the ops it saved. */
function registry(stored: Record<string, PayloadOriginal> = {}, leaseMs = 1000) {
  const clock = new ManualClock();
  const saved: [string, PayloadOriginal][] = [];
  const lookups: string[][] = [];
  const reg = new DigestRegistry(
    { claimLeaseMs: leaseMs, recentDigests: 2 },
    {
      clock,
      lookup: async (digests) => {
        lookups.push([...digests]);
        return digests.map((digest) => stored[digest]);
      },
      save: (confirmed) => {
        for (const entry of confirmed) saved.push([...entry]);
      },
    },
  );
  return { reg, clock, saved, lookups };
}

describe("DigestRegistry", () => {
  it("claims a new digest for its first asker; the others hear pending until it is confirmed, then seen", async () => {
    const { reg, saved } = registry();
    expect(await reg.check([{ digest: D1, asker: "a" }])).toEqual([{ kind: "new" }]);
    expect(await reg.check([{ digest: D1, asker: "b" }])).toEqual([{ kind: "pending" }]);
    reg.settle("a", [{ digest: D1, original: ORIGINAL }]);
    expect(saved).toEqual([[D1, ORIGINAL]]);
    expect(await reg.check([{ digest: D1, asker: "b" }])).toEqual([{ kind: "seen", original: ORIGINAL }]);
    expect(reg.claimsHeld).toBe(0);
  });

  it("claims at once, before the store answers: two questions at the same moment never both hear new", async () => {
    const { reg } = registry();
    const [first, second] = await Promise.all([
      reg.check([{ digest: D1, asker: "a" }]),
      reg.check([{ digest: D1, asker: "b" }]),
    ]);
    expect([first, second]).toEqual([[{ kind: "new" }], [{ kind: "pending" }]]);
  });

  it("answers from the durable index what earlier runs stored, and reads it once per batch", async () => {
    const { reg, lookups } = registry({ [D2]: ORIGINAL });
    const verdicts = await reg.check([
      { digest: D1, asker: "a" },
      { digest: D2, asker: "a" },
    ]);
    expect(verdicts).toEqual([{ kind: "new" }, { kind: "seen", original: ORIGINAL }]);
    expect(lookups).toEqual([[D1, D2]]);
    // Now remembered: no second read.
    expect(await reg.check([{ digest: D2, asker: "b" }])).toEqual([{ kind: "seen", original: ORIGINAL }]);
    expect(lookups).toHaveLength(1);
  });

  it("hands the claim to the next asker once the claimant's lease runs out, or at once when it is released", async () => {
    const { reg, clock } = registry({}, 1000);
    await reg.check([{ digest: D1, asker: "a" }]);
    clock.advance(999);
    expect(await reg.check([{ digest: D1, asker: "b" }])).toEqual([{ kind: "pending" }]);
    clock.advance(2);
    expect(await reg.check([{ digest: D1, asker: "b" }])).toEqual([{ kind: "new" }]);

    await reg.check([{ digest: D2, asker: "a" }]);
    reg.settle("c", [{ digest: D2 }]); // not the claimant: nothing changes
    expect(await reg.check([{ digest: D2, asker: "b" }])).toEqual([{ kind: "pending" }]);
    reg.settle("a", [{ digest: D2 }]);
    expect(await reg.check([{ digest: D2, asker: "b" }])).toEqual([{ kind: "new" }]);
  });

  it("answers pending to the claimant's own agent too (two of its workers with the same bytes), and keeps the first confirmation", async () => {
    const { reg, saved } = registry();
    await reg.check([{ digest: D1, asker: "a" }]);
    expect(await reg.check([{ digest: D1, asker: "a" }])).toEqual([{ kind: "pending" }]);
    reg.confirm(D1, ORIGINAL);
    reg.confirm(D1, { ...ORIGINAL, url: "http://b.test/" });
    expect(saved).toEqual([[D1, ORIGINAL]]);
  });

  it("counts a payload stored again (a claim that ran out, an agent that could not ask) as a copy, and keeps the first", async () => {
    let copies = 0;
    const saved: (readonly [string, PayloadOriginal])[] = [];
    const stored = [D2];
    const reg = new DigestRegistry(
      {},
      {
        clock: new ManualClock(),
        lookup: async (d) => d.map(() => undefined),
        save: (confirmed) => saved.push(...confirmed),
        forEachStored: async (visit) => stored.forEach(visit),
        onCopy: () => copies++,
      },
    );
    await reg.load();
    reg.settle("b", [{ digest: D1, original: ORIGINAL }]);
    reg.settle("c", [{ digest: D1, original: { ...ORIGINAL, url: "http://c.test/" } }]);
    // D2 is in the durable index only (stored before this process): a copy all the same.
    reg.settle("c", [{ digest: D2, original: ORIGINAL }]);
    expect(copies).toBe(2);
    expect(saved).toEqual([[D1, ORIGINAL]]);
  });

  it("saves the confirmations of one settlement together, at once (one commit, even once the crawl is over)", async () => {
    const clock = new ManualClock();
    const saves: number[] = [];
    const reg = new DigestRegistry(
      {},
      {
        clock,
        lookup: async (d) => d.map(() => undefined),
        save: (confirmed) => saves.push(confirmed.length),
      },
    );
    await reg.check([
      { digest: D1, asker: "a" },
      { digest: D2, asker: "a" },
    ]);
    reg.settle("a", [
      { digest: D1, original: ORIGINAL },
      { digest: D2, original: ORIGINAL },
    ]);
    expect(saves).toEqual([2]);
  });

  it("ends the claims of an agent that is gone, and those of an agent's earlier life when it asks again", async () => {
    const { reg } = registry();
    await reg.check([{ digest: D1, asker: "a", incarnation: 1 }]);
    await reg.check([{ digest: D2, asker: "b", incarnation: 1 }]);
    // a crashed and came back (incarnation 2): its old claim does not hold its new life up.
    expect(await reg.check([{ digest: D1, asker: "a", incarnation: 2 }])).toEqual([{ kind: "new" }]);
    expect(await reg.check([{ digest: D1, asker: "a", incarnation: 2 }])).toEqual([{ kind: "pending" }]);
    expect(await reg.check([{ digest: D1, asker: "c" }])).toEqual([{ kind: "pending" }]);
    // b died: the next asker claims at once.
    reg.forget("b");
    expect(await reg.check([{ digest: D2, asker: "c" }])).toEqual([{ kind: "new" }]);
  });

  it("drops the claims of a failed lookup, so the digest can be asked again", async () => {
    const clock = new ManualClock();
    const reg = new DigestRegistry(
      {},
      {
        clock,
        lookup: async () => {
          throw new Error("disk");
        },
        save: () => {},
      },
    );
    await expect(reg.check([{ digest: D1, asker: "a" }])).rejects.toThrow("disk");
    expect(reg.claimsHeld).toBe(0);
  });

  it("forgets expired claims of agents that never came back", async () => {
    const { reg, clock } = registry({}, 1000);
    await reg.check([
      { digest: D1, asker: "a" },
      { digest: D2, asker: "a" },
    ]);
    expect(reg.claimsHeld).toBe(2);
    clock.advance(1000);
    expect(reg.claimsHeld).toBe(0);
    expect(clock.pending).toBe(0);
  });
});

describe("DigestRegistry with its index's keys loaded", () => {
  /** A registry over a "store" holding `stored`, its keys loaded, and the lookups it made. */
  async function loaded(stored: Record<string, PayloadOriginal>) {
    const lookups: string[][] = [];
    const saved: string[] = [];
    const reg = new DigestRegistry(
      { recentDigests: 1 },
      {
        clock: new ManualClock(),
        lookup: async (digests) => {
          lookups.push([...digests]);
          return digests.map((digest) => stored[digest]);
        },
        save: (confirmed) => {
          for (const [digest, original] of confirmed) {
            saved.push(digest);
            stored[digest] = original;
          }
        },
        forEachStored: async (visit) => {
          for (const digest of Object.keys(stored)) visit(digest);
        },
      },
    );
    await reg.load();
    return { reg, lookups, saved };
  }

  it("answers a digest never stored as new without reading the store", async () => {
    const { reg, lookups } = await loaded({ [D2]: ORIGINAL });
    const others = Array.from({ length: 200 }, (_, i) => `sha1:${String(i).padStart(32, "C")}`);
    const verdicts = await reg.check(others.map((digest) => ({ digest, asker: "a" })));
    expect(verdicts.every((verdict) => verdict.kind === "new")).toBe(true);
    expect(lookups).toEqual([]);
  });

  it("still reads the store for a digest an earlier run stored, and answers seen", async () => {
    const { reg, lookups } = await loaded({ [D2]: ORIGINAL });
    expect(
      await reg.check([
        { digest: D1, asker: "a" },
        { digest: D2, asker: "a" },
      ]),
    ).toEqual([{ kind: "new" }, { kind: "seen", original: ORIGINAL }]);
    expect(lookups).toEqual([[D2]]);
  });

  it("knows the digests confirmed since: one forgotten by the recent cache is looked up, not taken for new", async () => {
    const { reg, lookups } = await loaded({});
    const D3 = `sha1:${"D".repeat(32)}`;
    for (const digest of [D1, D3]) {
      expect(await reg.check([{ digest, asker: "a" }])).toEqual([{ kind: "new" }]);
      reg.settle("a", [{ digest, original: { ...ORIGINAL, url: `http://a.test/${digest}` } }]);
    }
    expect(lookups).toEqual([]);
    // The recent cache holds one digest: D1 is out of it, and the store is asked.
    expect(await reg.check([{ digest: D1, asker: "b" }])).toEqual([
      { kind: "seen", original: { ...ORIGINAL, url: `http://a.test/${D1}` } },
    ]);
    expect(lookups).toEqual([[D1]]);
  });
});
