import { delOp, keyRange, putOp, SCAN_CHUNK, type StateOp, type StateReader } from "./key-range.js";
import {
  fingerprintKey,
  fingerprintOfKey,
  PRESENT,
  scopeBounds,
  scopedFingerprintKey,
} from "./state-keys.js";

/**
 * The done URLs (fetched, with any status, or failed for good), never fetched again here nor by a later
 * owner of their host (a hand-over carries them): range `f`, key a URL's fingerprint; and the same
 * fingerprints keyed by host first (range `g`, `host NUL fingerprint`), so a host's can be handed over.
 * Values are {@link PRESENT}.
 */
const FETCHED = keyRange("f");
const FETCHED_BY_HOST = keyRange("g");

/** The operations that record the URL of `host` with this fingerprint as done. */
export function fetchedOps(host: string, fingerprint: bigint): [StateOp, StateOp] {
  return [
    putOp(FETCHED, fingerprintKey(fingerprint), PRESENT),
    putOp(FETCHED_BY_HOST, scopedFingerprintKey(host, fingerprint), PRESENT),
  ];
}

/** The operations that record the URL of `host` with this fingerprint as not done any more (lost). */
export function unfetchedOps(host: string, fingerprint: bigint): [StateOp, StateOp] {
  return [
    delOp(FETCHED, fingerprintKey(fingerprint)),
    delOp(FETCHED_BY_HOST, scopedFingerprintKey(host, fingerprint)),
  ];
}

/** Calls `visit` with every done fingerprint, in order. */
export async function forEachFetched(
  store: StateReader,
  visit: (fingerprint: bigint) => void,
): Promise<void> {
  for await (const key of store.range(FETCHED).keys()) visit(fingerprintOfKey(key));
}

/** For each fingerprint, whether its URL is done. */
export async function hasFetched(store: StateReader, fingerprints: readonly bigint[]): Promise<boolean[]> {
  if (fingerprints.length === 0) return [];
  const values = await store.range(FETCHED).getMany(fingerprints.map(fingerprintKey));
  return values.map((value) => value !== undefined);
}

/**
 * Fingerprints of `host`'s done URLs, in key order, skipping the first `skip` and returning at most
 * `limit`. Fetches recorded before the by-host index existed are not listed.
 */
export async function fetchedOf(
  store: StateReader,
  host: string,
  skip: number,
  limit: number,
): Promise<bigint[]> {
  const result: bigint[] = [];
  if (limit <= 0) return result;
  let index = 0;
  const iterator = store.range(FETCHED_BY_HOST).keys(scopeBounds(host));
  try {
    for (;;) {
      const chunk = await iterator.nextv(SCAN_CHUNK);
      if (chunk.length === 0) break;
      for (const key of chunk) {
        if (index++ < skip) continue;
        result.push(fingerprintOfKey(key.slice(host.length + 1)));
        if (result.length >= limit) return result;
      }
    }
  } finally {
    await iterator.close();
  }
  return result;
}
