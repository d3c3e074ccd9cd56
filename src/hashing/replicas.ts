import { sortPositions } from "./circle.js";
import { Mt19937 } from "./mt19937.js";
import type { Hasher64 } from "./xxhash64.js";

/**
 * The Mersenne Twister seed of an agent: xxhash64 of the id's UTF-8 bytes, split into two uint32
 * words `[hi, lo]`. Two words (never one) so the generator is seeded with MT's `init_by_array`.
 */
export function replicaSeed(agentId: string, hasher: Hasher64): Uint32Array {
  const hash = hasher.hashString(agentId);
  return Uint32Array.of(Number(hash >> 32n), Number(BigInt.asUintN(32, hash)));
}

/**
 * The `count` replica positions of an agent on the 64-bit circle, identical on every machine:
 * an MT19937 seeded by {@link replicaSeed}; each position is two consecutive draws `(hi << 32) | lo`.
 * Returned as two parallel word arrays so the circle never boxes 64-bit values.
 */
export function replicaPositions(
  agentId: string,
  count: number,
  hasher: Hasher64,
): { hi: Uint32Array; lo: Uint32Array } {
  const generator = new Mt19937(replicaSeed(agentId, hasher));
  const hi = new Uint32Array(count);
  const lo = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    hi[i] = generator.next();
    lo[i] = generator.next();
  }
  return { hi, lo };
}

/** Sorted replica sets kept per hasher: every view change of a cluster reuses its members' sets. */
const sortedCache = new WeakMap<Hasher64, Map<string, { hi: Uint32Array; lo: Uint32Array }>>();
/** Sorted replica sets kept at most (~12.5 KiB each at 1,600 replicas): far more than a cluster's agents. */
const SORTED_CACHE_ENTRIES = 256;

/**
 * {@link replicaPositions} in ascending order, computed once per (id, count) and kept: a view change
 * then merges the members' sorted sets instead of drawing and sorting every position again. The arrays
 * are shared; callers must not modify them.
 */
export function sortedReplicaPositions(
  agentId: string,
  count: number,
  hasher: Hasher64,
): { readonly hi: Uint32Array; readonly lo: Uint32Array } {
  let cache = sortedCache.get(hasher);
  if (cache === undefined) {
    cache = new Map();
    sortedCache.set(hasher, cache);
  }
  const key = `${count}:${agentId}`;
  let sorted = cache.get(key);
  if (sorted === undefined) {
    const { hi, lo } = replicaPositions(agentId, count, hasher);
    sorted = sortPositions(hi, lo);
    if (cache.size >= SORTED_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  } else cache.delete(key); // re-inserted below: most recently used last
  cache.set(key, sorted);
  return sorted;
}
