import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { type ExtractedPage, extractLinks } from "../../src/parsing/index.js";

const PAGE = "http://example.org/dir/page.html";

function urls(page: ExtractedPage): string[] {
  return page.links.map((link) => link.url);
}

function errorCode(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isUbiError(error) ? error.code : "not a UbiError";
  }
  return undefined;
}

describe("extractLinks: resolution", () => {
  it("resolves relative, absolute, fragment and query links against the page", () => {
    const page = extractLinks(
      `<a href="other.html">1</a><a href="/root">2</a><a href="../up/x">3</a>
       <a href="https://other.example/p?q=1#frag">4</a><a href="#section">5</a>
       <a href="?page=2">6</a><a href="//cdn.example.net/lib">7</a>`,
      PAGE,
    );
    expect(urls(page)).toEqual([
      "http://example.org/dir/other.html",
      "http://example.org/root",
      "http://example.org/up/x",
      "https://other.example/p?q=1",
      "http://example.org/dir/page.html",
      "http://example.org/dir/page.html?page=2",
      "http://cdn.example.net/lib",
    ]);
    expect(page.baseUrl).toBe(PAGE);
    expect(page.truncated).toBe(false);
  });

  it("reports links canonically (the page URL is normalized too)", () => {
    const page = extractLinks(
      `<a href="HTTP://Example.ORG:80/a/./b/%7e?#x">x</a>`,
      "HTTP://EXAMPLE.org/dir/",
    );
    expect(urls(page)).toEqual(["http://example.org/a/b/~"]);
    expect(page.baseUrl).toBe("http://example.org/dir/");
  });

  it("resolves every link against the first <base href>, even links before it", () => {
    const page = extractLinks(
      `<a href="early">0</a><head><base href="/other/dir/"><base href="http://ignored.example/"></head>
       <a href="late">1</a>`,
      PAGE,
    );
    expect(page.baseUrl).toBe("http://example.org/other/dir/");
    expect(urls(page)).toEqual(["http://example.org/other/dir/early", "http://example.org/other/dir/late"]);
  });

  it("skips a <base> without href and ignores a base that is not http(s)", () => {
    expect(
      extractLinks(`<base target="_top"><base href="http://b.example/x/"><a href="y">`, PAGE).baseUrl,
    ).toBe("http://b.example/x/");
    const page = extractLinks(`<base href="javascript:void(0)"><a href="y">`, PAGE);
    expect(page.baseUrl).toBe(PAGE);
    expect(urls(page)).toEqual(["http://example.org/dir/y"]);
  });

  it("takes links from a, area, frame and iframe only", () => {
    const page = extractLinks(
      `<a href="/a">a</a><area href="/area"><frame src="/frame"><iframe src="/iframe"></iframe>
       <link href="/link"><img src="/img"><script src="/script"></script><form action="/form"></form>
       <a name="anchor-without-href">x</a><frame name="no-src">`,
      PAGE,
    );
    expect(urls(page)).toEqual([
      "http://example.org/a",
      "http://example.org/area",
      "http://example.org/frame",
      "http://example.org/iframe",
    ]);
  });

  it("skips links that do not normalize", () => {
    const page = extractLinks(
      `<a href="javascript:alert(1)">j</a><a href="mailto:a@example.org">m</a><a href="data:text/html,x">d</a>
       <a href="http://exa mple.org/">bad host</a><a href="ftp://example.org/">ftp</a>
       <a href="http://user:pw@example.org/">creds</a><a href="/kept">ok</a>`,
      PAGE,
    );
    expect(urls(page)).toEqual(["http://example.org/kept"]);
  });

  it("returns duplicates once, in first-seen order", () => {
    const page = extractLinks(
      `<a href="/x">1</a><a href="/y">2</a><a href="http://example.org/x#frag">3</a><a href="../x">4</a>`,
      PAGE,
    );
    expect(urls(page)).toEqual(["http://example.org/x", "http://example.org/y"]);
  });

  it("ignores markup inside script, style, title, textarea and iframe text", () => {
    const page = extractLinks(
      `<script>document.write('<a href="/in-script">')</script><style>a{}<a href="/in-style"></style><a href="/after-style">
       <title><a href="/in-title"></title><textarea><a href="/in-textarea"></textarea>
       <iframe src="/frame"><a href="/in-iframe"></iframe><a href="/after">`,
      PAGE,
    );
    expect(urls(page)).toEqual([
      "http://example.org/after-style",
      "http://example.org/frame",
      "http://example.org/after",
    ]);
  });

  it("reads links inside <noscript>, as a browser without scripts does", () => {
    expect(urls(extractLinks(`<noscript><a href="/nojs">x</a></noscript>`, PAGE))).toEqual([
      "http://example.org/nojs",
    ]);
  });
});

