import { describe, expect, it } from "vitest";
import { fastNormalizeAbsolute, fastNormalizeRelative } from "../../src/url/fast-path.js";
import { MAX_URL_LENGTH, normalizeUrl } from "../../src/url/index.js";
import { normalizeUrlSlow } from "../../src/url/normalize.js";

describe("normalizeUrl rules", () => {
  it("lowercases scheme and host but not the path or query", () => {
    expect(normalizeUrl("HTTP://WWW.Example.ORG/Path/File?Q=A")).toBe("http://www.example.org/Path/File?Q=A");
  });

  it("removes the default port of each scheme and keeps the others", () => {
    expect(normalizeUrl("http://example.org:80/a")).toBe("http://example.org/a");
    expect(normalizeUrl("https://example.org:443/a")).toBe("https://example.org/a");
    expect(normalizeUrl("http://example.org:443/a")).toBe("http://example.org:443/a");
    expect(normalizeUrl("https://example.org:80/a")).toBe("https://example.org:80/a");
    expect(normalizeUrl("http://example.org:0080/a")).toBe("http://example.org/a");
    expect(normalizeUrl("http://127.0.0.1:8080/")).toBe("http://127.0.0.1:8080/");
  });

  it("resolves dot segments, including escaped ones", () => {
    expect(normalizeUrl("http://example.org/a/./b/../c")).toBe("http://example.org/a/c");
    expect(normalizeUrl("http://example.org/a/%2e%2E/c")).toBe("http://example.org/c");
    expect(normalizeUrl("../../../x", "http://example.org/a/b/")).toBe("http://example.org/x");
  });

  it("removes the fragment", () => {
    expect(normalizeUrl("http://example.org/a?b=1#frag")).toBe("http://example.org/a?b=1");
    expect(normalizeUrl("#top", "http://example.org/page?x=1")).toBe("http://example.org/page?x=1");
  });

  it("decodes escapes of unreserved characters and uppercases the others", () => {
    expect(normalizeUrl("http://example.org/%7euser/%41%62%2D%2e%5F")).toBe("http://example.org/~user/Ab-._");
    expect(normalizeUrl("http://example.org/a%2fb%3a?x=%2f%7E%3d")).toBe(
      "http://example.org/a%2Fb%3A?x=%2F~%3D",
    );
    expect(normalizeUrl("http://example.org/%c3%a9")).toBe("http://example.org/%C3%A9");
    // Not an escape: kept literally, as WHATWG does.
    expect(normalizeUrl("http://example.org/100%zz%4")).toBe("http://example.org/100%zz%4");
  });

  it("percent-encodes non-ASCII path characters as UTF-8", () => {
    expect(normalizeUrl("http://example.org/café")).toBe("http://example.org/caf%C3%A9");
  });

  it("converts IDN hosts to punycode", () => {
    expect(normalizeUrl("http://Bücher.example/")).toBe("http://xn--bcher-kva.example/");
    expect(normalizeUrl("https://例え.テスト/")).toBe("https://xn--r8jz45g.xn--zckzah/");
  });

  it("gives an empty path as /", () => {
    expect(normalizeUrl("http://example.org")).toBe("http://example.org/");
    expect(normalizeUrl("http://example.org?a=1")).toBe("http://example.org/?a=1");
  });

  it("drops an empty query but keeps a non-empty one in order", () => {
    expect(normalizeUrl("http://example.org/a?")).toBe("http://example.org/a");
    expect(normalizeUrl("http://example.org/a?#x")).toBe("http://example.org/a");
    expect(normalizeUrl("http://example.org/a?z=1&a=2&m=3")).toBe("http://example.org/a?z=1&a=2&m=3");
  });

  it("trims surrounding whitespace and control characters and drops tabs and newlines", () => {
    expect(normalizeUrl("  \t\n http://example.org/a \u0000\u001f ")).toBe("http://example.org/a");
    expect(normalizeUrl("http://exa\tmple.org/a\nb\r/c")).toBe("http://example.org/ab/c");
    expect(normalizeUrl(" /x ", "http://example.org/")).toBe("http://example.org/x");
  });

  it("reads backslashes as slashes, as browsers do", () => {
    expect(normalizeUrl("http:\\\\example.org\\a\\b")).toBe("http://example.org/a/b");
    expect(normalizeUrl("\\x\\y", "http://example.org/a/b")).toBe("http://example.org/x/y");
  });

  it("resolves relative references against the base", () => {
    const base = "http://example.org/dir/page.html?old=1";
    expect(normalizeUrl("other.html", base)).toBe("http://example.org/dir/other.html");
    expect(normalizeUrl("/root", base)).toBe("http://example.org/root");
    expect(normalizeUrl("?new=2", base)).toBe("http://example.org/dir/page.html?new=2");
    expect(normalizeUrl("", base)).toBe("http://example.org/dir/page.html?old=1");
    expect(normalizeUrl("//cdn.example.net/x", base)).toBe("http://cdn.example.net/x");
    expect(normalizeUrl("https://secure.example.org/", base)).toBe("https://secure.example.org/");
  });

  it("canonicalizes IPv4 and IPv6 hosts", () => {
    expect(normalizeUrl("http://0x7f.1/")).toBe("http://127.0.0.1/");
    expect(normalizeUrl("http://[0:0::1]:80/")).toBe("http://[::1]/");
  });
});

