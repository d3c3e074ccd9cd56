import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { productToken } from "../../src/agent/agent-options.js";
import { EVERY_CRAWLER } from "../../src/robots/robots-cache.js";
import { RobotsRules } from "../../src/robots/robots-rules.js";
import { decodeRobotsTxt } from "../../src/robots/robots-text.js";
import { parseTextProto, type TextMessage, type TextValue } from "./textproto.js";

/**
 * Google's robots.txt conformance suite (google/robotstxt-spec-test, see conformance/README.md): every
 * expectation a crawler can show by fetching a URL or not, checked against the rules as an agent reads
 * them (bytes decoded as the robots cache decodes them, then parsed) when the suite's user agent is its
 * User-Agent header (so `Foo Bar`, no product token, obeys only the groups for every crawler).
 */

const ROOT = join(import.meta.dirname, "conformance");

interface Expectation {
  readonly file: string;
  readonly robotsTxt: Buffer;
  readonly url: string;
  readonly userAgent: string;
  readonly allowed: boolean;
  readonly googleSpecific: boolean;
}

/**
 * Why an expectation cannot be shown by a crawler, or undefined when it can: a crawler requests
 * absolute, percent-encoded URLs (a URL with raw non-ASCII characters is encoded before any request,
 * so its raw form is never matched — the suite itself notes that encoding is the caller's part).
 */
function notShowable(expectation: Expectation): string | undefined {
  if (!/^https?:\/\//.test(expectation.url)) return "not an absolute http(s) URL";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range itself
  if (/[^\x00-\x7f]/.test(expectation.url)) return "a URL a crawler sends percent-encoded";
  return undefined;
}

function text(value: TextValue | undefined): string {
  return value === undefined ? "" : (value as Buffer).toString("utf8");
}

function readSuite(): Expectation[] {
  const all: Expectation[] = [];
  for (const folder of ["correctness", "stress"]) {
    for (const name of readdirSync(join(ROOT, folder))
      .filter((file) => file.endsWith(".textproto"))
      .sort()) {
      const spec = parseTextProto(readFileSync(join(ROOT, folder, name), "utf8"));
      for (const test of (spec.tests?.[0] ?? []) as TextMessage[]) {
        const robotsTxt = (test.robotstxt?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
        for (const expectation of (test.test_expectations?.[0] ?? []) as TextMessage[]) {
          all.push({
            file: `${folder}/${name}`,
            robotsTxt,
            url: text(expectation.testurl?.[0]),
            userAgent: text(expectation.useragent?.[0]),
            allowed: expectation.expected_outcome?.[0] === "ALLOWED",
            googleSpecific: expectation.test_type?.[0] === "GOOGLE_SPECIFIC",
          });
        }
      }
    }
  }
  return all;
}

/**
 * The one expectation ubicrawl answers the other way, on purpose: under `Disallow: /`, `Allow:
 * /foo/bar/%62%61%7A` allows `/foo/bar/baz` too. An agent requests every URL in its canonical form,
 * escapes of unreserved characters decoded (RFC 3986 §6.2.2.2), so `/foo/bar/%62%61%7A` and
 * `/foo/bar/baz` are one URL to it, and the suite's next expectation (the encoded URL allowed) can
 * only hold with this one reversed; RFC 9309 §2.2.2 matches the rule as `/foo/bar/baz` too, where
 * Google's literal matching (which the suite itself says "should not be relied on") does not.
 */
function deviates(expectation: Expectation): boolean {
  return (
    expectation.file === "correctness/non-ascii-paths.textproto" &&
    expectation.url === "http://foo.bar/foo/bar/baz" &&
    expectation.robotsTxt.toString("latin1").includes("Allow: /foo/bar/%62%61%7A")
  );
}

/** The rules as an agent whose User-Agent header is `userAgent` reads them. */
function rulesOf(expectation: Expectation): RobotsRules {
  return new RobotsRules(
    {
      origin: new URL(expectation.url).origin,
      status: "parsed",
      fetchedAtMs: 0,
      expiresAtMs: 1,
      text: decodeRobotsTxt(expectation.robotsTxt),
    },
    {
      userAgent: productToken(expectation.userAgent) ?? EVERY_CRAWLER,
      minCrawlDelayMs: 0,
      maxCrawlDelayMs: 0,
    },
  );
}

const suite = readSuite();
const showable = suite.filter((expectation) => notShowable(expectation) === undefined);

describe("google/robotstxt-spec-test", () => {
  it("is read whole: 400 expectations, 394 of them a crawler can show, one answered the other way", () => {
    expect(suite).toHaveLength(400);
    const reasons = new Map<string, number>();
    for (const expectation of suite) {
      const reason = notShowable(expectation);
      if (reason !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    expect(Object.fromEntries(reasons)).toEqual({
      "not an absolute http(s) URL": 4,
      "a URL a crawler sends percent-encoded": 2,
    });
    expect(showable).toHaveLength(394);
    expect(showable.filter(deviates)).toHaveLength(1);
    expect(showable.filter((expectation) => expectation.googleSpecific).length).toBeGreaterThan(0);
  });

  it("allows Allow: /foo/bar/%62%61%7A under Disallow: / (non-ascii-paths)", () => {
    const cases = showable.filter((expectation) => expectation.robotsTxt.includes("/foo/bar/%62%61%7A"));
    expect(cases.map(({ url, allowed }) => ({ url, allowed }))).toEqual([
      { url: "http://foo.bar/foo/bar/baz", allowed: false },
      { url: "http://foo.bar/foo/bar/%62%61%7A", allowed: true },
    ]);
    expect(cases.map((expectation) => rulesOf(expectation).isAllowed(expectation.url))).toEqual([true, true]);
  });

  it("does not let a crawler whose user agent is Foo Bar obey User-Agent: Foo Bar (user-agent-name)", () => {
    const cases = showable.filter((expectation) => expectation.robotsTxt.includes("User-Agent: Foo Bar\n"));
    expect(cases.map(({ userAgent, url, allowed }) => ({ userAgent, url, allowed }))).toEqual([
      { userAgent: "Foo", url: "http://foo.bar/x/y", allowed: true },
      { userAgent: "Foo Bar", url: "http://foo.bar/x/y", allowed: false },
    ]);
    expect(cases.map((expectation) => rulesOf(expectation).isAllowed(expectation.url))).toEqual([
      true,
      false,
    ]);
  });

  const byFile = new Map<string, Expectation[]>();
  for (const expectation of showable)
    byFile.set(expectation.file, [...(byFile.get(expectation.file) ?? []), expectation]);
  for (const [file, expectations] of byFile) {
    describe(file, () => {
      it.each(
        expectations.map((expectation, index) => ({
          expectation,
          name: `#${index} ${expectation.userAgent} ${expectation.url} → ${expectation.allowed ? "ALLOWED" : "DISALLOWED"}${deviates(expectation) ? " (reversed on purpose: see deviates)" : ""}`,
        })),
      )("$name", ({ expectation }) => {
        const text = JSON.stringify(expectation.robotsTxt.toString("latin1"));
        expect(rulesOf(expectation).isAllowed(expectation.url), text).toBe(
          deviates(expectation) ? !expectation.allowed : expectation.allowed,
        );
      });
    });
  }
});
