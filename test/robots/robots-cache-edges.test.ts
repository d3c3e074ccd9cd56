import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError, UbiError } from "../../src/errors.js";
import type { Fetcher } from "../../src/fetching/index.js";
import { RobotsCache, type RobotsCacheOptions } from "../../src/robots/index.js";
import { ManualClock } from "../support/manual-clock.js";

interface Answer {
  status: number;
  body?: string;
  truncated?: boolean;
  headers?: [string, string][];
}

/** A cache over a fetcher that answers from `answers` by URL; every request is recorded. */
function cacheOver(answers: Record<string, Answer>, options: Partial<RobotsCacheOptions> = {}) {
  const requests: { url: string; options: unknown }[] = [];
  const fetcher: Pick<Fetcher, "fetch"> = {
    fetch: async (url: string, fetchOptions?: unknown) => {
      requests.push({ url, options: fetchOptions });
      const answer = answers[url] ?? { status: 404 };
      const body = Buffer.from(answer.body ?? "");
      return {
        status: answer.status,
        responseHeaders: answer.headers ?? [],
        body,
        truncated: answer.truncated ?? false,
      } as unknown as Awaited<ReturnType<Fetcher["fetch"]>>;
    },
  };
  const clock = new ManualClock();
  const cache = new RobotsCache({ userAgent: "ubicrawl", ...options }, { fetcher, clock });
  return { cache, clock, requests };
}

const ROBOTS = "http://x.test/robots.txt";

