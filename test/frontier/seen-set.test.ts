import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { SeenSet } from "../../src/frontier/seen-set.js";

/**
 * Sizes of the large-set tests are divided by this under mutation testing (vitest.mutation.config.ts),
 * where instrumented code runs many times slower: the properties still hold at a tenth of the size.
 */
const SIZE_DIVISOR = process.env.UBICRAWL_MUTATION === "1" ? 10 : 1;

/** Deterministic 64-bit values (splitmix64), so failures reproduce. */
function* splitmix64(seed: bigint): Generator<bigint> {
  let state = seed;
  for (;;) {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    yield z ^ (z >> 31n);
  }
}

function take(n: number, seed: bigint): bigint[] {
  const out: bigint[] = [];
  for (const v of splitmix64(seed)) {
    if (out.length === n) break;
    out.push(v);
  }
  return out;
}

function expectCode(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (error) {
    expect(isUbiError(error)).toBe(true);
    expect((error as { code: string }).code).toBe(code);
    return;
  }
  expect.unreachable("expected an error");
}

describe("SeenSet", () => {
  it("adds and finds fingerprints, reporting only new ones as new", () => {
    const set = new SeenSet();
    expect(set.has(42n)).toBe(false);
    expect(set.add(42n)).toBe(true);
    expect(set.add(42n)).toBe(false);
    expect(set.has(42n)).toBe(true);
    expect(set.has(43n)).toBe(false);
    expect(set.add(0xffff_ffff_ffff_ffffn)).toBe(true);
    expect(set.has(0xffff_ffff_ffff_ffffn)).toBe(true);
    expect(set.size).toBe(2);
  });

  it("treats the bigint and the two-halves APIs as the same fingerprint", () => {
    const set = new SeenSet();
    const fp = 0x0123_4567_89ab_cdefn;
    expect(set.addParts(0x0123_4567, 0x89ab_cdef)).toBe(true);
    expect(set.has(fp)).toBe(true);
    expect(set.add(fp)).toBe(false);
    expect(set.add(0x89ab_cdef_0123_4567n)).toBe(true);
    expect(set.hasParts(0x89ab_cdef, 0x0123_4567)).toBe(true);
    expect(set.hasParts(0x0123_4567, 0)).toBe(false);
    expect([...set].sort()).toEqual([fp, 0x89ab_cdef_0123_4567n].sort());
  });

  it("counts duplicates once", () => {
    const set = new SeenSet();
    const values = take(500, 7n);
    let added = 0;
    for (let round = 0; round < 3; round++) {
      for (const v of values) if (set.add(v)) added++;
    }
    expect(added).toBe(500);
    expect(set.size).toBe(500);
  });

  it("stores 0n under a substitute instead of losing it in an empty slot", () => {
    const set = new SeenSet();
    expect(set.has(0n)).toBe(false);
    expect(set.add(0n)).toBe(true);
    expect(set.has(0n)).toBe(true);
    expect(set.add(0n)).toBe(false);
    expect(set.hasParts(0, 0)).toBe(true);
    expect(set.size).toBe(1);
    const members = [...set];
    expect(members).toHaveLength(1);
    expect(members[0]).not.toBe(0n);
  });

  it("rejects values that are not unsigned 64-bit", () => {
    const set = new SeenSet();
    expectCode(() => set.add(-1n), ErrorCode.InvalidArgument);
    expectCode(() => set.has(1n << 64n), ErrorCode.InvalidArgument);
    expect(set.size).toBe(0);
  });

  it("validates options", () => {
    expectCode(() => new SeenSet({ initialCapacity: 0 }), ErrorCode.InvalidArgument);
    expectCode(() => new SeenSet({ initialCapacity: 1.5 }), ErrorCode.InvalidArgument);
    expectCode(() => SeenSet.withExpected(-1), ErrorCode.InvalidArgument);
  });

  it("keeps every member across many growths, including sequential fingerprints", () => {
    const set = new SeenSet({ initialCapacity: 1 });
    const firstCapacity = set.capacity;
    let added = 0;
    for (let i = 1n; i <= 50_000n; i++) if (set.add(i)) added++;
    expect(added).toBe(50_000);
    // Each of the 64 segments grew from 16 slots to ~1,000.
    expect(set.capacity).toBeGreaterThan(firstCapacity * 50);
    expect(set.size / set.capacity).toBeLessThanOrEqual(0.85);
    for (let i = 1n; i <= 50_000n; i++) {
      if (!set.has(i)) expect.unreachable(`lost ${i}`);
    }
    expect(set.has(50_001n)).toBe(false);
    const members = new Set(set);
    expect(members.size).toBe(50_000);
    let viaParts = 0;
    set.forEachParts((hi, lo) => {
      if (members.has((BigInt(hi) << 32n) | BigInt(lo))) viaParts++;
    });
    expect(viaParts).toBe(50_000);
  });

  it("holds 1M random fingerprints and answers membership exactly", () => {
    const n = 1_000_000 / SIZE_DIVISOR;
    const his = new Uint32Array(n);
    const los = new Uint32Array(n);
    let i = 0;
    for (const v of splitmix64(99n)) {
      if (i === n) break;
      his[i] = Number(v >> 32n);
      los[i] = Number(v & 0xffff_ffffn);
      i++;
    }
    const set = new SeenSet();
    let added = 0;
    for (let k = 0; k < n; k++) if (set.addParts(his[k] as number, los[k] as number)) added++;
    expect(added).toBe(n);
    expect(set.size).toBe(n);
    let missing = 0;
    let falseHits = 0;
    for (let k = 0; k < n; k++) {
      if (!set.hasParts(his[k] as number, los[k] as number)) missing++;
      // Swapped halves are (almost surely) other fingerprints.
      if (set.hasParts(los[k] as number, his[k] as number)) falseHits++;
    }
    expect(missing).toBe(0);
    expect(falseHits).toBe(0);
    // 8-byte slots at a load in [0.68, 0.85]: at most ~11.8 bytes per URL at any size (issue 4: ≤ 12).
    expect(set.memoryBytes / set.size).toBeLessThanOrEqual(11.8);
  });

  it("keeps bytes per URL at or under 12 at every size, and ~10 when presized", () => {
    const set = new SeenSet();
    let sum = 0;
    let samples = 0;
    for (let i = 1; i <= 400_000 / SIZE_DIVISOR; i++) {
      set.addParts(i, Math.imul(i, 0x9e3779b1));
      if (i >= 2_000 && i % 100 === 0) {
        const perUrl = set.memoryBytes / set.size;
        // Checked at every size, right after each growth included.
        if (perUrl > 11.8) expect.unreachable(`${perUrl} bytes per URL at ${i} URLs`);
        sum += perUrl;
        samples++;
      }
    }
    expect(sum / samples).toBeLessThanOrEqual(11);
    const presized = SeenSet.withExpected(100_000);
    const capacity = presized.capacity;
    for (let i = 1; i <= 100_000; i++) presized.addParts(0, i);
    expect(presized.capacity).toBe(capacity);
    // 9.4 at the maximum load, plus the slack that keeps every segment from growing.
    expect(presized.memoryBytes / presized.size).toBeLessThan(10.5);
  });
});

