/**
 * A URL waiting to be fetched, as the frontier queues it, the outbox hands it to another agent and the
 * blacklist keeps it aside; and its encoding as a stored value, which those three ranges share.
 */

import { type ChangeFrequency, readChangeFrequency } from "../../change-frequency.js";

/** A URL waiting in a host's queue, with its per-host depth. */
export interface QueuedUrl {
  /** Canonical URL. */
  readonly url: string;
  /** Per-host depth: 0 when discovered from another host or a seed. */
  readonly depth: number;
  /**
   * Fetch attempts that failed in a way that may pass (see `--max-fetch-attempts`), kept with the URL
   * so the limit holds across restarts and hand-overs to other agents. Absent: none.
   */
  readonly attempts?: number;
  /** A sitemap file to read (its URLs are queued), not a page. Absent: a page. */
  readonly sitemap?: true;
  /** The `<lastmod>` a sitemap gave the page, as written, kept for recrawls. */
  readonly lastmod?: string;
  /** The `<changefreq>` a sitemap gave the page, kept for recrawls (a hint of its first revisit's interval). */
  readonly changefreq?: ChangeFrequency;
  /**
   * For a sitemap on another host than the one whose robots.txt listed it (sitemaps.org's
   * cross-submission): that host's key, whose URLs the sitemap may list.
   */
  readonly sitemapFor?: string;
  /**
   * A done URL queued again by `--recrawl` because it is due: fetched although done, not counted
   * against the host's page limit again. Absent: a URL's first fetch.
   */
  readonly revisit?: true;
}

/**
 * What a queued URL carries besides its URL and depth: failed attempts, sitemap marks, a lastmod, a
 * changefreq.
 */
export type UrlTraits = Omit<QueuedUrl, "url" | "depth">;

/** The traits of `entry`, only those set (no `attempts: 0`). */
export function traitsOf(entry: UrlTraits): UrlTraits {
  return {
    ...((entry.attempts ?? 0) > 0 ? { attempts: entry.attempts } : {}),
    ...(entry.sitemap ? { sitemap: true } : {}),
    ...(entry.lastmod === undefined ? {} : { lastmod: entry.lastmod }),
    ...(entry.changefreq === undefined ? {} : { changefreq: entry.changefreq }),
    ...(entry.sitemapFor === undefined ? {} : { sitemapFor: entry.sitemapFor }),
    ...(entry.revisit ? { revisit: true } : {}),
  };
}

/**
 * `depth[,attempts][,s][,m=lastmod][,c=changefreq][,f=host][,r]\turl` (`r`: a revisit): entries
 * written before attempts, sitemaps, lastmod or changefreq were kept have only what they had
 * (`depth\turl` at the least). A lastmod or a host key never holds a comma or a tab.
 */
export function encodeQueuedUrl(entry: QueuedUrl): string {
  let head = String(entry.depth);
  if ((entry.attempts ?? 0) > 0) head += `,${entry.attempts}`;
  if (entry.sitemap) head += ",s";
  if (entry.lastmod !== undefined) head += `,m=${entry.lastmod.replace(/[,\t]/g, " ")}`;
  if (entry.changefreq !== undefined) head += `,c=${entry.changefreq}`;
  if (entry.sitemapFor !== undefined) head += `,f=${entry.sitemapFor}`;
  if (entry.revisit) head += ",r";
  return `${head}\t${entry.url}`;
}

/** The entry of a value written by {@link encodeQueuedUrl} (a changefreq of no known value is left out). */
export function decodeQueuedUrl(value: string): QueuedUrl {
  const tab = value.indexOf("\t");
  const [depth, ...fields] = value.slice(0, tab).split(",");
  let entry: QueuedUrl = { depth: Number(depth), url: value.slice(tab + 1) };
  for (const field of fields) {
    if (field === "s") entry = { ...entry, sitemap: true };
    else if (field === "r") entry = { ...entry, revisit: true };
    else if (field.startsWith("m=")) entry = { ...entry, lastmod: field.slice(2) };
    else if (field.startsWith("c=")) {
      const changefreq = readChangeFrequency(field.slice(2));
      if (changefreq !== undefined) entry = { ...entry, changefreq };
    } else if (field.startsWith("f=")) entry = { ...entry, sitemapFor: field.slice(2) };
    else entry = { ...entry, attempts: Number(field) };
  }
  return entry;
}
