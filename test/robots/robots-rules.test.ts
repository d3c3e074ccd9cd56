import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { RobotsRules, type RobotsSnapshot } from "../../src/robots/robots-rules.js";

const MATCHING = { userAgent: "ubicrawl", minCrawlDelayMs: 500, maxCrawlDelayMs: 10_000 };
const ORIGIN = "http://x.test";

const parsed = (text: string) =>
  new RobotsRules({ origin: ORIGIN, status: "parsed", fetchedAtMs: 1, expiresAtMs: 2, text }, MATCHING);

describe("RobotsRules", () => {
  it("allows by the rules for its product token, and nothing outside its origin", () => {
    const rules = parsed("User-agent: UbiCrawl\nDisallow: /private\n\nUser-agent: *\nDisallow: /");
    expect(rules.isAllowed(`${ORIGIN}/public`)).toBe(true);
    expect(rules.isAllowed(`${ORIGIN}/private/x`)).toBe(false);
    expect(rules.isAllowed("http://other.test/public")).toBe(false);
  });

  it("allows everything on allow-all and nothing when unavailable", () => {
    const make = (status: "allow-all" | "unavailable") =>
      new RobotsRules({ origin: ORIGIN, status, fetchedAtMs: 1, expiresAtMs: 2 }, MATCHING);
    expect(make("allow-all").isAllowed(`${ORIGIN}/any`)).toBe(true);
    expect(make("unavailable").isAllowed(`${ORIGIN}/any`)).toBe(false);
    expect(make("allow-all").crawlDelayMs).toBeUndefined();
  });

  it("lists no sitemaps unless its robots.txt was parsed", () => {
    for (const status of ["allow-all", "unavailable"] as const) {
      const rules = new RobotsRules({ origin: ORIGIN, status, fetchedAtMs: 1, expiresAtMs: 2 }, MATCHING);
      expect(rules.sitemaps).toEqual([]);
    }
    expect(parsed("Sitemap: http://x.test/s.xml").sitemaps).toEqual(["http://x.test/s.xml"]);
  });

  it("clamps the crawl delay into its bounds, in whole ms, and has none when none is given", () => {
    expect(parsed("User-agent: *\nCrawl-delay: 2.0004").crawlDelayMs).toBe(2000);
    expect(parsed("User-agent: *\nCrawl-delay: 2.0006").crawlDelayMs).toBe(2001);
    expect(parsed("User-agent: *\nCrawl-delay: 0.1").crawlDelayMs).toBe(500);
    expect(parsed("User-agent: *\nCrawl-delay: 3600").crawlDelayMs).toBe(10_000);
    // What the file asked for is kept beside the clamp (--crawl-delay-policy skip reads it).
    expect(parsed("User-agent: *\nCrawl-delay: 3600").askedCrawlDelayMs).toBe(3_600_000);
    expect(parsed("User-agent: *\nCrawl-delay: 0.1").askedCrawlDelayMs).toBe(100);
    expect(parsed("User-agent: *\nDisallow:").askedCrawlDelayMs).toBeUndefined();
    expect(parsed("User-agent: *\nDisallow:").crawlDelayMs).toBeUndefined();
    expect(parsed("User-agent: *\nCrawl-delay: soon").crawlDelayMs).toBeUndefined();
    expect(parsed("User-agent: *\nCrawl-delay: Infinity").crawlDelayMs).toBeUndefined();
    expect(parsed("User-agent: ubicrawl\nCrawl-delay: 4\n\nUser-agent: *\nCrawl-delay: 1").crawlDelayMs).toBe(
      4000,
    );
  });

  it("matches a rule and a URL by their percent escapes in one form, unreserved ones decoded (RFC 9309 §2.2.2)", () => {
    const rules = parsed(
      "User-agent: *\nDisallow: /\nAllow: /foo/bar/%62%61%7A\nAllow: /q%3fa\n\nUser-agent: ubicrawl\n" +
        "Disallow: /%7Euser/\nDisallow: /caf%c3%a9\nAllow: /\n",
    );
    // As an agent requests it (canonical) and as written: one URL.
    expect(rules.isAllowed(`${ORIGIN}/~user/page`)).toBe(false);
    expect(rules.isAllowed(`${ORIGIN}/%7euser/page`)).toBe(false);
    expect(rules.isAllowed(`${ORIGIN}/caf%C3%A9`)).toBe(false);
    expect(rules.isAllowed(`${ORIGIN}/user/page`)).toBe(true);
    const anyone = new RobotsRules(
      {
        origin: ORIGIN,
        status: "parsed",
        fetchedAtMs: 1,
        expiresAtMs: 2,
        text: "User-agent: *\nDisallow: /\nAllow: /foo/bar/%62%61%7A\nAllow: /q%3fa\n",
      },
      { ...MATCHING, userAgent: "*" },
    );
    expect(anyone.isAllowed(`${ORIGIN}/foo/bar/%62%61%7A`)).toBe(true);
    expect(anyone.isAllowed(`${ORIGIN}/foo/bar/baz`)).toBe(true);
    // A reserved character's escape is not the character: `%3F` is no query.
    expect(anyone.isAllowed(`${ORIGIN}/q%3Fa`)).toBe(true);
    expect(anyone.isAllowed(`${ORIGIN}/q?a`)).toBe(false);
  });

  it("round-trips through its snapshot, keeping only the fields that are set", () => {
    const full: RobotsSnapshot = {
      v: 1,
      origin: ORIGIN,
      status: "unavailable",
      fetchedAtMs: 10,
      expiresAtMs: 20,
      retryAtMs: 20,
      error: ErrorCode.ConnectFailed,
      httpStatus: 503,
    };
    expect(RobotsRules.fromJSON(full, MATCHING).toJSON()).toStrictEqual(full);
    const failed: RobotsSnapshot = { ...full, reason: "certificate has expired" };
    const rebuiltFailed = RobotsRules.fromJSON(failed, MATCHING);
    expect(rebuiltFailed.reason).toBe("certificate has expired");
    expect(rebuiltFailed.toJSON()).toStrictEqual(failed);
    const bare: RobotsSnapshot = {
      v: 1,
      origin: ORIGIN,
      status: "allow-all",
      fetchedAtMs: 10,
      expiresAtMs: 20,
    };
    expect(RobotsRules.fromJSON(bare, MATCHING).toJSON()).toStrictEqual(bare);
    const text: RobotsSnapshot = { ...bare, status: "parsed", text: "User-agent: *\nDisallow: /a" };
    const rebuilt = RobotsRules.fromJSON(text, MATCHING);
    expect(rebuilt.toJSON()).toStrictEqual(text);
    expect(rebuilt.isAllowed(`${ORIGIN}/a`)).toBe(false);
    // Parsed rules without text read as an empty robots.txt: everything allowed.
    const empty = RobotsRules.fromJSON({ ...bare, status: "parsed" }, MATCHING);
    expect(empty.toJSON().text).toBe("");
    expect(empty.isAllowed(`${ORIGIN}/a`)).toBe(true);
  });

  it("refuses anything that is not a snapshot", () => {
    const good: RobotsSnapshot = {
      v: 1,
      origin: ORIGIN,
      status: "parsed",
      fetchedAtMs: 1,
      expiresAtMs: 2,
      text: "",
    };
    const bad = [
      null,
      "snapshot",
      { ...good, v: 2 },
      { ...good, origin: 5 },
      { ...good, status: "maybe" },
      { ...good, fetchedAtMs: "1" },
      { ...good, expiresAtMs: undefined },
      { ...good, text: 5 },
      { ...good, reason: 5 },
      // A function carrying every field is still no snapshot (snapshots are JSON).
      Object.assign(() => undefined, good),
    ];
    for (const snapshot of bad) {
      let error: unknown;
      try {
        RobotsRules.fromJSON(snapshot as RobotsSnapshot, MATCHING);
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument), JSON.stringify(snapshot)).toBe(true);
      expect((error as Error).message).toBe("not a robots snapshot");
    }
    for (const status of ["parsed", "allow-all", "unavailable"] as const) {
      expect(RobotsRules.fromJSON({ ...good, status }, MATCHING).status).toBe(status);
    }
  });
});
