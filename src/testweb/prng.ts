/**
 * Cheap integer hashing and a seeded generator. Pages are never stored: every decision about a page
 * (its links, size, flags) is a hash of (seed, host, page, slot), so the server and the ground truth
 * derive the same web independently and in constant memory.
 */

/** Murmur3's 32-bit finalizer: a fast avalanche over one 32-bit word. */
function fmix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A well-mixed unsigned 32-bit hash of four integers (only their low 32 bits count). */
export function hash4(a: number, b: number, c: number, d: number): number {
  let h = fmix32((a + 0x9e3779b9) | 0);
  h = fmix32((h ^ b) + 0x7f4a7c15);
  h = fmix32((h ^ c) + 0x6a09e667);
  return fmix32((h ^ d) + 0x3c6ef372);
}

/** Maps an unsigned 32-bit hash to [0, 1). */
export function unit(hash: number): number {
  return hash / 4294967296;
}

/** A seeded pseudo-random generator (mulberry32) returning floats in [0, 1). */
export function createRandom(seed: number): () => number {
  let state = fmix32(seed ^ 0x5bd1e995) | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
