import { ErrorCode } from "../errors.js";
import { decodeBody, type FetchResult, responseHeader } from "../fetching/index.js";
import type { Logger } from "../logging/index.js";
import { parseSitemap, SITEMAP_MAX_BYTES } from "../parsing/index.js";
import type { RobotsRules } from "../robots/index.js";
import type { QueuedUrl } from "../storage/index.js";
import { hostKey, normalizeUrl } from "../url/index.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { LinkRouter } from "./link-router.js";

/** Which sitemaps are read: those robots.txt lists or else `/sitemap.xml`; only those listed; none. */
export const SITEMAP_MODES = ["all", "listed", "off"] as const;
/** One of {@link SITEMAP_MODES}. */
export type SitemapMode = (typeof SITEMAP_MODES)[number];

/** Options of a {@link SitemapReader}. */
export interface SitemapReaderOptions {
  /** Which sitemaps are queued (see {@link SITEMAP_MODES}). */
  readonly mode: SitemapMode;
  /**
   * Sitemap files queued per host in one run at most (those robots.txt lists and those sitemap
   * indexes list): a sitemap index of 10,000 sitemaps costs this many fetches, not 10,000.
   */
  readonly maxSitemapsPerHost: number;
}

/** What a {@link SitemapReader} needs. */
export interface SitemapReaderDeps {
  readonly router: LinkRouter;
  readonly stats: CrawlStats;
  readonly logger: Logger;
}

/** Where a host's sitemap is looked for when its robots.txt names none (sitemaps.org's usual place). */
export const DEFAULT_SITEMAP_PATH = "/sitemap.xml";

/** @default of {@link SitemapReaderOptions.maxSitemapsPerHost}. */
export const DEFAULT_MAX_SITEMAPS_PER_HOST = 100;

const GZIP_MAGIC = [0x1f, 0x8b];
const utf8 = new TextDecoder("utf-8");

/**
 * Sitemaps (sitemaps.org): queues those a host's robots.txt lists, and reads a fetched one — its pages
 * go to their host's queue (with their `lastmod` and `changefreq`) under the same scope, depth, robots and page limits
 * as links, its further sitemaps (an index) to the queue as sitemaps. A sitemap may list URLs of its
 * own host and, when another host's robots.txt listed it (cross-submission), of that host; the others
 * are counted as dropped (`sitemap-elsewhere`).
 */
export class SitemapReader {
  /** Sitemaps queued this run, by host (the seen set keeps them from being queued twice). */
  private readonly queued = new Map<string, number>();

  constructor(
    private readonly options: SitemapReaderOptions,
    private readonly deps: SitemapReaderDeps,
  ) {}

  /**
   * Queues the `Sitemap:` files that `rules` (freshly fetched robots.txt of `host`) list: on the host,
   * or on another one (a CDN, say), which may then list `host`'s URLs. A robots.txt that names none (or
   * that is missing) leaves the conventional `/sitemap.xml` to try.
   */
  queueListed(host: string, rules: RobotsRules): void {
    if (rules.status === "unavailable" || this.options.mode === "off") return;
    if (rules.sitemaps.length === 0 && this.options.mode === "all") {
      const conventional = normalizeUrl(DEFAULT_SITEMAP_PATH, `${rules.origin}/`);
      if (conventional !== null) this.queueSitemap(conventional, 0, undefined);
      return;
    }
    for (const listed of rules.sitemaps) {
      const url = normalizeUrl(listed, `${rules.origin}/robots.txt`);
      if (url !== null) this.queueSitemap(url, 0, hostKey(url) === host ? undefined : host);
    }
  }

  /**
   * Reads fetched sitemap `entry` of `host` (a redirect's target is queued as a sitemap in turn);
   * returns the entries it listed (pages and sitemaps).
   */
  async read(host: string, entry: QueuedUrl, result: FetchResult): Promise<number> {
    if (result.status >= 300 && result.status < 400) {
      const location = responseHeader(result, "location");
      const target = location === undefined ? null : normalizeUrl(location, entry.url);
      if (target === null) return 0;
      // Moved by its own server: still the sitemap of the host it serves, wherever it now is.
      const owner = entry.sitemapFor ?? host;
      this.queueSitemap(target, entry.depth, hostKey(target) === owner ? undefined : owner);
      return 1;
    }
    if (result.status < 200 || result.status >= 300 || result.body.length === 0) return 0;
    let text: string;
    try {
      text = await sitemapText(result.body);
    } catch {
      // A corrupt .gz: archived as fetched, but it lists nothing.
      this.deps.stats.recordError(ErrorCode.DecodeFailed);
      return 0;
    }
    const sitemap = parseSitemap(text);
    if (sitemap.badChangefreqs !== undefined) {
      this.deps.logger.debug(
        { event: "sitemap-bad-changefreq", url: entry.url, entries: sitemap.badChangefreqs },
        `${sitemap.badChangefreqs} entries of ${entry.url} have a <changefreq> of no sitemaps.org value: read without it`,
      );
    }
    const submitter = entry.sitemapFor;
    for (const { loc, lastmod, changefreq } of sitemap.urls) {
      const url = normalizeUrl(loc, entry.url);
      if (url === null) continue;
      const urlHost = hostKey(url);
      if (urlHost !== host && urlHost !== submitter) {
        this.deps.stats.recordDrop("sitemap-elsewhere");
        continue;
      }
      this.deps.router.route(url, entry.depth, host, {
        ...(lastmod === undefined ? {} : { lastmod }),
        ...(changefreq === undefined ? {} : { changefreq }),
      });
    }
    for (const loc of sitemap.sitemaps) {
      const url = normalizeUrl(loc, entry.url);
      if (url === null) continue;
      // An index lists sitemaps of its own host (for the same submitter), or of the submitter itself.
      const target = hostKey(url);
      if (target === host) this.queueSitemap(url, entry.depth, submitter);
      else if (target === submitter) this.queueSitemap(url, 0, undefined);
      else this.deps.stats.recordDrop("sitemap-elsewhere");
    }
    return sitemap.urls.length + sitemap.sitemaps.length;
  }

  /**
   * Queues sitemap `url` within the budget of the host whose pages it lists: its own host's, or
   * `submitter`'s, the host whose robots.txt listed it from elsewhere.
   */
  private queueSitemap(url: string, depth: number, submitter: string | undefined): void {
    const owner = submitter ?? hostKey(url);
    const queued = this.queued.get(owner) ?? 0;
    if (queued >= this.options.maxSitemapsPerHost) {
      this.deps.stats.recordDrop("sitemap-limit");
      return;
    }
    this.queued.set(owner, queued + 1);
    const traits =
      submitter === undefined
        ? { sitemap: true as const }
        : { sitemap: true as const, sitemapFor: submitter };
    this.deps.router.routeAt(url, depth, hostKey(url), traits);
  }
}

/**
 * A sitemap's text: UTF-8, gunzipped first when the body is gzip itself (a `.xml.gz` served without
 * `Content-Encoding`), up to sitemaps.org's 50 MB uncompressed.
 */
async function sitemapText(body: Buffer): Promise<string> {
  const gzipped = body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1];
  const bytes = gzipped ? (await decodeBody(body, "gzip", SITEMAP_MAX_BYTES)).body : body;
  return utf8.decode(bytes.subarray(0, SITEMAP_MAX_BYTES));
}
