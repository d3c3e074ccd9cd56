import { ErrorCode, UbiError } from "../errors.js";

/**
 * The URL-seen set: 64-bit URL fingerprints in open-addressing tables with linear probing.
 *
 * Slots are interleaved `[lo, hi]` pairs in a `Uint32Array` (one cache line holds a whole probe run
 * and nothing in the probe loop allocates: measured ~3x faster than a `BigUint64Array` of bigints).
 * The set is split by hash into {@link SEGMENTS} tables that grow on their own, by 1.25x when their load
 * passes 0.85: the load stays in [0.68, 0.85], 9.4–11.8 bytes per URL at any size (issue 4 asks for
 * ≤ 12), and a growth holds one segment twice, not the whole set (one table grown 1.25x at once
 * briefly held 2.25x its size: ~170 MB at 10 M URLs).
 */

/** Growing when the load passes this keeps probe runs short (~3.8 probes per hit, ~23 per miss at worst). */
const MAX_LOAD = 0.85;
/** 1.25 rather than 2, so right after a growth a table is still 68% full (≤ 11.8 bytes per URL). */
const GROWTH_FACTOR = 1.25;
/** Segments, chosen by the top bits of the mixed hash (the rest picks the slot). */
const SEGMENT_BITS = 6;
const SEGMENTS = 1 << SEGMENT_BITS;
const SLOT_BITS_SCALE = 2 ** (32 - SEGMENT_BITS);
const MIN_SEGMENT_CAPACITY = 16;
/** 2^30 slots = 8 GiB of tables; far past what one agent holds in memory. */
const MAX_CAPACITY = 2 ** 30;

/** 0 marks an empty slot, so the fingerprint 0 is stored as this one (a 2^-64 collision). */
const ZERO_SUBSTITUTE_HI = 0x9e3779b9;
const ZERO_SUBSTITUTE_LO = 0x7f4a7c15;

// Splits a bigint into halves without allocating: a bigint store into a typed array is allocation-free.
const scratch64 = new BigUint64Array(1);
const scratch32 = new Uint32Array(scratch64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO_WORD = LITTLE_ENDIAN ? 0 : 1;
const HI_WORD = 1 - LO_WORD;
const MAX_U64 = (1n << 64n) - 1n;

/** Options of a {@link SeenSet}. */
export interface SeenSetOptions {
  /**
   * Number of slots to start with, over all segments (the tables grow on their own).
   * @default 1024
   */
  initialCapacity?: number;
  /**
   * Most slots the tables may grow to, over all segments: a multiple of 64, at least 1,024. Past it,
   * adding a new fingerprint to a full segment throws `StorageFailed` ("seen set is full").
   * @default 2^30 (8 GiB)
   */
  maxCapacity?: number;
}

/** `maxCapacity` as given (the default when undefined), or an `InvalidArgument` error. */
function checkedMaxCapacity(maxCapacity = MAX_CAPACITY): number {
  if (
    !Number.isInteger(maxCapacity) ||
    maxCapacity < MIN_SEGMENT_CAPACITY * SEGMENTS ||
    maxCapacity > MAX_CAPACITY ||
    maxCapacity % SEGMENTS !== 0
  ) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `maxCapacity must be a multiple of ${SEGMENTS} in [${MIN_SEGMENT_CAPACITY * SEGMENTS}, ${MAX_CAPACITY}], got ${maxCapacity}`,
    );
  }
  return maxCapacity;
}

/** The normalized halves of the last probed fingerprint (module scratch, so probing allocates nothing). */
let probedHi = 0;
let probedLo = 0;
let probedSegment = 0;

/** A set of 64-bit URL fingerprints with no per-URL objects: `add` tells whether a URL is new. */
export class SeenSet {
  private readonly tables: Uint32Array[] = [];
  private readonly slots = new Int32Array(SEGMENTS);
  private readonly counts = new Int32Array(SEGMENTS);
  private readonly growAt = new Int32Array(SEGMENTS);
  private count = 0;
  private readonly maxSegmentCapacity: number;