function outcome(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return isUbiError(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return "ok";
}

describe("RobotsCache edges", () => {
  it("keeps no answer for a request the agent's stop cut before it was sent: asked again next time", async () => {
    let stopped = true;
    let requests = 0;
    const fetcher: Pick<Fetcher, "fetch"> = {
      fetch: async () => {
        if (stopped) throw new UbiError(ErrorCode.Stopped, "scheduler stopped");
        requests++;
        return {
          status: 200,
          responseHeaders: [],
          body: Buffer.from("User-agent: *\nDisallow: /private\n"),
          truncated: false,
        } as unknown as Awaited<ReturnType<Fetcher["fetch"]>>;
      },
    };
    const cache = new RobotsCache({ userAgent: "ubicrawl" }, { fetcher, clock: new ManualClock() });
    const cut = await cache.get("http://x.test");
    expect(cut).toMatchObject({ status: "unavailable", error: ErrorCode.Stopped });
    expect(cache.peek("http://x.test")).toBeUndefined();
    stopped = false;
    expect(await cache.get("http://x.test")).toMatchObject({ status: "parsed" });
    expect(requests).toBe(1);
  });

  it("checks its options, naming the bad one", () => {
    const make = (options: Partial<RobotsCacheOptions>) => outcome(() => cacheOver({}, options));
    const invalid = `${ErrorCode.InvalidArgument}: `;
    expect(make({ userAgent: "ubi crawl" })).toBe(
      `${invalid}userAgent must be a product token (letters, "_" and "-") or "*", got ubi crawl`,
    );
    expect(make({ userAgent: "1ubicrawl" })).not.toBe("ok");
    // A crawler without a product token obeys the groups for every crawler only.
    expect(make({ userAgent: "*" })).toBe("ok");
    expect(make({ userAgent: "**" })).not.toBe("ok");
    expect(make({ userAgent: 5 as never })).not.toBe("ok");
    // Not a string, though it reads as a product token: refused as an option, not a TypeError later.
    expect(make({ userAgent: ["ubicrawl"] as never })).toBe(
      `${invalid}userAgent must be a product token (letters, "_" and "-") or "*", got ubicrawl`,
    );
    expect(make({ ttlMs: -1 })).toBe(`${invalid}ttlMs must be a finite number >= 0, got -1`);
    expect(make({ maxBytes: 0 })).toBe(`${invalid}maxBytes must be a positive integer, got 0`);
    expect(make({ maxRedirects: -1 })).toBe(`${invalid}maxRedirects must be an integer >= 0, got -1`);
    expect(make({ maxRedirects: 1.5 })).not.toBe("ok");
    expect(make({ maxRedirects: 0 })).toBe("ok");
    expect(make({ minCrawlDelayMs: Number.NaN })).toBe(
      `${invalid}minCrawlDelayMs must be a finite number >= 0, got NaN`,
    );
    expect(make({ maxCrawlDelayMs: -5 })).toBe(
      `${invalid}maxCrawlDelayMs must be a finite number >= 0, got -5`,
    );
    expect(make({ minCrawlDelayMs: 10, maxCrawlDelayMs: 9 })).toBe(
      `${invalid}minCrawlDelayMs must not exceed maxCrawlDelayMs`,
    );
    expect(make({ minCrawlDelayMs: 10, maxCrawlDelayMs: 10 })).toBe("ok");
    expect(make({ unavailableRetryMs: -1 })).toBe(
      `${invalid}unavailableRetryMs must be a finite number >= 0, got -1`,
    );
    expect(make({ maxEntries: 1.5 })).toBe(`${invalid}maxEntries must be a positive integer, got 1.5`);
  });

  it("matches its product token whatever case it was given in", async () => {
    const { cache } = cacheOver(
      { [ROBOTS]: { status: 200, body: "User-agent: ubicrawl\nDisallow: /a\n" } },
      { userAgent: "UbiCrawl" },
    );
    expect((await cache.get("http://x.test")).isAllowed("http://x.test/a")).toBe(false);
  });

  it("asks for plain text, capped at maxBytes", async () => {
    const { cache, requests } = cacheOver({}, { maxBytes: 1234 });
    await cache.get("http://x.test");
    expect(requests).toEqual([
      { url: ROBOTS, options: { accept: "text/plain,*/*;q=0.5", maxBodyBytes: 1234 } },
    ]);
  });

  it("maps statuses at the edges of each class", async () => {
    const statusOf = async (status: number) => {
      const { cache } = cacheOver({ [ROBOTS]: { status, body: "User-agent: *\nDisallow: /", headers: [] } });
      return (await cache.get("http://x.test")).status;
    };
    expect(await statusOf(200)).toBe("parsed");
    expect(await statusOf(299)).toBe("parsed");
    expect(await statusOf(300)).toBe("unavailable"); // a redirect without Location
    expect(await statusOf(399)).toBe("unavailable");
    expect(await statusOf(400)).toBe("allow-all");
    expect(await statusOf(499)).toBe("allow-all");
    expect(await statusOf(500)).toBe("unavailable");
    expect(await statusOf(199)).toBe("unavailable");
    // Only a 3xx is a redirect gone wrong; a 5xx or 1xx is unavailable without an error code.
    const errorOf = async (status: number) => {
      const { cache } = cacheOver({ [ROBOTS]: { status } });
      return (await cache.get("http://x.test")).error;
    };
    expect(await errorOf(300)).toBe(ErrorCode.TooManyRedirects);
    expect(await errorOf(399)).toBe(ErrorCode.TooManyRedirects);
    expect(await errorOf(500)).toBeUndefined();
    expect(await errorOf(199)).toBeUndefined();
  });

  it("takes the Location header among others, and gives up on one that is no URL", async () => {
    const { cache } = cacheOver({
      [ROBOTS]: {
        status: 301,
        headers: [
          ["Content-Type", "text/html"],
          ["Location", "/r1"],
        ],
      },
      "http://x.test/r1": { status: 200, body: "User-agent: *\nDisallow: /c\n" },
    });
    expect((await cache.get("http://x.test")).status).toBe("parsed");
    const broken = cacheOver({ [ROBOTS]: { status: 302, headers: [["Location", "http://[nope"]] } });
    expect(await broken.cache.get("http://x.test")).toMatchObject({
      status: "unavailable",
      error: ErrorCode.TooManyRedirects,
      httpStatus: 302,
    });
    // At once: robots.txt is not asked for again.
    expect(broken.requests.map((r) => r.url)).toEqual([ROBOTS]);
  });

  it("follows a redirect named in any case, up to maxRedirects", async () => {
    const answers = {
      [ROBOTS]: { status: 301, headers: [["LOCATION", "/r1"]] as [string, string][] },
      "http://x.test/r1": { status: 302, headers: [["Location", "/r2"]] as [string, string][] },
      "http://x.test/r2": { status: 200, body: "User-agent: *\nDisallow: /b\n" },
    };
    const two = cacheOver(answers, { maxRedirects: 2 });
    expect((await two.cache.get("http://x.test")).status).toBe("parsed");
    const one = cacheOver(answers, { maxRedirects: 1 });
    const rules = await one.cache.get("http://x.test");
    expect(rules).toMatchObject({
      status: "unavailable",
      error: ErrorCode.TooManyRedirects,
      httpStatus: 302,
    });
    expect(one.requests.map((r) => r.url)).toEqual([ROBOTS, "http://x.test/r1"]);
  });

  it("drops the line a cap cut, and reads a body at the cap whole", async () => {
    const text = "User-agent: *\nDisallow: /a\nDisallow: /b\n";
    const cut = cacheOver(
      { [ROBOTS]: { status: 200, body: text, truncated: true } },
      { maxBytes: text.length - 3 },
    );
    const cutRules = await cut.cache.get("http://x.test");
    expect(cutRules.toJSON().text).toBe("User-agent: *\nDisallow: /a\n");
    const whole = cacheOver({ [ROBOTS]: { status: 200, body: text } }, { maxBytes: text.length });
    expect((await whole.cache.get("http://x.test")).toJSON().text).toBe(text);
    const unended = "Disallow: /a\nDisallow: /b";
    const exact = cacheOver({ [ROBOTS]: { status: 200, body: unended } }, { maxBytes: unended.length });
    expect((await exact.cache.get("http://x.test")).toJSON().text).toBe(unended);
    // Longer than the cap though not flagged truncated: cut all the same.
    const over = cacheOver({ [ROBOTS]: { status: 200, body: text } }, { maxBytes: text.length - 1 });
    expect((await over.cache.get("http://x.test")).toJSON().text).toBe("User-agent: *\nDisallow: /a\n");
    // No newline within the cap: the cut line is all there is.
    const oneLine = cacheOver(
      { [ROBOTS]: { status: 200, body: "Disallow: /x", truncated: true } },
      { maxBytes: 4 },
    );
    expect((await oneLine.cache.get("http://x.test")).toJSON().text).toBe("Disa");
  });

  it("keeps at most maxEntries origins, dropping the oldest, and refreshes one in place", async () => {
    const { cache, clock } = cacheOver({}, { maxEntries: 2, ttlMs: 1000 });
    await cache.get("http://a.test");
    await cache.get("http://b.test");
    clock.advance(1000);
    await cache.get("http://a.test"); // expired: fetched again, replaced in place
    expect(cache.size).toBe(2);
    expect(cache.peek("http://b.test")).toBeDefined();
    // a, refreshed in place, is still the oldest entry: c takes its place.
    await cache.get("http://c.test");
    expect(cache.size).toBe(2);
    expect(cache.peek("http://a.test")).toBeUndefined();
    expect(cache.peek("http://b.test/some/page")).toBeDefined();
    cache.delete("http://b.test/x");
    expect(cache.peek("http://b.test")).toBeUndefined();
  });

  it("keeps rules until the instant they expire, not beyond", async () => {
    const { cache, clock } = cacheOver({}, { ttlMs: 1000 });
    const rules = await cache.get("http://x.test");
    expect(cache.restore(rules.toJSON())).toBeDefined();
    clock.advance(1000);
    expect(cache.restore(rules.toJSON())).toBeUndefined();
  });

  it("refuses what is not an http(s) origin, saying why", async () => {
    const { cache } = cacheOver({});
    const reason = (origin: string) =>
      cache.get(origin).then(
        () => "ok",
        (error: unknown) => (isUbiError(error) ? `${error.code}: ${error.message}` : String(error)),
      );
    expect(await reason("not a url")).toBe(`${ErrorCode.InvalidUrl}: not an origin: not a url`);
    const error = await cache.get("not a url").catch((caught: unknown) => caught);
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(await reason("ftp://x.test")).toBe(`${ErrorCode.InvalidUrl}: not an http(s) origin: ftp://x.test`);
    expect(await reason("https://x.test")).toBe("ok");
  });
});