describe("SeenSet growth", () => {
  it("grows one segment at a time, so a growth holds a small fraction of the set twice", () => {
    const set = new SeenSet();
    let state = 0x12345678;
    const next = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state >>> 0;
    };
    let largestStep = 0;
    let before = set.memoryBytes;
    while (set.size < 300_000 / SIZE_DIVISOR) {
      set.addParts(next(), next());
      const now = set.memoryBytes;
      largestStep = Math.max(largestStep, now - before);
      before = now;
    }
    // One segment of 64 grows at a time: the new table is ~1/50 of the set, not 1.25x of all of it.
    expect(largestStep).toBeLessThan(set.memoryBytes / 30);
    expect(set.growthPeakBytes).toBeLessThan(set.memoryBytes / 30);
    expect(set.memoryBytes / set.size).toBeLessThanOrEqual(11.8);
  });
});

describe("SeenSet edges (issue 19: mutation survivors)", () => {
  it("names the bad argument in its errors, and refuses sizes past 2^30 slots without allocating", () => {
    expect(() => new SeenSet({ initialCapacity: 2 ** 30 + 1 })).toThrow(
      "initialCapacity must be an integer in [1, 1073741824], got 1073741825",
    );
    expect(() => SeenSet.withExpected(-1)).toThrow("expected must be a non-negative integer, got -1");
    expect(() => SeenSet.withExpected(2.5)).toThrow("expected must be a non-negative integer, got 2.5");
    expectCode(() => SeenSet.withExpected(2 ** 31), ErrorCode.InvalidArgument);
    expect(() => new SeenSet().add(-1n)).toThrow("a fingerprint must be an unsigned 64-bit bigint");
  });

  it("sizes a presized set from the expected count plus slack, and reports the next growth's peak", () => {
    // 64 segments of 16 slots at least; the next growth of one is 1.25x its slots, 8 bytes each.
    const empty = SeenSet.withExpected(0);
    expect([empty.capacity, empty.growthPeakBytes]).toEqual([1024, 160]);
    const plain = new SeenSet();
    expect([plain.capacity, plain.memoryBytes, plain.growthPeakBytes]).toEqual([1024, 8192, 160]);
    // 100 per segment + 4·√100 + 1 of slack, at a load of 0.85: 166 slots per segment.
    const presized = SeenSet.withExpected(6_400);
    expect([presized.capacity, presized.growthPeakBytes]).toEqual([64 * 166, Math.ceil(166 * 1.25) * 8]);
  });

  it("keeps fingerprints whose low or high half is 0 through growths and listings", () => {
    const set = new SeenSet({ initialCapacity: 1 });
    const values: bigint[] = [];
    for (let i = 1n; i <= 3_000n; i++) values.push(i << 32n, i); // low half 0, then high half 0
    for (const v of values) expect(set.add(v)).toBe(true);
    expect(set.capacity).toBeGreaterThan(1024 * 4); // grew many times
    for (const v of values) if (!set.has(v)) expect.unreachable(`lost ${v}`);
    expect([...set].sort((a, b) => (a < b ? -1 : 1))).toEqual([...values].sort((a, b) => (a < b ? -1 : 1)));
    let listed = 0;
    set.forEachParts((hi, lo) => {
      if (!set.hasParts(hi, lo)) expect.unreachable(`listed ${hi}:${lo}, not a member`);
      listed++;
    });
    expect(listed).toBe(values.length);
  });

  it("refuses a maxCapacity that is not a multiple of 64 in [1024, 2^30], and an initial capacity above it", () => {
    const message = (got: number) => `maxCapacity must be a multiple of 64 in [1024, 1073741824], got ${got}`;
    for (const bad of [960, 1088.5, 1100, 2 ** 30 + 64]) {
      expect(() => new SeenSet({ maxCapacity: bad })).toThrow(message(bad));
      expect(() => SeenSet.withExpected(0, { maxCapacity: bad })).toThrow(message(bad));
    }
    expect(new SeenSet({ maxCapacity: 1024 }).capacity).toBe(1024);
    expect(() => new SeenSet({ maxCapacity: 2048, initialCapacity: 2049 })).toThrow(
      "initialCapacity must be an integer in [1, 2048], got 2049",
    );
  });

  it("presizes within maxCapacity, or refuses what would not fit: never a set that fills up early", () => {
    // 275 fingerprints: ~4.3 a segment, plus 4·√4.3 + 1 of slack, at a load of 0.85: 1,024 slots at most.
    const fits = SeenSet.withExpected(275, { maxCapacity: 1024 });
    expect(fits.capacity).toBe(1024);
    for (const fp of take(275, 14n)) fits.add(fp);
    expect(fits.size).toBe(275);
    expect(() => SeenSet.withExpected(276, { maxCapacity: 1024 })).toThrow(
      "276 fingerprints need 1026 slots, past the maxCapacity of 1024",
    );
    expect(() => SeenSet.withExpected(913_000_000)).toThrow(/past the maxCapacity of 1073741824/);
  });

  it("grows a segment when its 14th fingerprint comes (past 85% of its 16 slots), not at its 13th", () => {
    /** The index of the fingerprint whose add first grows a set of 64 segments of 16 slots, or -1. */
    const firstGrowth = (list: readonly bigint[]) => {
      const set = new SeenSet({ initialCapacity: 1 });
      for (const [i, fp] of list.entries()) {
        set.add(fp);
        if (set.capacity > 1024) return i;
      }
      return -1;
    };
    const prefix = take(3_000, 11n);
    prefix.length = firstGrowth(prefix) + 1;
    expect(prefix.length).toBeGreaterThan(14);
    // The segment that grew is the fingerprints without any one of which nothing grows.
    const segment = prefix.filter((_, i) => firstGrowth(prefix.filter((_, j) => j !== i)) === -1);
    expect(segment.length).toBe(14);
    const set = new SeenSet({ initialCapacity: 1 });
    for (const fp of segment.slice(0, 13)) set.add(fp);
    expect(set.capacity).toBe(1024);
    set.add(segment[13] as bigint);
    expect(set.capacity).toBe(1024 - 16 + 20);
  });

  it("throws 'full' at maxCapacity with nothing added, and still answers for what it holds", () => {
    // 64 segments of at most 16 slots: each holds 13 fingerprints (85%), then is full.
    const set = new SeenSet({ maxCapacity: 1024 });
    const fps = take(4_000, 12n);
    const refused: bigint[] = [];
    for (const fp of fps) {
      const before = set.size;
      try {
        expect(set.add(fp)).toBe(true);
      } catch (error) {
        expect(isUbiError(error) && error.code).toBe(ErrorCode.StorageFailed);
        expect((error as Error).message).toBe("seen set is full (1024 slots)");
        expect(set.size).toBe(before);
        refused.push(fp);
      }
    }
    expect([set.size, set.capacity]).toEqual([64 * 13, 1024]);
    expect(refused.length).toBe(fps.length - 64 * 13);
    for (const fp of refused) expect(set.has(fp)).toBe(false);
    const refusedSet = new Set(refused);
    for (const fp of fps) if (!refusedSet.has(fp)) expect(set.add(fp)).toBe(false);
  });

  it("grows each segment up to maxCapacity / 64 slots, by 1.25x, and no further", () => {
    // Segments of 16 -> 20 -> 25 -> 32 slots (31.25 rounded up, capped at 32); full at 27 (85%).
    const set = new SeenSet({ maxCapacity: 2048 });
    let refused = 0;
    for (const fp of take(6_000, 13n)) {
      try {
        set.add(fp);
      } catch {
        refused++;
      }
    }
    expect([set.size, set.capacity, refused]).toEqual([64 * 27, 2048, 6_000 - 64 * 27]);
  });
});