describe("normalizeUrl rejections", () => {
  it("rejects invalid URLs and relative ones without a base", () => {
    expect(normalizeUrl("")).toBeNull();
    expect(normalizeUrl("not a url")).toBeNull();
    expect(normalizeUrl("/relative/path")).toBeNull();
    expect(normalizeUrl("http://")).toBeNull();
    expect(normalizeUrl("http://exa mple.org/")).toBeNull();
    expect(normalizeUrl("http://example.org:99999/")).toBeNull();
    expect(normalizeUrl("http://a.0x/")).toBeNull();
  });

  it("reads a host whose last label starts with 9 as an IPv4 address, as for any other digit", () => {
    expect(normalizeUrl("http://9/")).toBe("http://0.0.0.9/");
    expect(normalizeUrl("http://a.test.99/")).toBeNull();
    expect(normalizeUrl("http://1.2.3.999/")).toBeNull();
  });

  it("leaves a host with an xn-- label to the full parse, whatever it makes of it", () => {
    // Not valid punycode: Node 20's URL parser refuses "xn--a", Node 26's takes it as it is.
    for (const raw of ["http://xn--a.test/", "http://a.XN--A.test/"]) {
      expect(fastNormalizeAbsolute(raw), raw).toBeUndefined();
      expect(normalizeUrl(raw), raw).toBe(normalizeUrlSlow(raw));
    }
  });

  it("rejects schemes other than http and https", () => {
    for (const raw of [
      "javascript:alert(1)",
      "mailto:a@example.org",
      "data:text/html,x",
      "ftp://example.org/",
    ]) {
      expect(normalizeUrl(raw, "http://example.org/")).toBeNull();
    }
  });

  it("rejects URLs with credentials instead of stripping them", () => {
    expect(normalizeUrl("http://user:pass@example.org/")).toBeNull();
    expect(normalizeUrl("http://user@example.org/")).toBeNull();
    // An empty user info is no credential: WHATWG drops the `@`.
    expect(normalizeUrl("http://@example.org/")).toBe("http://example.org/");
  });

  it("rejects canonical URLs longer than MAX_URL_LENGTH", () => {
    const prefix = "http://example.org/";
    const fits = prefix + "a".repeat(MAX_URL_LENGTH - prefix.length);
    expect(normalizeUrl(fits)).toBe(fits);
    expect(normalizeUrl(`${fits}a`)).toBeNull();
    // The limit is on the canonical form: escapes that decode make a long raw URL fit.
    const escaped = prefix + "%61".repeat(MAX_URL_LENGTH - prefix.length);
    expect(normalizeUrl(escaped)).toBe(fits);
    expect(normalizeUrl("x".repeat(1_000_000), "http://example.org/")).toBeNull();
  });

  it("ignores an invalid base when the reference is absolute", () => {
    expect(normalizeUrl("http://example.org/a", "not a base")).toBe("http://example.org/a");
    expect(normalizeUrl("a", "not a base")).toBeNull();
  });
});

/** A corpus mixing canonical, almost canonical and hostile spellings. */
function corpus(): { raws: string[]; bases: string[] } {
  const hosts = [
    "example.org",
    "EXAMPLE.org",
    "a-b.c-d.example",
    "localhost",
    "127.0.0.1",
    "a.1b",
    "x.0x1",
    "xn--bcher-kva.example",
    "bücher.example",
    "a..b",
    "a.b.",
    "-a.example",
    "a_b.example",
    "[::1]",
    `${"l".repeat(70)}.example`,
  ];
  const ports = ["", ":80", ":443", ":8080", ":0", ":08080", ":65535", ":65536", ":"];
  const paths = [
    "",
    "/",
    "/a/b",
    "/a/./b",
    "/a/../b",
    "/.well-known/x",
    "/%7e/%2f",
    "/a b",
    "/a\\b",
    "/é",
    "/a;p=1/b:c@d",
    "/x'y(z)*",
    "/[]|^",
    "//double",
    "/a/.",
    "/a/..",
    "/a/b/../../..",
    "/a/%2E./b",
    "/a/.%2e/b",
    "/%41%7a%2D/%c3%a9",
    "/a/.../b",
    "/a%",
    "/a%4",
    "/./a/../.b/..c",
  ];
  const queries = ["", "?", "?a=1&b=2", "?q='x'", "?%7E=%7e", "?a=b?c/d", "?é"];
  const fragments = ["", "#", "#frag", "#a b"];
  const raws: string[] = [];
  for (const scheme of ["http", "https", "HTTP"]) {
    for (const host of hosts) {
      for (const port of ports) {
        for (const path of paths) raws.push(`${scheme}://${host}${port}${path}`);
      }
      for (const query of queries) {
        for (const fragment of fragments) raws.push(`${scheme}://${host}/p${query}${fragment}`);
      }
    }
  }
  const relatives = [
    "",
    "#x",
    "?",
    "?q=1",
    "a",
    "a/b?c=d#e",
    "/abs",
    "/abs?x",
    "//other.example/p",
    "./a",
    "../a",
    ".hidden",
    "a/./b",
    "a:b",
    "mailto:x@y",
    "javascript:void(0)",
    "%7e",
    " a ",
    "a\tb",
    "\\a",
    "http:rel",
    "https:/x",
    "é",
    "a@b",
    "?a'b",
    ".",
    "..",
    "../..",
    "../../../../../x?y#z",
    "a/../../b/./",
    "%2e%2e/x",
    "x/%2E",
    "%41b%7E?%7e=%2f",
    "//EXAMPLE.org:80/a/../b",
    "//x.test",
    "///x.test/p",
    "//u@x.test/",
    "//127.0.0.1/",
    "?q=%7e%zz",
  ];
  raws.push(...relatives);
  const bases = [
    "http://example.org/dir/page.html",
    "http://example.org/dir/",
    "http://example.org/",
    "https://example.org:8443/a?q=1",
    "http://example.org/%7e/",
    "HTTP://EXAMPLE.org/x",
    "not a base",
    "http://u:p@example.org/d/",
    "https://a.test/x/y/z",
    "http://a.test/%2F/q/",
  ];
  return { raws, bases };
}

