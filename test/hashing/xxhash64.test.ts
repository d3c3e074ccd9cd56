import { describe, expect, it } from "vitest";
import { loadHasher64 } from "../../src/hashing/xxhash64.js";

describe("loadHasher64", () => {
  it("hashes bytes as it hashes the same text's UTF-8 bytes, with and without a seed", async () => {
    const hasher = await loadHasher64();
    const text = "héllo.ubi.test:8080";
    const bytes = new TextEncoder().encode(text);
    expect(hasher.hashBytes(bytes)).toBe(hasher.hashString(text));
    expect(hasher.hashBytes(bytes, 7n)).toBe(hasher.hashString(text, 7n));
    expect(hasher.hashBytes(bytes, 7n)).not.toBe(hasher.hashBytes(bytes));
    // xxh64 of the empty input with seed 0 (the reference value).
    expect(hasher.hashBytes(new Uint8Array(0))).toBe(0xef46db3751d8e999n);
  });

  it("loads the WebAssembly module once and shares the hasher", async () => {
    expect(await loadHasher64()).toBe(await loadHasher64());
  });
});
