/**
 * Key encodings several owners of the state share: 64-bit fingerprints as fixed-width hex (so keys sort
 * by number), and keys scoped by a host or peer (`scope NUL fingerprint`), so that one scope's keys are
 * one contiguous run.
 */

/** Between a key's scope (a host or peer) and the rest. */
export const SCOPE_SEP = "\u0000";

/**
 * The value of a key that only marks its presence (seen and fetched fingerprints). Not the empty
 * string: classic-level 3 copies every key and value of a batch into a `new char[size + 1]` and frees
 * the copy only when it is not empty, so each empty value leaked a 32-byte malloc chunk, for good:
 * 305 MiB of glibc's main arena at 10 M queued URLs (`bench/frontier.mjs`).
 */
export const PRESENT = "1";

/** `fingerprint` as 16 hex digits. */
export function fingerprintKey(fingerprint: bigint): string {
  return fingerprint.toString(16).padStart(16, "0");
}

/** The fingerprint of a {@link fingerprintKey}. */
export function fingerprintOfKey(key: string): bigint {
  return BigInt(`0x${key}`);
}

/** The key of `fingerprint` within `scope`. */
export function scopedFingerprintKey(scope: string, fingerprint: bigint): string {
  return scope + SCOPE_SEP + fingerprintKey(fingerprint);
}

/** A key written by {@link scopedFingerprintKey}, split back. */
export function splitScopedFingerprintKey(key: string): { scope: string; fingerprint: bigint } {
  const sep = key.lastIndexOf(SCOPE_SEP);
  return { scope: key.slice(0, sep), fingerprint: fingerprintOfKey(key.slice(sep + 1)) };
}

/** Iterator bounds of every key of `scope` (and of no other scope). */
export function scopeBounds(scope: string): { gt: string; lt: string } {
  return { gt: scope + SCOPE_SEP, lt: `${scope}\u0001` };
}
