import { keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";
import { scopeBounds, scopedFingerprintKey, splitScopedFingerprintKey } from "./state-keys.js";

/**
 * What a recrawl keeps of each done URL (validators, change counts, next fetch time): range `p`, key
 * `host NUL fingerprint`, value opaque here (encoded and read by `src/recrawl/page-history.ts`).
 */
const PAGES = keyRange("p");

/** The operation that stores `value` for the URL of `host` with this fingerprint. */
export function pageOp(host: string, fingerprint: bigint, value: string): StateOp {
  return putOp(PAGES, scopedFingerprintKey(host, fingerprint), value);
}

/** The value last stored for the URL of `host` with this fingerprint, if any. */
export async function pageValue(
  store: StateReader,
  host: string,
  fingerprint: bigint,
): Promise<string | undefined> {
  return store.range(PAGES).get(scopedFingerprintKey(host, fingerprint));
}

/** The values of `host` after its first `skip`, with their fingerprints, in key order (a hand-over). */
export async function* pageValuesOf(
  store: StateReader,
  host: string,
  skip = 0,
): AsyncGenerator<{ fingerprint: bigint; value: string }> {
  let skipped = 0;
  for await (const [key, value] of store.range(PAGES).iterator(scopeBounds(host))) {
    if (skipped++ < skip) continue;
    yield { fingerprint: splitScopedFingerprintKey(key).fingerprint, value };
  }
}

/** Every value, with its host and fingerprint, in key order (read at startup). */
export async function* pageValues(
  store: StateReader,
): AsyncGenerator<{ host: string; fingerprint: bigint; value: string }> {
  for await (const [key, value] of store.range(PAGES).iterator()) {
    const { scope, fingerprint } = splitScopedFingerprintKey(key);
    yield { host: scope, fingerprint, value };
  }
}
