import xxhash from "xxhash-wasm";

/** 64-bit xxhash over strings and bytes, the one hash behind URL fingerprints and circle positions. */
export interface Hasher64 {
  /** xxh64 of the UTF-8 bytes of `text`, as an unsigned 64-bit bigint. */
  hashString(text: string, seed?: bigint): bigint;
  /** xxh64 of raw bytes, as an unsigned 64-bit bigint. */
  hashBytes(bytes: Uint8Array, seed?: bigint): bigint;
}

let loaded: Promise<Hasher64> | undefined;

/** Loads the WebAssembly xxhash once per process and returns the shared hasher. */
export function loadHasher64(): Promise<Hasher64> {
  loaded ??= xxhash().then((api) => ({
    hashString: (text, seed = 0n) => api.h64(text, seed),
    hashBytes: (bytes, seed = 0n) => api.h64Raw(bytes, seed),
  }));
  return loaded;
}
