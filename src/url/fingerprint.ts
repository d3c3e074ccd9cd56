/** 64-bit URL fingerprints, the only form in which URLs live in the seen set. */

import { type Hasher64, loadHasher64 } from "../hashing/xxhash64.js";

/** Turns canonical URLs into 64-bit fingerprints (xxh64, seed 0, over the URL's UTF-8 bytes). */
export class UrlFingerprinter {
  readonly #hasher: Hasher64;

  /** Wraps an already loaded hasher; most callers want {@link UrlFingerprinter.create}. */
  constructor(hasher: Hasher64) {
    this.#hasher = hasher;
  }

  /** Loads the shared xxhash64 WebAssembly module and returns a fingerprinter on it. */
  static async create(): Promise<UrlFingerprinter> {
    return new UrlFingerprinter(await loadHasher64());
  }

  /**
   * The xxh64 of `canonicalUrl` as an unsigned 64-bit bigint. Never `0n`: a hash of 0 is remapped to
   * `1n`, because 0 marks an empty slot in the seen set's open-addressing table.
   */
  fingerprint(canonicalUrl: string): bigint {
    const hash = this.#hasher.hashString(canonicalUrl);
    return hash === 0n ? 1n : hash;
  }
}