describe("extractLinks: nofollow and robots meta", () => {
  it("marks links with rel containing the nofollow token, case-insensitively", () => {
    const page = extractLinks(
      `<a href="/1" rel="nofollow">1</a><a href="/2" rel="NoFollow">2</a><a href="/3" rel="noopener
       nofollow ugc">3</a><a href="/4" rel="nofollower">4</a><a href="/5" rel="external">5</a><a href="/6">6</a>
       <area href="/7" rel="nofollow">`,
      PAGE,
    );
    expect(page.links.map((link) => [link.url.slice("http://example.org".length), link.nofollow])).toEqual([
      ["/1", true],
      ["/2", true],
      ["/3", true],
      ["/4", false],
      ["/5", false],
      ["/6", false],
      ["/7", true],
    ]);
    expect(page.nofollow).toBe(false);
  });

  it("keeps a link followable when any of its occurrences is", () => {
    const page = extractLinks(
      `<a href="/x" rel="nofollow">1</a><a href="/x">2</a><a href="/y" rel=nofollow>`,
      PAGE,
    );
    expect(page.links).toEqual([
      { url: "http://example.org/x", nofollow: false },
      { url: "http://example.org/y", nofollow: true },
    ]);
  });

  it("reads noindex, nofollow and none from <meta name=robots>", () => {
    const flags = (html: string) => {
      const { noindex, nofollow } = extractLinks(html, PAGE);
      return { noindex, nofollow };
    };
    expect(flags(`<meta name="robots" content="noindex">`)).toEqual({ noindex: true, nofollow: false });
    expect(flags(`<meta name="robots" content="index, nofollow">`)).toEqual({
      noindex: false,
      nofollow: true,
    });
    expect(flags(`<meta name="robots" content="none">`)).toEqual({ noindex: true, nofollow: true });
    expect(flags(`<META NAME="ROBOTS" CONTENT="NOINDEX,NOFOLLOW">`)).toEqual({
      noindex: true,
      nofollow: true,
    });
    expect(flags(`<meta name=" Robots " content=" noarchive , noindex ">`)).toEqual({
      noindex: true,
      nofollow: false,
    });
    expect(flags(`<meta name="robots" content="all">`)).toEqual({ noindex: false, nofollow: false });
    expect(flags(`<meta name="description" content="noindex nofollow">`)).toEqual({
      noindex: false,
      nofollow: false,
    });
    expect(flags(`<meta name="robots" content="noindex"><meta name="robots" content="nofollow">`)).toEqual({
      noindex: true,
      nofollow: true,
    });
    expect(flags(`<p>no meta at all</p>`)).toEqual({ noindex: false, nofollow: false });
  });

  it("honours a meta tag named after the user-agent token, and only that one", () => {
    const html = `<meta name="UbiCrawl" content="noindex"><meta name="googlebot" content="nofollow">`;
    expect(extractLinks(html, PAGE, { userAgentToken: "ubicrawl" }).noindex).toBe(true);
    expect(extractLinks(html, PAGE, { userAgentToken: "ubicrawl" }).nofollow).toBe(false);
    expect(extractLinks(html, PAGE).noindex).toBe(false);
  });

  it("marks every link nofollow on a nofollow page, wherever the meta tag is", () => {
    const page = extractLinks(
      `<a href="/a">a</a><meta name="robots" content="nofollow"><a href="/b">b</a>`,
      PAGE,
    );
    expect(page.nofollow).toBe(true);
    expect(page.links).toEqual([
      { url: "http://example.org/a", nofollow: true },
      { url: "http://example.org/b", nofollow: true },
    ]);
  });
});

