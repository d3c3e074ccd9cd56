import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base32, sha1Digest } from "../../src/storage/warc-record.js";

describe("sha1Digest", () => {
  it("is `sha1:` and the base32 of the SHA-1 of the chunks, one chunk or several alike", () => {
    // FIPS 180 test vector: SHA-1("abc") = a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d.
    const abc = new TextEncoder().encode("abc");
    expect(sha1Digest([abc])).toBe("sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    const body = new Uint8Array(17_000).map((_, i) => (i * 31) % 251);
    const whole = sha1Digest([body]);
    expect(sha1Digest([body.subarray(0, 5_000), body.subarray(5_000)])).toBe(whole);
    expect(whole).toBe(`sha1:${base32(createHash("sha1").update(body).digest())}`);
    expect(sha1Digest([])).toBe(`sha1:${base32(createHash("sha1").digest())}`);
  });
});
