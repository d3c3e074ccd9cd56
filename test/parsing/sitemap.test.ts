import { describe, expect, it } from "vitest";
import { parseSitemap } from "../../src/parsing/index.js";

/** sitemaps.org files as they come: XML urlsets and indexes, plain text, broken XML, too many entries. */

describe("parseSitemap", () => {
  it("reads a urlset's locations and lastmods, namespaced or not, CDATA and entities included", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc> http://site.test/a </loc><lastmod>2026-11-01</lastmod><priority>0.5</priority></url>
        <url><loc><![CDATA[http://site.test/b?x=1&y=2]]></loc></url>
        <url><loc>http://site.test/c?x=1&amp;y=2</loc></url>
        <url><loc></loc></url>
      </urlset>`;
    expect(parseSitemap(xml)).toEqual({
      kind: "urlset",
      urls: [
        { loc: "http://site.test/a", lastmod: "2026-11-01" },
        { loc: "http://site.test/b?x=1&y=2" },
        { loc: "http://site.test/c?x=1&y=2" },
      ],
      sitemaps: [],
      truncated: false,
    });
    const prefixed =
      '<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>http://site.test/p</sm:loc></sm:url></sm:urlset>';
    expect(parseSitemap(prefixed).urls).toEqual([{ loc: "http://site.test/p" }]);
  });

  it("reads a sitemap index's sitemaps, not the locs of nested elements", () => {
    const xml = `<sitemapindex><sitemap><loc>http://site.test/s1.xml.gz</loc><lastmod>2026</lastmod></sitemap>
      <sitemap><loc>http://site.test/s2.txt</loc></sitemap></sitemapindex>`;
    expect(parseSitemap(xml)).toMatchObject({
      kind: "index",
      urls: [],
      sitemaps: ["http://site.test/s1.xml.gz", "http://site.test/s2.txt"],
    });
    // A <loc> deeper than url/loc (an image extension's) is not a page.
    const images =
      "<urlset><url><loc>http://site.test/p</loc><image><loc>http://site.test/i.png</loc></image></url></urlset>";
    expect(parseSitemap(images).urls).toEqual([{ loc: "http://site.test/p" }]);
  });

  it("reads a plain-text sitemap, one absolute URL a line, other lines skipped", () => {
    const text = "http://site.test/a\r\n\n  https://site.test/b  \nnot a url\n/relative\n";
    expect(parseSitemap(text)).toEqual({
      kind: "text",
      urls: [{ loc: "http://site.test/a" }, { loc: "https://site.test/b" }],
      sitemaps: [],
      truncated: false,
    });
  });

  it("keeps what came before a well-formedness error, and says what it was", () => {
    const xml =
      "<urlset><url><loc>http://site.test/a?x=1&y=2</loc></url><url><loc>http://site.test/b</loc></url><url><loc>http://site.test/c";
    const sitemap = parseSitemap(xml);
    expect(sitemap.kind).toBe("urlset");
    expect(sitemap.urls.map((url) => url.loc)).toEqual(["http://site.test/a?x=1&y=2", "http://site.test/b"]);
    expect(sitemap.malformed).toBeDefined();
  });

  it("stops at the entry limit and says the rest was left out", () => {
    const urls = Array.from({ length: 30 }, (_, i) => `<url><loc>http://site.test/${i}</loc></url>`);
    const sitemap = parseSitemap(`<urlset>${urls.join("")}</urlset>`, { maxEntries: 10 });
    expect(sitemap.urls).toHaveLength(10);
    expect(sitemap.truncated).toBe(true);
    const text = Array.from({ length: 30 }, (_, i) => `http://site.test/${i}`).join("\n");
    expect(parseSitemap(text, { maxEntries: 10 })).toMatchObject({ truncated: true, urls: { length: 10 } });
  });

  it("finds nothing in an empty file, an HTML page, or another XML document", () => {
    expect(parseSitemap("  \n").kind).toBe("unknown");
    expect(parseSitemap("<html><body><a href='/x'>x</a></body></html>")).toMatchObject({
      kind: "unknown",
      urls: [],
    });
    expect(
      parseSitemap("<rss><channel><item><link>http://site.test/a</link></item></channel></rss>").urls,
    ).toEqual([]);
  });
});
