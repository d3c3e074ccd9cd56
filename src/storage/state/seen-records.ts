import { keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";
import { fingerprintKey, fingerprintOfKey, PRESENT } from "./state-keys.js";

/** The frontier's URL-seen set: range `s`, key a URL's fingerprint, value {@link PRESENT}. */
const SEEN = keyRange("s");

/** The operation that adds `fingerprint` to the seen set. */
export function seenOp(fingerprint: bigint): StateOp {
  return putOp(SEEN, fingerprintKey(fingerprint), PRESENT);
}

/** Calls `visit` with every seen fingerprint, in order. */
export async function forEachSeen(store: StateReader, visit: (fingerprint: bigint) => void): Promise<void> {
  for await (const key of store.range(SEEN).keys()) visit(fingerprintOfKey(key));
}
