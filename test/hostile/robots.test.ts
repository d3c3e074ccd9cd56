import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { Fetcher, FetcherOptions, FetchOptions, FetchResult } from "../../src/fetching/index.js";
import { RobotsCache } from "../../src/robots/index.js";
import { TEST_TIMEOUTS, useHostileWeb } from "./helpers.js";

/** Hostile robots.txt files: huge, binary, never answered, 5xx. */

const fixture = useHostileWeb();
const ROBOTS_MAX_BYTES = 500 * 1024;

/** A RobotsCache on a real fetcher (the file's short deadlines, or `options`), keeping every FetchResult it got. */
function robotsCache(options: FetcherOptions = {}): { cache: RobotsCache; results: FetchResult[] } {
  const fetcher = fixture.fetcher(options);
  const results: FetchResult[] = [];
  const recording: Pick<Fetcher, "fetch"> = {
    async fetch(url: string, options?: FetchOptions) {
      const result = await fetcher.fetch(url, options);
      results.push(result);
      return result;
    },
  };
  const cache = new RobotsCache(
    { userAgent: "ubicrawl", maxBytes: ROBOTS_MAX_BYTES },
    { fetcher: recording },
  );
  return { cache, results };
}

describe("hostile robots.txt", () => {
  it("10 MB: only the first 500 KiB are downloaded and applied", async () => {
    const { web } = fixture;
    // Deadlines of seconds, not the file's 800 ms: the cap is under test, not a timeout (500 KiB took
    // over 800 ms on a loaded machine, and the file came back unavailable).
    const { cache, results } = robotsCache({
      headersTimeoutMs: 5000,
      bodyIdleTimeoutMs: 5000,
      totalTimeoutMs: 10_000,
    });
    const rules = await cache.get(web.url("robots-huge", "/"));
    expect(rules.status).toBe("parsed");
    expect(rules.isAllowed(web.url("robots-huge", "/private/secret"))).toBe(false);
    expect(rules.isAllowed(web.url("robots-huge", "/filler/7/x"))).toBe(false);
    // The last rule lies past the cap: never seen, so not applied.
    expect(rules.isAllowed(web.url("robots-huge", "/late/page"))).toBe(true);
    expect(rules.isAllowed(web.url("robots-huge", "/open"))).toBe(true);
    expect(results).toHaveLength(1);
    expect(results[0]?.truncated).toBe(true);
    expect(results[0]?.body.length).toBe(ROBOTS_MAX_BYTES);
    expect(results[0]?.wireBytes).toBeLessThan(web.options.hugeRobotsBytes / 4);
  });

  it("binary garbage around one valid group: parsed, the group applies", async () => {
    const { web } = fixture;
    const rules = await robotsCache().cache.get(web.url("robots-binary", "/"));
    expect(rules.status).toBe("parsed");
    expect(rules.isAllowed(web.url("robots-binary", "/blocked/page"))).toBe(false);
    expect(rules.isAllowed(web.url("robots-binary", "/open"))).toBe(true);
  });

  it("never answered: unavailable (disallow all) after the fetch deadline, as a HeadersTimeout", async () => {
    const { web } = fixture;
    const start = performance.now();
    const rules = await robotsCache().cache.get(web.url("robots-timeout", "/"));
    expect(performance.now() - start).toBeLessThan((TEST_TIMEOUTS.totalTimeoutMs as number) + 3000);
    expect(rules.status).toBe("unavailable");
    expect(rules.error).toBe(ErrorCode.HeadersTimeout);
    expect(rules.isAllowed(web.url("robots-timeout", "/"))).toBe(false);
    expect(rules.retryAtMs).toBeDefined();
  });

  it("503: unavailable (disallow all), with the status kept", async () => {
    const { web } = fixture;
    const rules = await robotsCache().cache.get(web.url("robots-5xx", "/"));
    expect(rules.status).toBe("unavailable");
    expect(rules.httpStatus).toBe(503);
    expect(rules.isAllowed(web.url("robots-5xx", "/"))).toBe(false);
  });

  it("hosts without their own robots.txt answer 404, which allows all", async () => {
    const { web } = fixture;
    const rules = await robotsCache().cache.get(web.url("slow-headers", "/"));
    expect(rules.status).toBe("allow-all");
    expect(rules.isAllowed(web.url("slow-headers", "/"))).toBe(true);
  });
});