describe("extractLinks: malformed HTML", () => {
  it("handles unclosed tags, unquoted attributes, uppercase names and entities", () => {
    const page = extractLinks(
      `<html><body><div><p><A HREF="/Upper">x<a href=/unquoted?a=1&amp;b=2>y<a href='/single'>
       <a href="/q?x=1&amp;y=2&#38;z=&#x33;">z<a href="&#47;slash">w<a href="/a b">s<b><i><table><td><a href=/deep>`,
      PAGE,
    );
    expect(urls(page)).toEqual([
      "http://example.org/Upper",
      "http://example.org/unquoted?a=1&b=2",
      "http://example.org/single",
      "http://example.org/q?x=1&y=2&z=3",
      "http://example.org/slash",
      "http://example.org/a%20b",
      "http://example.org/deep",
    ]);
  });

  it("drops a tag cut off at end of input but keeps earlier links", () => {
    expect(urls(extractLinks(`<a href="/ok">ok</a><a href=x`, PAGE))).toEqual(["http://example.org/ok"]);
    expect(urls(extractLinks(`<a href="/ok"><a href="/unterminated`, PAGE))).toEqual([
      "http://example.org/ok",
    ]);
    expect(urls(extractLinks(`<a href="/ok"><!-- <a href="/in-comment">`, PAGE))).toEqual([
      "http://example.org/ok",
    ]);
  });

  it("survives NUL bytes, garbage and deep nesting", () => {
    const nul = extractLinks(`\u0000<a\u0000 href="/n\u0000ul">\u0000</a><a href="/after">`, PAGE);
    expect(urls(nul)).toContain("http://example.org/after");

    const deep = `${"<div><span>".repeat(50_000)}<a href="/deep">${"</span></div>".repeat(10)}`;
    expect(urls(extractLinks(deep, PAGE))).toEqual(["http://example.org/deep"]);

    const garbage = `<<<>>><a <a href=><a href= "/g1"><!DOCTYPE <![CDATA[ <a href="/g2"> ]]></ < / <a/href=/g3>`;
    expect(urls(extractLinks(garbage, PAGE))).toContain("http://example.org/g1");

    // Deterministic pseudo-random bytes: whatever comes out, no exception and only canonical http(s) URLs.
    let seed = 12345;
    const bytes = new Uint8Array(200_000);
    for (let i = 0; i < bytes.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      bytes[i] = i % 7 === 0 ? 0x3c : seed >>> 24;
    }
    for (const link of extractLinks(bytes, PAGE).links) expect(link.url).toMatch(/^https?:\/\//);
  });
});

describe("extractLinks: limits", () => {
  it("truncates a 100,000-link page at maxLinks", () => {
    const html = Array.from({ length: 100_000 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join("\n");
    const page = extractLinks(html, PAGE);
    expect(page.links).toHaveLength(10_000);
    expect(page.truncated).toBe(true);
    expect(page.links[0]?.url).toBe("http://example.org/p/0");
    expect(page.links[9_999]?.url).toBe("http://example.org/p/9999");

    const all = extractLinks(html, PAGE, { maxLinks: 100_000 });
    expect(all.links).toHaveLength(100_000);
    expect(all.truncated).toBe(false);
  });

  it("does not count duplicates or invalid links against the cap", () => {
    const html = `<a href="/1"><a href="mailto:x"><a href="/1"><a href="/2"><a href="/2#f"><a href="javascript:x">`;
    const page = extractLinks(html, PAGE, { maxLinks: 2 });
    expect(urls(page)).toEqual(["http://example.org/1", "http://example.org/2"]);
    expect(page.truncated).toBe(false);
    const capped = extractLinks(`${html}<a href="/3">`, PAGE, { maxLinks: 2 });
    expect(capped.truncated).toBe(true);
    expect(extractLinks(`<a href="/1">`, PAGE, { maxLinks: 0 })).toMatchObject({
      links: [],
      truncated: true,
    });
  });
});

describe("extractLinks: argument checks", () => {
  it("rejects bad options with InvalidArgument", () => {
    expect(errorCode(() => extractLinks("", PAGE, { maxLinks: -1 }))).toBe(ErrorCode.InvalidArgument);
    expect(errorCode(() => extractLinks("", PAGE, { maxLinks: 1.5 }))).toBe(ErrorCode.InvalidArgument);
    expect(errorCode(() => extractLinks("", PAGE, { maxLinks: Number.NaN }))).toBe(ErrorCode.InvalidArgument);
    expect(errorCode(() => extractLinks("", PAGE, { userAgentToken: " " }))).toBe(ErrorCode.InvalidArgument);
  });

  it("rejects a page URL that is not http(s) with InvalidUrl", () => {
    expect(errorCode(() => extractLinks("", "mailto:x@example.org"))).toBe(ErrorCode.InvalidUrl);
    expect(errorCode(() => extractLinks("", "/relative"))).toBe(ErrorCode.InvalidUrl);
    expect(errorCode(() => extractLinks("", PAGE))).toBeUndefined();
  });
});
