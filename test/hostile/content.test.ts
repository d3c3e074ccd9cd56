import { describe, expect, it } from "vitest";
import type { FetchResult } from "../../src/fetching/index.js";
import { extractLinks } from "../../src/parsing/index.js";
import { CHARSET_PAGES } from "../../src/testweb/hostile/index.js";
import { useHostileWeb } from "./helpers.js";

/** Hostile content behind well-formed HTTP: redirect loops, charsets, pathological HTML, traps, types. */

const fixture = useHostileWeb();

function location(result: FetchResult): string | undefined {
  return result.responseHeaders.find(([name]) => name.toLowerCase() === "location")?.[1];
}

/** Links of a fetched page as the agent reads them (transport charset included). */
function linksOf(result: FetchResult, maxLinks?: number) {
  return extractLinks(result.body, result.url, {
    ...(result.charset === undefined ? {} : { transportCharset: result.charset }),
    ...(maxLinks === undefined ? {} : { maxLinks }),
  });
}

describe("redirects", () => {
  it("a loop redirects a → b → a, and /self to itself: the fetcher returns each 3xx, never follows", async () => {
    const { web } = fixture;
    const fetcher = fixture.fetcher();
    const a = await fetcher.fetch(web.url("redirect-loop", "/loop/a"));
    const b = await fetcher.fetch(web.url("redirect-loop", "/loop/b"));
    const self = await fetcher.fetch(web.url("redirect-loop", "/self"));
    expect([a.status, b.status, self.status]).toEqual([302, 302, 302]);
    expect(new URL(location(a) as string, a.url).href).toBe(web.url("redirect-loop", "/loop/b"));
    expect(new URL(location(b) as string, b.url).href).toBe(web.url("redirect-loop", "/loop/a"));
    expect(new URL(location(self) as string, self.url).href).toBe(self.url);
  });

  it("a chain of 20 redirects ends at a page", async () => {
    const { web } = fixture;
    const fetcher = fixture.fetcher();
    let url = web.url("redirect-chain", "/chain/0");
    let hops = 0;
    for (;;) {
      const result = await fetcher.fetch(url);
      if (result.status !== 301) {
        expect(result.status).toBe(200);
        break;
      }
      url = new URL(location(result) as string, url).href;
      hops++;
      expect(hops).toBeLessThanOrEqual(web.options.redirectChainHops);
    }
    expect(hops).toBe(web.options.redirectChainHops);
  });
});

describe("charsets", () => {
  it.each(CHARSET_PAGES.map((page) => [page.path, page] as const))(
    "%s: decoded with its charset, its non-ASCII link found",
    async (_path, page) => {
      const { web } = fixture;
      const result = await fixture.fetcher().fetch(web.url("charsets", page.path));
      expect(result.body.equals(page.body)).toBe(true);
      expect(linksOf(result).links.map((link) => link.url)).toEqual([web.url("charsets", page.expectedLink)]);
      const target = await fixture.fetcher().fetch(web.url("charsets", page.expectedLink));
      expect(target.status).toBe(200);
    },
  );
});

describe("pathological HTML", () => {
  // These pages are megabytes (a 10 MB attribute, 100,000 links): what is tested is their parsing, not a
  // deadline, which the unit tests' 0.8 s total was under a loaded CI machine's (the 100,000 links, once).
  const bigPageFetcher = () =>
    fixture.fetcher({ headersTimeoutMs: 10_000, bodyIdleTimeoutMs: 10_000, totalTimeoutMs: 30_000 });

  it("unclosed tags: the complete links are found, the one cut by the end of file is not", async () => {
    const { web } = fixture;
    const result = await bigPageFetcher().fetch(web.url("pathological-html", "/unclosed"));
    expect(linksOf(result).links.map((link) => new URL(link.url).pathname)).toEqual([
      "/reached/unclosed-1",
      "/reached/unclosed-2",
      "/reached/unclosed-3",
    ]);
  });

  it("a 10 MB attribute: the page is read whole and the link after it found", async () => {
    const { web } = fixture;
    const result = await bigPageFetcher().fetch(web.url("pathological-html", "/big-attribute"));
    expect(result.truncated).toBe(false);
    expect(result.body.length).toBeGreaterThan(web.options.bigAttributeBytes);
    expect(linksOf(result).links.map((link) => new URL(link.url).pathname)).toEqual([
      "/reached/after-attribute",
    ]);
  });

  it("100,000 links: extraction stops at maxLinks and says so", async () => {
    const { web } = fixture;
    const result = await bigPageFetcher().fetch(web.url("pathological-html", "/many-links"));
    const page = linksOf(result, 10_000);
    expect(page.truncated).toBe(true);
    expect(page.links.length).toBe(10_000);
    expect(new URL(page.links[9_999]?.url as string).pathname).toBe("/l/9999");
  });

  it("100,000-deep nesting: no recursion, the innermost link found", async () => {
    const { web } = fixture;
    const result = await bigPageFetcher().fetch(web.url("pathological-html", "/deep-nesting"));
    expect(result.body.toString().split("<div>").length - 1).toBe(web.options.nestingDepth);
    expect(linksOf(result).links.map((link) => new URL(link.url).pathname)).toEqual(["/reached/deep"]);
  });
});

describe("infinite URL spaces", () => {
  it("session ids: the same page yields new URLs on every fetch", async () => {
    const { web } = fixture;
    const fetcher = fixture.fetcher();
    const first = linksOf(await fetcher.fetch(web.url("session-ids", "/"))).links.map((link) => link.url);
    const second = linksOf(await fetcher.fetch(web.url("session-ids", "/"))).links.map((link) => link.url);
    expect(first.length).toBe(5);
    expect(second.length).toBe(5);
    expect(first.filter((url) => second.includes(url))).toEqual([]);
  });

  it("calendar: every day links to more days, without end", async () => {
    const { web } = fixture;
    const fetcher = fixture.fetcher();
    let url = web.url("calendar", "/cal/2024-01-01");
    const visited = new Set<string>();
    for (let i = 0; i < 20; i++) {
      visited.add(url);
      const result = await fetcher.fetch(url);
      expect(result.status).toBe(200);
      const links = linksOf(result).links.map((link) => link.url);
      expect(links.length).toBe(5);
      url = links[4] as string; // a year later, always new
    }
    expect(visited.size).toBe(20);
    const yearsLater = new Date(Date.UTC(2024, 0, 1) + 20 * 365 * 86_400_000).toISOString().slice(0, 10);
    expect(url).toBe(web.url("calendar", `/cal/${yearsLater}`));
  });
});

describe("wrong content types", () => {
  it("HTML served as image/png keeps its type (so a crawler does not parse it)", async () => {
    const result = await fixture.fetcher().fetch(fixture.web.url("wrong-types", "/html-as-png"));
    expect(result.contentType).toBe("image/png");
    expect(result.body.toString()).toContain("<a href=");
  });

  it("binary served as text/html parses without error and yields no links", async () => {
    const result = await fixture.fetcher().fetch(fixture.web.url("wrong-types", "/binary-as-html"));
    expect(result.contentType).toBe("text/html");
    expect(result.body.includes(0)).toBe(true);
    expect(linksOf(result).links).toEqual([]);
  });
});
