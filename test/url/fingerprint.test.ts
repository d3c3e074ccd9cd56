import { describe, expect, it } from "vitest";
import type { Hasher64 } from "../../src/hashing/xxhash64.js";
import { UrlFingerprinter } from "../../src/url/index.js";

describe("UrlFingerprinter", () => {
  it("gives the reference xxh64 values (stable across processes and versions)", async () => {
    const fingerprinter = await UrlFingerprinter.create();
    // Reference vectors of XXH64 with seed 0.
    expect(fingerprinter.fingerprint("")).toBe(0xef46db3751d8e999n);
    expect(fingerprinter.fingerprint("abc")).toBe(0x44bc2cf5ad770999n);
    expect(fingerprinter.fingerprint("http://example.org/")).toBe(0x5ca3af779db3b833n);
  });

  it("is stable across calls and instances, and distinguishes URLs", async () => {
    const a = await UrlFingerprinter.create();
    const b = await UrlFingerprinter.create();
    const url = "http://example.org/some/page?x=1";
    expect(a.fingerprint(url)).toBe(a.fingerprint(url));
    expect(a.fingerprint(url)).toBe(b.fingerprint(url));
    expect(a.fingerprint(url)).not.toBe(a.fingerprint("http://example.org/some/page?x=2"));
  });

  it("hashes UTF-8 bytes and fits in 64 unsigned bits", async () => {
    const fingerprinter = await UrlFingerprinter.create();
    const value = fingerprinter.fingerprint("http://xn--bcher-kva.example/caf%C3%A9");
    expect(value).toBeGreaterThan(0n);
    expect(value).toBeLessThan(1n << 64n);
    expect(fingerprinter.fingerprint("é")).not.toBe(fingerprinter.fingerprint("\u00c3\u00a9"));
  });

  it("never returns 0n: a zero hash is remapped to 1n", () => {
    const zeroHasher: Hasher64 = { hashString: () => 0n, hashBytes: () => 0n };
    expect(new UrlFingerprinter(zeroHasher).fingerprint("http://example.org/")).toBe(1n);
    const sevenHasher: Hasher64 = { hashString: () => 7n, hashBytes: () => 7n };
    expect(new UrlFingerprinter(sevenHasher).fingerprint("http://example.org/")).toBe(7n);
  });
});
