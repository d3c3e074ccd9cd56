import { describe, expect, it } from "vitest";
import { hostKey, inScope, MAX_URL_LENGTH, originOf } from "../../src/url/index.js";
import { normalizeUrlSlow } from "../../src/url/normalize.js";
import { normalizePercentEscapes } from "../../src/url/percent.js";

describe("percent escapes at the edges of the unreserved ranges", () => {
  it("decodes a-z, A-Z and 0-9 up to their last character, and uppercases the others", () => {
    expect(normalizePercentEscapes("%61%7A%41%5A%30%39")).toBe("azAZ09");
    expect(normalizePercentEscapes("%60%7B%40%5B%2F%3A")).toBe("%60%7B%40%5B%2F%3A");
    expect(normalizePercentEscapes("%7b%2f")).toBe("%7B%2F");
    expect(normalizePercentEscapes("%2D%2E%5F%7E")).toBe("-._~");
  });

  it("leaves text without escapes as it is, and a lone % too", () => {
    expect(normalizePercentEscapes("/a/b?c=d")).toBe("/a/b?c=d");
    expect(normalizePercentEscapes("/100%")).toBe("/100%");
  });
});

describe("normalizeUrlSlow", () => {
  it("rejects a URL with only a password, as one with a user name", () => {
    expect(normalizeUrlSlow("http://:secret@x.test/")).toBeNull();
    expect(normalizeUrlSlow("http://user@x.test/")).toBeNull();
  });

  it("takes raw input up to 16 times the URL limit, and rejects it beyond", () => {
    // Trailing spaces are trimmed by the parse: the raw input is long, the canonical URL short.
    const limit = 16 * MAX_URL_LENGTH;
    expect(normalizeUrlSlow("http://x.test/a".padEnd(limit, " "))).toBe("http://x.test/a");
    expect(normalizeUrlSlow("http://x.test/a".padEnd(limit + 1, " "))).toBeNull();
  });

  it("keeps a canonical URL of exactly the length limit", () => {
    const url = `http://x.test/${"a".repeat(MAX_URL_LENGTH - 14)}`;
    expect(url).toHaveLength(MAX_URL_LENGTH);
    expect(normalizeUrlSlow(url)).toBe(url);
    expect(normalizeUrlSlow(`${url}a`)).toBeNull();
  });
});

describe("inScope at the edges", () => {
  it("matches IPv4 hosts ending in 0 or 9 only exactly", () => {
    expect(inScope("1.0.0.0:80", ["0.0.0"])).toBe(false);
    expect(inScope("1.0.0.9:80", ["0.0.9"])).toBe(false);
    expect(inScope("1.0.0.9:80", ["1.0.0.9"])).toBe(true);
  });

  it("takes a host name ending in - or . for a name, not an address, and matches its subdomains", () => {
    expect(inScope("www.intranet-:80", ["intranet-"])).toBe(true);
    expect(inScope("www.a.test.:80", ["a.test."])).toBe(true);
  });

  it("skips an empty scope rather than matching every host", () => {
    expect(inScope("a.test.:80", [""])).toBe(false);
    expect(inScope("a.test.:80", ["", "a.test."])).toBe(true);
  });
});

describe("host key and origin of a URL without a path", () => {
  it("runs to the end of the string when there is no slash after the authority", () => {
    expect(hostKey("http://x.test:8080")).toBe("x.test:8080");
    expect(originOf("https://x.test")).toBe("https://x.test");
  });
});
