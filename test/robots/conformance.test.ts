import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RobotsRules } from "../../src/robots/robots-rules.js";
import { decodeRobotsTxt } from "../../src/robots/robots-text.js";
import { parseTextProto, type TextMessage, type TextValue } from "./textproto.js";

/**
 * Google's robots.txt conformance suite (google/robotstxt-spec-test, see conformance/README.md): every
 * expectation a crawler can show by fetching a URL or not, checked against the rules as an agent reads
 * them (bytes decoded as the robots cache decodes them, then parsed).
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
 * Why an expectation cannot be shown by a crawler, or undefined when it can: a crawler is configured
 * with a product token (RFC 9309 §2.2.1: letters, `_` and `-`) and requests absolute, percent-encoded
 * URLs (a URL with raw non-ASCII characters is encoded before any request, so its raw form is never
 * matched — the suite itself notes that encoding is the caller's part).
 */
function notShowable(expectation: Expectation): string | undefined {
  if (!/^[A-Za-z_-]+$/.test(expectation.userAgent)) return "not a product token";
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

const suite = readSuite();
const showable = suite.filter((expectation) => notShowable(expectation) === undefined);

describe("google/robotstxt-spec-test", () => {
  it("is read whole: 400 expectations, 390 of them a crawler can show", () => {
    expect(suite).toHaveLength(400);
    const reasons = new Map<string, number>();
    for (const expectation of suite) {
      const reason = notShowable(expectation);
      if (reason !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    expect(Object.fromEntries(reasons)).toEqual({
      "not a product token": 6,
      "not an absolute http(s) URL": 2,
      "a URL a crawler sends percent-encoded": 2,
    });
    expect(showable).toHaveLength(390);
    expect(showable.filter((expectation) => expectation.googleSpecific).length).toBeGreaterThan(0);
  });

  const byFile = new Map<string, Expectation[]>();
  for (const expectation of showable)
    byFile.set(expectation.file, [...(byFile.get(expectation.file) ?? []), expectation]);
  for (const [file, expectations] of byFile) {
    describe(file, () => {
      it.each(
        expectations.map((expectation, index) => ({
          ...expectation,
          name: `#${index} ${expectation.userAgent} ${expectation.url} → ${expectation.allowed ? "ALLOWED" : "DISALLOWED"}`,
        })),
      )("$name", ({ robotsTxt, url, userAgent, allowed }) => {
        const rules = new RobotsRules(
          {
            origin: new URL(url).origin,
            status: "parsed",
            fetchedAtMs: 0,
            expiresAtMs: 1,
            text: decodeRobotsTxt(robotsTxt),
          },
          { userAgent: userAgent.toLowerCase(), minCrawlDelayMs: 0, maxCrawlDelayMs: 0 },
        );
        expect(rules.isAllowed(url), JSON.stringify(robotsTxt.toString("latin1"))).toBe(allowed);
      });
    });
  }
});
