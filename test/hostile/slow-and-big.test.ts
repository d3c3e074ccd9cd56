import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { rejectionOf, TEST_TIMEOUTS, until, useHostileWeb } from "./helpers.js";

/** Slow, endless, huge and compressed-bomb bodies: every fetch ends in bounded time and memory. */

const CAP = 1024 * 1024;
const fixture = useHostileWeb({ bombDecodedBytes: 512 * 1024 * 1024 });
/** Generous bound on a fetch that the total deadline must end (the machine may be busy). */
const BOUND_MS = (TEST_TIMEOUTS.totalTimeoutMs as number) + 3000;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
}

describe("slow servers end in timeouts", () => {
  it("slowloris headers (one byte per interval, never finished) end in HeadersTimeout", async () => {
    const { web } = fixture;
    const { value: error, ms } = await timed(() =>
      rejectionOf(fixture.fetcher().fetch(web.url("slow-headers", "/"))),
    );
    expect(isUbiError(error, ErrorCode.HeadersTimeout), String(error)).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
    // The client dropped the connection: nothing is left dripping.
    const request = web.traffic.requests.find((r) => r.url === web.url("slow-headers", "/"));
    await until(() => request?.endedAtMs !== undefined, "the slowloris connection to close");
  });

  it("a body dripping one byte per interval ends in BodyTimeout, though it never goes idle", async () => {
    const { value: error, ms } = await timed(() =>
      rejectionOf(fixture.fetcher().fetch(fixture.web.url("drip-body", "/"))),
    );
    expect(isUbiError(error, ErrorCode.BodyTimeout), String(error)).toBe(true);
    expect(ms).toBeLessThan(BOUND_MS);
  });
});

describe("endless, huge and bomb bodies stop at the cap", () => {
  it("an endless body is truncated at the cap and the connection dropped", async () => {
    const { web } = fixture;
    const result = await fixture.fetcher({ maxBodyBytes: CAP }).fetch(web.url("endless-body", "/"));
    expect(result.status).toBe(200);
    expect(result.truncated).toBe(true);
    expect(result.body.length).toBe(CAP);
    expect(result.body.subarray(0, 3).toString()).toBe("<p>");
    const request = web.traffic.requests.find((r) => r.url === web.url("endless-body", "/"));
    await until(() => request?.endedAtMs !== undefined, "the endless response to end");
  });

  it("a 1 GB body (with its Content-Length) is truncated; the server stops long before 1 GB", async () => {
    const { web } = fixture;
    const result = await fixture.fetcher({ maxBodyBytes: CAP }).fetch(web.url("huge-body", "/"));
    expect(result.truncated).toBe(true);
    expect(result.body.length).toBe(CAP);
    expect(result.wireBytes).toBeLessThan(web.options.hugeBodyBytes / 16);
    const request = web.traffic.requests.find((r) => r.url === web.url("huge-body", "/"));
    await until(() => request?.endedAtMs !== undefined, "the huge response to end");
  });

  it("with bodyOverflow error, the 1 GB body is refused as BodyTooLarge", async () => {
    const fetcher = fixture.fetcher({ maxBodyBytes: CAP, bodyOverflow: "error" });
    const error = await rejectionOf(fetcher.fetch(fixture.web.url("huge-body", "/")));
    expect(isUbiError(error, ErrorCode.BodyTooLarge), String(error)).toBe(true);
  });

  it("a gzip bomb decodes to the cap only: small on the wire, truncated, zeros", async () => {
    const result = await fixture.fetcher({ maxBodyBytes: CAP }).fetch(fixture.web.url("gzip-bomb", "/"));
    expect(result.status).toBe(200);
    expect(result.truncated).toBe(true);
    expect(result.body.length).toBe(CAP);
    expect(result.body.every((byte) => byte === 0)).toBe(true);
    // The whole 512 MiB bomb is about 0.5 MB compressed: below the cap on the wire, so it arrived whole.
    expect(result.rawBody.length).toBe(result.wireBytes);
    expect(result.rawBody.length).toBeLessThan(CAP);
    // And it really is a bomb: its first member alone decodes to 64 MiB.
    const memberEnd = result.rawBody.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), 10);
    expect(gunzipSync(result.rawBody.subarray(0, memberEnd)).length).toBe(64 * 1024 * 1024);
  });

  it("with bodyOverflow error, the gzip bomb is refused as BodyTooLarge", async () => {
    const fetcher = fixture.fetcher({ maxBodyBytes: CAP, bodyOverflow: "error" });
    const error = await rejectionOf(fetcher.fetch(fixture.web.url("gzip-bomb", "/")));
    expect(isUbiError(error, ErrorCode.BodyTooLarge), String(error)).toBe(true);
  });

  it("a per-call cap below the fetcher's truncates even in error mode (what robots.txt uses)", async () => {
    const fetcher = fixture.fetcher({ maxBodyBytes: CAP, bodyOverflow: "error" });
    const result = await fetcher.fetch(fixture.web.url("endless-body", "/"), { maxBodyBytes: 1000 });
    expect(result.truncated).toBe(true);
    expect(result.body.length).toBe(1000);
    const bomb = await fetcher.fetch(fixture.web.url("gzip-bomb", "/"), { maxBodyBytes: 1000 });
    expect(bomb.truncated).toBe(true);
    expect(bomb.body.length).toBe(1000);
    await expect(fetcher.fetch(fixture.web.url("control", "/"), { maxBodyBytes: 0 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
  });
});
