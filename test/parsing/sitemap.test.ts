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
    // A URL after other words on its line is no entry; a blank before the first line does not matter.
    expect(parseSitemap(" http://site.test/a\nsee http://site.test/b").urls).toEqual([
      { loc: "http://site.test/a" },
    ]);
    expect(parseSitemap("\t<urlset><url><loc>http://site.test/a</loc></url></urlset>").kind).toBe("urlset");
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

  it("finds no kind in a text file without a URL, an XML prolog alone, or a blank file", () => {
    const nothing = { kind: "unknown", urls: [], sitemaps: [], truncated: false };
    expect(parseSitemap("no sitemap here\n/relative\nsee http://site.test/a")).toEqual(nothing);
    expect(parseSitemap(" \t\r\n")).toEqual(nothing);
    expect(parseSitemap('<?xml version="1.0" encoding="UTF-8"?>\n<!-- nothing -->')).toMatchObject(nothing);
  });

  it("trims locations and lastmods, and skips a loc or lastmod that is only blanks", () => {
    const xml = `<urlset>
      <url><loc> http://site.test/a </loc></url>
      <url><loc>http://site.test/b</loc><lastmod> 2026-11-02 </lastmod></url>
      <url><loc>http://site.test/c</loc><lastmod>  </lastmod></url>
      <url><loc>   </loc><lastmod>2026-11-03</lastmod></url>
    </urlset>`;
    expect(parseSitemap(xml).urls).toEqual([
      { loc: "http://site.test/a" },
      { loc: "http://site.test/b", lastmod: "2026-11-02" },
      { loc: "http://site.test/c" },
    ]);
    const index = "<sitemapindex><sitemap><loc>\n  http://site.test/s.xml\n</loc></sitemap></sitemapindex>";
    expect(parseSitemap(index).sitemaps).toEqual(["http://site.test/s.xml"]);
  });

  it("reads a page's changefreq in any letter case, leaving out and counting one that names no sitemaps.org value", () => {
    const xml = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>http://site.test/a</loc><changefreq>always</changefreq></url>
      <url><loc>http://site.test/b</loc><lastmod>2026-11-02</lastmod><changefreq> Daily </changefreq></url>
      <url><loc>http://site.test/c</loc><changefreq>NEVER</changefreq></url>
      <url><loc>http://site.test/d</loc><changefreq>sometimes</changefreq></url>
      <url><loc>http://site.test/e</loc><changefreq>3600</changefreq></url>
      <url><loc>http://site.test/f</loc><changefreq>  </changefreq></url>
      <url><loc>http://site.test/g</loc><changefreq><![CDATA[weekly]]></changefreq></url>
    </urlset>`;
    expect(parseSitemap(xml)).toEqual({
      kind: "urlset",
      urls: [
        { loc: "http://site.test/a", changefreq: "always" },
        { loc: "http://site.test/b", lastmod: "2026-11-02", changefreq: "daily" },
        { loc: "http://site.test/c", changefreq: "never" },
        { loc: "http://site.test/d" },
        { loc: "http://site.test/e" },
        { loc: "http://site.test/f" },
        { loc: "http://site.test/g", changefreq: "weekly" },
      ],
      sitemaps: [],
      truncated: false,
      badChangefreqs: 2,
    });
    // A changefreq belongs to its own url element only, and an index's sitemap elements have none.
    const next =
      "<urlset><url><loc>http://site.test/a</loc><changefreq>hourly</changefreq></url><url><loc>http://site.test/b</loc></url></urlset>";
    expect(parseSitemap(next).urls).toEqual([
      { loc: "http://site.test/a", changefreq: "hourly" },
      { loc: "http://site.test/b" },
    ]);
    const index =
      "<sitemapindex><sitemap><loc>http://site.test/s.xml</loc><changefreq>bad</changefreq></sitemap></sitemapindex>";
    expect(parseSitemap(index)).toEqual({
      kind: "index",
      urls: [],
      sitemaps: ["http://site.test/s.xml"],
      truncated: false,
    });
  });

  it("takes pages from a urlset's url elements only, and sitemaps from an index's sitemap elements only", () => {
    const none = { urls: [], sitemaps: [] };
    expect(
      parseSitemap("<urlset><sitemap><loc>http://site.test/s.xml</loc></sitemap></urlset>"),
    ).toMatchObject(none);
    expect(
      parseSitemap("<sitemapindex><url><loc>http://site.test/p</loc></url></sitemapindex>"),
    ).toMatchObject(none);
    // An element named url deeper inside a url (an extension's) neither adds a page nor loses the loc.
    const nested =
      "<urlset><url><loc>http://site.test/p</loc><x:links><x:url>http://site.test/q</x:url></x:links></url></urlset>";
    expect(parseSitemap(nested).urls).toEqual([{ loc: "http://site.test/p" }]);
  });

  it("says truncated only when an entry was left out: not at exactly the limit, nor for a file that lists nothing", () => {
    const urls = Array.from({ length: 10 }, (_, i) => `<url><loc>http://site.test/${i}</loc></url>`);
    expect(parseSitemap(`<urlset>${urls.join("")}</urlset>`, { maxEntries: 10 })).toMatchObject({
      truncated: false,
      urls: { length: 10 },
    });
    expect(parseSitemap("<urlset><foo/><url><loc> </loc></url></urlset>", { maxEntries: 0 }).truncated).toBe(
      false,
    );
    // An index stops at the limit too.
    const sitemaps = Array.from(
      { length: 30 },
      (_, i) => `<sitemap><loc>http://site.test/${i}.xml</loc></sitemap>`,
    );
    expect(
      parseSitemap(`<sitemapindex>${sitemaps.join("")}</sitemapindex>`, { maxEntries: 10 }),
    ).toMatchObject({
      truncated: true,
      sitemaps: { length: 10 },
    });
  });

  it("reads 50,000 entries by default (sitemaps.org's limit)", () => {
    const text = Array.from({ length: 50_001 }, (_, i) => `http://site.test/${i}`).join("\n");
    const sitemap = parseSitemap(text);
    expect(sitemap.urls).toHaveLength(50_000);
    expect(sitemap.urls.at(-1)).toEqual({ loc: "http://site.test/49999" });
    expect(sitemap.truncated).toBe(true);
  });

  it("reads a file larger than the parser's slices whole, and does not call the unread rest of a truncated one malformed", () => {
    const urls = Array.from({ length: 3000 }, (_, i) => `<url><loc>http://site.test/page/${i}</loc></url>`);
    const xml = `<urlset>${urls.join("\n")}</urlset>`;
    expect(xml.length).toBeGreaterThan(2 * 64 * 1024);
    const whole = parseSitemap(xml);
    expect(whole.urls).toHaveLength(3000);
    expect(whole.urls.at(-1)).toEqual({ loc: "http://site.test/page/2999" });
    expect(whole).not.toHaveProperty("malformed");
    const cut = parseSitemap(xml, { maxEntries: 10 });
    expect(cut).toMatchObject({ kind: "urlset", truncated: true, urls: { length: 10 } });
    expect(cut).not.toHaveProperty("malformed");
  });
});

it("does not call a sitemap truncated for a stray element after its last entry", () => {
  const text = "<urlset><url><loc>http://site.test/a</loc></url><foo/><bar><loc>x</loc></bar></urlset>";
  expect(parseSitemap(text, { maxEntries: 1 })).toMatchObject({
    urls: [{ loc: "http://site.test/a" }],
    truncated: false,
  });
});
