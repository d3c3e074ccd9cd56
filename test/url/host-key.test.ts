import { describe, expect, it } from "vitest";
import { hostKey, hostnameOf, inScope, normalizeUrl, originOf } from "../../src/url/index.js";

function canonical(raw: string): string {
  const url = normalizeUrl(raw);
  if (url === null) throw new Error(`test URL does not normalize: ${raw}`);
  return url;
}

describe("hostKey", () => {
  it("matches WHATWG url.host for canonical URLs", () => {
    for (const raw of [
      "http://example.org/a",
      "https://example.org:8443/a?b",
      "http://example.org:80/",
      "https://example.org:443/x",
      "http://127.0.0.1:9000/",
      "http://[::1]:8080/p",
      "https://[2001:db8::1]/",
      "http://bücher.example/",
    ]) {
      const url = canonical(raw);
      expect(hostKey(url), raw).toBe(new URL(url).host);
    }
  });

  it("keeps non-default ports and drops default ones", () => {
    expect(hostKey(canonical("http://Example.org:8080/x"))).toBe("example.org:8080");
    expect(hostKey(canonical("https://example.org:443/x"))).toBe("example.org");
  });
});

describe("originOf", () => {
  it("returns scheme://host[:port]", () => {
    expect(originOf(canonical("https://example.org:8443/a/b?c=d"))).toBe("https://example.org:8443");
    expect(originOf(canonical("http://example.org/"))).toBe("http://example.org");
    expect(originOf(canonical("http://[::1]:81/x"))).toBe(new URL("http://[::1]:81/x").origin);
  });
});

describe("hostnameOf", () => {
  it("strips the port, also after an IPv6 literal", () => {
    expect(hostnameOf("example.org:8080")).toBe("example.org");
    expect(hostnameOf("example.org")).toBe("example.org");
    expect(hostnameOf("[::1]:8080")).toBe("[::1]");
    expect(hostnameOf("[::1]")).toBe("[::1]");
  });
});

describe("inScope", () => {
  it("accepts everything when there is no scope", () => {
    expect(inScope("anything.example", [])).toBe(true);
  });

  it("accepts the scope domain itself and its subdomains, with any port", () => {
    const scopes = ["example.org", "test.net"];
    expect(inScope("example.org", scopes)).toBe(true);
    expect(inScope("a.b.example.org", scopes)).toBe(true);
    expect(inScope("www.example.org:8080", scopes)).toBe(true);
    expect(inScope("test.net:81", scopes)).toBe(true);
  });

  it("rejects look-alike suffixes and parents", () => {
    const scopes = ["example.org"];
    expect(inScope("badexample.org", scopes)).toBe(false);
    expect(inScope("example.org.evil.net", scopes)).toBe(false);
    expect(inScope("org", scopes)).toBe(false);
    expect(inScope("other.net", scopes)).toBe(false);
  });

  it("matches IP addresses exactly only", () => {
    expect(inScope("127.0.0.1:8080", ["127.0.0.1"])).toBe(true);
    expect(inScope("10.0.0.1", ["0.0.1"])).toBe(false);
    expect(inScope("[::1]:80", ["[::1]"])).toBe(true);
  });

  it("ignores empty scope strings", () => {
    expect(inScope("example.org", [""])).toBe(false);
  });
});