describe("fast path", () => {
  it("agrees with the slow path on a corpus, and actually takes part", () => {
    const { raws, bases } = corpus();
    let fastHits = 0;
    let checked = 0;
    for (const raw of raws) {
      const absolute = fastNormalizeAbsolute(raw);
      if (absolute !== undefined) {
        fastHits++;
        expect(absolute, raw).toBe(normalizeUrlSlow(raw));
      }
      expect(normalizeUrl(raw), raw).toBe(normalizeUrlSlow(raw));
      for (const base of bases) {
        checked++;
        const relative = fastNormalizeRelative(raw, base);
        if (relative !== undefined) {
          fastHits++;
          expect(relative, `${raw} against ${base}`).toBe(normalizeUrlSlow(raw, base));
        }
        expect(normalizeUrl(raw, base), `${raw} against ${base}`).toBe(normalizeUrlSlow(raw, base));
      }
    }
    expect(checked).toBeGreaterThan(10_000);
    // The common shapes must not all fall through to the slow path.
    expect(fastHits).toBeGreaterThan(300);
  });

  it("handles typical links without a full parse", () => {
    const base = "http://example.org/dir/page.html";
    expect(fastNormalizeAbsolute("http://example.org/a?b=1#c")).toBe("http://example.org/a?b=1");
    expect(fastNormalizeRelative("next.html", base)).toBe("http://example.org/dir/next.html");
    expect(fastNormalizeRelative("/top", base)).toBe("http://example.org/top");
    expect(fastNormalizeRelative("../up", base)).toBe("http://example.org/up");
  });

  it("takes the common irregular shapes too: dot segments, escapes, upper-case hosts, //host", () => {
    const base = "http://example.org/dir/sub/page.html";
    expect(fastNormalizeRelative("../../a/./b/../c", base)).toBe("http://example.org/a/c");
    expect(fastNormalizeRelative("../../../../x", base)).toBe("http://example.org/x");
    expect(fastNormalizeRelative("..", base)).toBe("http://example.org/dir/");
    expect(fastNormalizeRelative(".", base)).toBe("http://example.org/dir/sub/");
    expect(fastNormalizeRelative("a/..", base)).toBe("http://example.org/dir/sub/");
    expect(fastNormalizeRelative("%7euser/%2f?q=%7E%2a", base)).toBe(
      "http://example.org/dir/sub/~user/%2F?q=~%2A",
    );
    expect(fastNormalizeRelative("//Other.Example:80/p#f", base)).toBe("http://other.example/p");
    expect(fastNormalizeAbsolute("HTTP://X.test/")).toBe("http://x.test/");
    expect(normalizeUrl("HTTPS://X.test:443/a", base)).toBe("https://x.test/a");
    expect(fastNormalizeAbsolute("http://WWW.Example.ORG/A/./B/../C")).toBe("http://www.example.org/A/C");
    expect(fastNormalizeAbsolute("http://a.test/x/..")).toBe("http://a.test/");
    expect(fastNormalizeAbsolute("http://a.test/..")).toBe("http://a.test/");
    expect(fastNormalizeAbsolute("http://a.test/a/...")).toBe("http://a.test/a/...");
    // WHATWG reads escaped dots as dots: left to the slow path, which agrees with it.
    expect(fastNormalizeAbsolute("http://a.test/a/%2e%2E/b")).toBeUndefined();
    expect(normalizeUrl("http://a.test/a/%2e%2E/b")).toBe("http://a.test/b");
    expect(fastNormalizeRelative("%zz", base)).toBeUndefined();
  });

  it("is idempotent: a canonical URL normalizes to itself", () => {
    const { raws, bases } = corpus();
    for (const raw of raws) {
      for (const base of bases) {
        const once = normalizeUrl(raw, base);
        if (once !== null) expect(normalizeUrl(once), once).toBe(once);
      }
    }
  });
});
