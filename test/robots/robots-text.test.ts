import { describe, expect, it } from "vitest";
import { RobotsRules } from "../../src/robots/robots-rules.js";
import { decodeRobotsTxt, normalizeRobotsText } from "../../src/robots/robots-text.js";

/** Each way robots.txt is read beyond what robots-parser does, one rule at a time. */

const ORIGIN = "http://site.test";

function allowed(text: string, path: string, userAgent = "foobot"): boolean {
  const rules = new RobotsRules(
    { origin: ORIGIN, status: "parsed", fetchedAtMs: 0, expiresAtMs: 1, text },
    { userAgent, minCrawlDelayMs: 0, maxCrawlDelayMs: 60_000 },
  );
  return rules.isAllowed(`${ORIGIN}${path}`);
}

describe("decodeRobotsTxt", () => {
  it("skips a byte-order mark at the start, whole or only its first bytes", () => {
    for (const bom of [[0xef, 0xbb, 0xbf], [0xef, 0xbb], [0xef]]) {
      const text = decodeRobotsTxt(
        Buffer.concat([Buffer.from(bom), Buffer.from("User-agent: *\nDisallow: /x\n")]),
      );
      expect(text.startsWith("User-agent")).toBe(true);
      expect(allowed(text, "/x")).toBe(false);
    }
  });

  it("keeps broken bytes elsewhere as U+FFFD rather than failing", () => {
    expect(decodeRobotsTxt(Buffer.from([0x41, 0xff, 0x42]))).toBe("A\uFFFDB");
  });
});

describe("normalizeRobotsText", () => {
  it("ignores a line that starts with a byte-order mark in the middle of the file", () => {
    const text = "User-agent: *\n\uFEFFDisallow: /x\n";
    expect(allowed(text, "/x")).toBe(true);
    expect(normalizeRobotsText(text)).not.toContain("/x");
  });

  it("accepts a directive without its colon", () => {
    expect(allowed("user-agent FooBot\ndisallow /\n", "/a")).toBe(false);
    expect(normalizeRobotsText("sitemap http://site.test/s.xml")).toBe("sitemap: http://site.test/s.xml");
  });

  it("reads a user-agent value up to its first character outside a product token", () => {
    expect(allowed("User-agent: Foobot Bar\nDisallow: /\n", "/a")).toBe(false);
    expect(allowed("User-agent: FooBot/2.1\nDisallow: /\n", "/a")).toBe(false);
    expect(allowed("User-agent: foobot*\nDisallow: /\n", "/a")).toBe(false);
    expect(allowed("User-agent: foobot42\nDisallow: /\n", "/a")).toBe(false);
    expect(allowed("User-agent: foobotx\nDisallow: /\n", "/a")).toBe(true);
  });

  it("lets Allow: /dir/index.html allow /dir/ too, and nothing else below it", () => {
    const text = "User-agent: *\nAllow: /dir/index.html\nDisallow: /\n";
    expect(allowed(text, "/dir/")).toBe(true);
    expect(allowed(text, "/dir/index.html")).toBe(true);
    expect(allowed(text, "/dir/other")).toBe(false);
  });

  it("drops pasted HTML and stray text without ending the group", () => {
    const text = "User-agent: foobot\n<br />\nDisallow: /x\n<p>hello</p>\nDisallow: /y\n";
    expect(allowed(text, "/x")).toBe(false);
    expect(allowed(text, "/y")).toBe(false);
    expect(allowed(text, "/z")).toBe(true);
  });

  it("leaves comments, blank lines and unknown directives to robots-parser", () => {
    const text = "# hello\n\nUser-agent: *   # all\nNoindex: /a\nDisallow: /b # not /c\n";
    expect(allowed(text, "/a")).toBe(true);
    expect(allowed(text, "/b")).toBe(false);
    expect(allowed(text, "/c")).toBe(true);
  });

  it("accepts every directive without its colon: allow, crawl-delay and sitemap too", () => {
    const text =
      "user-agent foobot\ndisallow /\nallow /open\ncrawl-delay 5\nsitemap http://site.test/s.xml\n";
    expect(allowed(text, "/open/x")).toBe(true);
    expect(allowed(text, "/closed")).toBe(false);
    const rules = new RobotsRules(
      { origin: ORIGIN, status: "parsed", fetchedAtMs: 0, expiresAtMs: 1, text },
      { userAgent: "foobot", minCrawlDelayMs: 0, maxCrawlDelayMs: 60_000 },
    );
    expect(rules.crawlDelayMs).toBe(5000);
    expect(rules.sitemaps).toEqual(["http://site.test/s.xml"]);
  });

  it("keeps a user-agent value that starts with no product token as it is: it names no crawler", () => {
    const text = "User-agent: 123bot\nDisallow: /\n";
    expect(allowed(text, "/a", "bot")).toBe(true);
    expect(normalizeRobotsText(text)).toContain("user-agent: 123bot");
  });

  it("applies the index.html rule to a pattern with a wildcard before its last slash too", () => {
    const text = "User-agent: *\nDisallow: /\nAllow: */index.html\n";
    expect(normalizeRobotsText(text).split("\n")).toContain("allow: */$");
    expect(allowed(text, "/any/dir/")).toBe(true);
    expect(allowed(text, "/any/dir/other")).toBe(false);
  });

  it("applies the index.html rule to Allow only, not to Disallow", () => {
    const text = "User-agent: *\nDisallow: /\nDisallow: /dir/index.html\n";
    expect(allowed(text, "/dir/")).toBe(false);
  });

  it("rewrites line by line: blank and comment lines kept, lines that are no directive dropped, values trimmed at their end", () => {
    const text = [
      "# hello",
      "",
      "   ",
      "User-agent: *   # all",
      "foo bar",
      "disallow",
      "disallow /x",
      "Disallow:   /b  ",
      "",
    ].join("\n");
    expect(normalizeRobotsText(text).split("\n")).toEqual([
      "# hello",
      "",
      "   ",
      "user-agent: *",
      "disallow: /x",
      "Disallow: /b",
      "",
    ]);
  });

  it("decodes a body that is only a byte-order mark, or a part of one, to nothing", () => {
    for (const bom of [[0xef, 0xbb, 0xbf], [0xef, 0xbb], [0xef], []]) {
      expect(decodeRobotsTxt(Buffer.from(bom))).toBe("");
    }
  });

  it("skips only the first byte-order mark: a second one spoils the line it starts", () => {
    const bom = [0xef, 0xbb, 0xbf];
    const text = decodeRobotsTxt(
      Buffer.concat([Buffer.from([...bom, ...bom]), Buffer.from("User-agent: foobot\nDisallow: /x\n")]),
    );
    expect(text.startsWith("\uFEFFUser-agent")).toBe(true);
    // The group line is dropped, so its rule has no group: nothing is disallowed for foobot.
    expect(allowed(text, "/x")).toBe(true);
  });
});
