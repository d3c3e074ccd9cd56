import { delOp, keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";
import { decodeQueuedUrl, encodeQueuedUrl, type QueuedUrl } from "./queued-url.js";
import { scopeBounds, scopedFingerprintKey, splitScopedFingerprintKey } from "./state-keys.js";

/**
 * The URLs of blacklisted hosts: those dropped while their host was blacklisted, kept aside (neither
 * queued nor done) until it comes off the blacklist and they are queued again — range `a`, key
 * `host NUL fingerprint`, value a {@link encodeQueuedUrl} entry —; and per host, how many more were
 * dropped beyond the cap on those kept, so that a removal can say how many it cannot restore — range
 * `b`, key the host, value the count in decimal.
 */
const ASIDE = keyRange("a");
const ASIDE_BEYOND = keyRange("b");

/** What a host has aside: URLs kept, and URLs dropped beyond the cap. */
export interface AsideCount {
  kept: number;
  beyond: number;
}

/** The operation that keeps `entry` of `host` (whose URL has this fingerprint) aside. */
export function asideOp(host: string, fingerprint: bigint, entry: QueuedUrl): StateOp {
  return putOp(ASIDE, scopedFingerprintKey(host, fingerprint), encodeQueuedUrl(entry));
}

/** The operation that drops the URL of `host` with this fingerprint from those aside (queued again). */
export function asideDoneOp(host: string, fingerprint: bigint): StateOp {
  return delOp(ASIDE, scopedFingerprintKey(host, fingerprint));
}

/** The operation that records `count` URLs of `host` dropped beyond the cap; 0 deletes the count. */
export function asideBeyondOp(host: string, count: number): StateOp {
  return count > 0 ? putOp(ASIDE_BEYOND, host, String(count)) : delOp(ASIDE_BEYOND, host);
}

/** Per host with URLs aside or dropped beyond the cap, how many of each (read once at startup). */
export async function asideCounts(store: StateReader): Promise<Map<string, AsideCount>> {
  const counts = new Map<string, AsideCount>();
  const of = (host: string) => {
    let count = counts.get(host);
    if (count === undefined) {
      count = { kept: 0, beyond: 0 };
      counts.set(host, count);
    }
    return count;
  };
  for await (const key of store.range(ASIDE).keys()) of(splitScopedFingerprintKey(key).scope).kept++;
  for await (const [host, value] of store.range(ASIDE_BEYOND).iterator()) of(host).beyond = Number(value);
  return counts;
}

/** The URLs of `host` kept aside, with their fingerprints, in key order. */
export async function asideOf(
  store: StateReader,
  host: string,
): Promise<{ fingerprint: bigint; entry: QueuedUrl }[]> {
  const result: { fingerprint: bigint; entry: QueuedUrl }[] = [];
  for await (const [key, value] of store.range(ASIDE).iterator(scopeBounds(host))) {
    result.push({ fingerprint: splitScopedFingerprintKey(key).fingerprint, entry: decodeQueuedUrl(value) });
  }
  return result;
}
