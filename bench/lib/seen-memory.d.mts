/** Bytes of a fresh seen set filled with `urls` fingerprints. */
export function seenSetMemory(urls: number): { urls: number; bytes: number; bytesPerUrl: number };