  constructor(options: SeenSetOptions = {}) {
    const maxCapacity = checkedMaxCapacity(options.maxCapacity);
    const initialCapacity = options.initialCapacity ?? 1024;
    if (!Number.isInteger(initialCapacity) || initialCapacity < 1 || initialCapacity > maxCapacity) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `initialCapacity must be an integer in [1, ${maxCapacity}], got ${initialCapacity}`,
      );
    }
    this.maxSegmentCapacity = maxCapacity / SEGMENTS;
    const perSegment = Math.max(MIN_SEGMENT_CAPACITY, Math.ceil(initialCapacity / SEGMENTS));
    for (let s = 0; s < SEGMENTS; s++) {
      this.tables.push(new Uint32Array(perSegment * 2));
      this.slots[s] = perSegment;
      this.growAt[s] = Math.floor(perSegment * MAX_LOAD);
    }
  }

  /** A set presized so that `expected` fingerprints fit without any growth. */
  static withExpected(expected: number, options: Pick<SeenSetOptions, "maxCapacity"> = {}): SeenSet {
    const maxCapacity = checkedMaxCapacity(options.maxCapacity);
    if (!Number.isInteger(expected) || expected < 0) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `expected must be a non-negative integer, got ${expected}`,
      );
    }
    // A little slack per segment: hashing spreads fingerprints evenly, not exactly.
    const perSegment = expected / SEGMENTS;
    const slack = 4 * Math.sqrt(perSegment) + 1;
    const slots = Math.ceil(((perSegment + slack) * SEGMENTS) / MAX_LOAD);
    if (slots > maxCapacity) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `${expected} fingerprints need ${slots} slots, past the maxCapacity of ${maxCapacity}`,
      );
    }
    return new SeenSet({ maxCapacity, initialCapacity: slots });
  }

  /** Number of fingerprints in the set. */
  get size(): number {
    return this.count;
  }

  /** Number of slots over all segments. */
  get capacity(): number {
    let total = 0;
    for (let s = 0; s < SEGMENTS; s++) total += this.slots[s] as number;
    return total;
  }

  /** Bytes held by the tables (the whole memory cost of the set at steady state). */
  get memoryBytes(): number {
    return this.capacity * 8;
  }

  /** Bytes a growth holds at most beyond {@link memoryBytes}: the next growth of the largest segment. */
  get growthPeakBytes(): number {
    let largest = 0;
    for (let s = 0; s < SEGMENTS; s++) largest = Math.max(largest, this.slots[s] as number);
    return Math.ceil(largest * GROWTH_FACTOR) * 8;
  }

  /** Adds `fp` (an unsigned 64-bit bigint); true when it was not in the set yet. */
  add(fp: bigint): boolean {
    splitFingerprint(fp);
    return this.addParts(scratch32[HI_WORD] as number, scratch32[LO_WORD] as number);
  }

  /** True when `fp` is in the set. */
  has(fp: bigint): boolean {
    splitFingerprint(fp);
    return this.hasParts(scratch32[HI_WORD] as number, scratch32[LO_WORD] as number);
  }

  /** {@link SeenSet.add} for a fingerprint given as its high and low 32-bit halves (no bigint at all). */
  addParts(hi: number, lo: number): boolean {
    let j = this.probe(hi, lo);
    if (j < 0) return false;
    const s = probedSegment;
    if ((this.counts[s] as number) >= (this.growAt[s] as number)) {
      // Grown before the fingerprint goes in: a full set throws with nothing added, and never fills
      // a table to the last slot (where probing would not end).
      this.grow(s);
      j = this.probe(hi, lo);
    }
    const table = this.tables[s] as Uint32Array;
    table[j] = probedLo;
    table[j + 1] = probedHi;
    this.count++;
    this.counts[s]++;
    return true;
  }

  /** {@link SeenSet.has} for a fingerprint given as its high and low 32-bit halves. */
  hasParts(hi: number, lo: number): boolean {
    return this.probe(hi, lo) < 0;
  }

  /**
   * Linear probing in the fingerprint's segment: the table index of the empty slot where it would go,
   * or -1 when it is present. Leaves the normalized halves and the segment in module scratch.
   */
  private probe(hi: number, lo: number): number {
    hi >>>= 0;
    lo >>>= 0;
    if (hi === 0 && lo === 0) {
      hi = ZERO_SUBSTITUTE_HI;
      lo = ZERO_SUBSTITUTE_LO;
    }
    probedHi = hi;
    probedLo = lo;
    const h = mix(hi, lo);
    const s = h >>> (32 - SEGMENT_BITS);
    probedSegment = s;
    const table = this.tables[s] as Uint32Array;
    const slots = this.slots[s] as number;
    let i = slotOf(h, slots);
    for (;;) {
      const j = i << 1;
      const vl = table[j] as number;
      const vh = table[j + 1] as number;
      if (vl === 0 && vh === 0) return j;
      if (vl === lo && vh === hi) return -1;
      if (++i === slots) i = 0;
    }
  }

  /** Calls `callback` with the halves of every fingerprint, in table order (for persistence). */
  forEachParts(callback: (hi: number, lo: number) => void): void {
    for (const table of this.tables) {
      for (let j = 0; j < table.length; j += 2) {
        const lo = table[j] as number;
        const hi = table[j + 1] as number;
        if (lo !== 0 || hi !== 0) callback(hi, lo);
      }
    }
  }

  /** Every fingerprint as a bigint, in table order; a stored 0n comes back as its substitute. */
  *[Symbol.iterator](): IterableIterator<bigint> {
    for (const table of this.tables) {
      for (let j = 0; j < table.length; j += 2) {
        const lo = table[j] as number;
        const hi = table[j + 1] as number;
        if (lo !== 0 || hi !== 0) yield (BigInt(hi) << 32n) | BigInt(lo);
      }
    }
  }

  private grow(s: number): void {
    const old = this.tables[s] as Uint32Array;
    const current = this.slots[s] as number;
    const slots = Math.min(this.maxSegmentCapacity, Math.ceil(current * GROWTH_FACTOR));
    if (slots <= current) {
      throw new UbiError(ErrorCode.StorageFailed, `seen set is full (${this.capacity} slots)`);
    }
    const table = new Uint32Array(slots * 2);
    // Members are distinct, so rehashing only looks for an empty slot.
    for (let k = 0; k < old.length; k += 2) {
      const lo = old[k] as number;
      const hi = old[k + 1] as number;
      if (lo === 0 && hi === 0) continue;
      let i = slotOf(mix(hi, lo), slots);
      while (table[i << 1] !== 0 || table[(i << 1) + 1] !== 0) {
        if (++i === slots) i = 0;
      }
      table[i << 1] = lo;
      table[(i << 1) + 1] = hi;
    }
    this.tables[s] = table;
    this.slots[s] = slots;
    this.growAt[s] = Math.floor(slots * MAX_LOAD);
  }
}

/** Loads `fp` into the scratch halves; throws when it is not an unsigned 64-bit value. */
function splitFingerprint(fp: bigint): void {
  if (fp < 0n || fp > MAX_U64) {
    throw new UbiError(ErrorCode.InvalidArgument, "a fingerprint must be an unsigned 64-bit bigint");
  }
  scratch64[0] = fp;
}

/** The halves mixed into 32 bits (murmur3's finalizer), so sequential or low-entropy fingerprints spread. */
function mix(hi: number, lo: number): number {
  let h = hi ^ Math.imul(lo, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Home slot in a segment of `slots` slots: the mixed hash's low bits (its top bits chose the segment),
 * scaled to any size (no power of 2). Exact, and never reaches `slots`.
 */
function slotOf(h: number, slots: number): number {
  return Math.floor(((h << SEGMENT_BITS) >>> SEGMENT_BITS) * (slots / SLOT_BITS_SCALE));
}
