import { SaxesParser } from "saxes";
import { type ChangeFrequency, readChangeFrequency } from "../change-frequency.js";

/** A page a sitemap lists. */
export interface SitemapUrl {
  /** The `<loc>`, trimmed, as written (not yet normalized). */
  readonly loc: string;
  /** The `<lastmod>`, trimmed, when given (W3C datetime, kept as written). */
  readonly lastmod?: string;
  /** The `<changefreq>`, when it names one of sitemaps.org's values (in any letter case). */
  readonly changefreq?: ChangeFrequency;
}

/** What one sitemap file says. */
export interface Sitemap {
  /** `urlset` (pages), `index` (further sitemaps), `text` (one URL a line), or `unknown` (neither). */
  readonly kind: "urlset" | "index" | "text" | "unknown";
  /** The pages listed, at most {@link SitemapLimits.maxEntries}. */
  readonly urls: readonly SitemapUrl[];
  /** The sitemaps a sitemap index lists, at most {@link SitemapLimits.maxEntries}. */
  readonly sitemaps: readonly string[];
  /** True when entries past the limit were left out. */
  readonly truncated: boolean;
  /** The first well-formedness error met, when the XML had one (what came before it is kept). */
  readonly malformed?: string;
  /**
   * Entries whose `<changefreq>` named none of sitemaps.org's values (their pages are kept, without
   * it); absent when none.
   */
  readonly badChangefreqs?: number;
}

/** The sitemaps.org limits a sitemap is read within. */
export interface SitemapLimits {
  /** Entries read from one file (sitemaps.org: 50,000). */
  readonly maxEntries: number;
}

/** sitemaps.org's limit of entries per file. */
export const SITEMAP_MAX_ENTRIES = 50_000;
/** sitemaps.org's limit of a file's uncompressed size, bytes (the caller caps what it reads to it). */
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

/** A CDATA section (left as it is), or an `&` that starts no entity or character reference. */
const BARE_AMPERSAND = /<!\[CDATA\[[\s\S]*?\]\]>|&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#x[0-9A-Fa-f]+);)/g;

/** The XML is fed to the parser in slices this long, so reading stops soon after the entry limit. */
const SLICE_CHARS = 64 * 1024;

/**
 * Reads a sitemap (sitemaps.org): an XML `<urlset>` or `<sitemapindex>` — with a streaming XML parser
 * that goes on past well-formedness errors, as sitemaps in the wild have them (a bare `&` is read as
 * `&amp;`) — or
 * a plain-text list of URLs. `text` is the file already decoded (and gunzipped).
 */
export function parseSitemap(
  text: string,
  limits: SitemapLimits = { maxEntries: SITEMAP_MAX_ENTRIES },
): Sitemap {
  const start = text.search(/\S/);
  if (start === -1) return { kind: "unknown", urls: [], sitemaps: [], truncated: false };
  return text[start] === "<" ? parseXml(text, limits) : parseText(text, limits);
}

function parseText(text: string, limits: SitemapLimits): Sitemap {
  const urls: SitemapUrl[] = [];
  let truncated = false;
  for (const line of text.split(/\r\n|\r|\n/)) {
    const loc = line.trim();
    if (!/^https?:\/\//i.test(loc)) continue;
    if (urls.length >= limits.maxEntries) {
      truncated = true;
      break;
    }
    urls.push({ loc });
  }
  return { kind: urls.length > 0 ? "text" : "unknown", urls, sitemaps: [], truncated };
}

function parseXml(text: string, limits: SitemapLimits): Sitemap {
  const urls: SitemapUrl[] = [];
  const sitemaps: string[] = [];
  let kind: Sitemap["kind"] = "unknown";
  let truncated = false;
  let malformed: string | undefined;
  /** The element path, by local name (namespace prefixes dropped). */
  const path: string[] = [];
  let loc = "";
  let lastmod = "";
  let changefreq = "";
  let badChangefreqs = 0;
  let reading: "loc" | "lastmod" | "changefreq" | undefined;

  const parser = new SaxesParser();
  parser.on("error", (error) => {
    malformed ??= error.message;
  });
  parser.on("opentag", (tag) => {
    const name = localName(tag.name);
    path.push(name);
    if (path.length === 1)
      kind = name === "urlset" ? "urlset" : name === "sitemapindex" ? "index" : "unknown";
    if ((name === "url" || name === "sitemap") && path.length === 2) {
      loc = "";
      lastmod = "";
      changefreq = "";
    }
    reading =
      path.length === 3 && (name === "loc" || name === "lastmod" || name === "changefreq") ? name : undefined;
  });
  const onText = (chunk: string) => {
    if (reading === "loc") loc += chunk;
    else if (reading === "lastmod") lastmod += chunk;
    else if (reading === "changefreq") changefreq += chunk;
  };
  parser.on("text", onText);
  parser.on("cdata", onText);
  parser.on("closetag", () => {
    const name = path.pop();
    reading = undefined;
    // Only a urlset's url elements and an index's sitemap elements are entries: another element at
    // their depth neither counts nor, past the limit, marks the file truncated.
    const isEntry = (name === "url" && kind === "urlset") || (name === "sitemap" && kind === "index");
    if (path.length !== 1 || !isEntry || loc.trim() === "") return;
    if (urls.length + sitemaps.length >= limits.maxEntries) {
      truncated = true;
      return;
    }
    if (name === "url") {
      // An empty <changefreq> says nothing; one naming no value is left out, and counted.
      const frequency = readChangeFrequency(changefreq);
      if (frequency === undefined && changefreq.trim() !== "") badChangefreqs++;
      urls.push({
        loc: loc.trim(),
        ...(lastmod.trim() === "" ? {} : { lastmod: lastmod.trim() }),
        ...(frequency === undefined ? {} : { changefreq: frequency }),
      });
    } else {
      sitemaps.push(loc.trim());
    }
  });
  // The most common flaw of hand-made sitemaps, a bare `&` in a query string, would swallow the rest.
  const xml = text.replace(BARE_AMPERSAND, (match) => (match === "&" ? "&amp;" : match));
  for (let at = 0; at < xml.length && !truncated; at += SLICE_CHARS)
    parser.write(xml.slice(at, at + SLICE_CHARS));
  if (!truncated) parser.close();
  return {
    kind,
    urls,
    sitemaps,
    truncated,
    ...(malformed === undefined ? {} : { malformed }),
    ...(badChangefreqs === 0 ? {} : { badChangefreqs }),
  };
}

function localName(name: string): string {
  return name.slice(name.indexOf(":") + 1).toLowerCase();
}
