import { ErrorCode } from "../errors.js";
import type { FetchResult } from "../fetching/index.js";
import type { CrawlLogInput, QueuedUrl } from "../storage/index.js";

/**
 * The crawl log line of a fetch that got an answer (`links` found in it, or entries for a sitemap);
 * a sitemap is marked so, a page's sitemap `lastmod` and `changefreq` are kept, and a payload stored before (written as
 * a WARC revisit) names the URL that stored it (`duplicateOf`).
 */
export function pageLogEntry(
  entry: QueuedUrl,
  result: FetchResult,
  links: number,
  duplicateOf?: string,
): CrawlLogInput {
  const cut = result.truncated ? { error: ErrorCode.BodyTooLarge, truncated: true } : {};
  return {
    ...(entry.sitemap ? { sitemap: true } : {}),
    ...(duplicateOf === undefined ? {} : { duplicateOf }),
    ...(entry.lastmod === undefined ? {} : { lastmod: entry.lastmod }),
    ...(entry.changefreq === undefined ? {} : { changefreq: entry.changefreq }),
    ts: new Date(result.startedAtMs).toISOString(),
    url: entry.url,
    status: result.status,
    bytes: result.wireBytes,
    contentType: result.contentType,
    links,
    durationMs: result.durationMs,
    depth: entry.depth,
    ...cut,
  };
}

/** The crawl log line of a fetch that failed with `code` at `atMs`; `reason` says why in words, when known. */
export function failureLogEntry(
  entry: QueuedUrl,
  code: ErrorCode,
  atMs: number,
  durationMs: number,
  reason?: string,
): CrawlLogInput {
  return {
    ...(reason === undefined ? {} : { reason }),
    ts: new Date(atMs).toISOString(),
    url: entry.url,
    status: 0,
    bytes: 0,
    contentType: "",
    links: 0,
    durationMs,
    depth: entry.depth,
    error: code,
  };
}

/**
 * The crawl log line of a URL dropped without a request because its host's robots.txt asks for a
 * Crawl-delay over `--max-crawl-delay` (`--crawl-delay-policy skip`): status 0, `skipped` saying why
 * and `crawlDelayMs` what the host asked for (not a failure: `ubicrawl report` leaves such lines out).
 */
export function crawlDelaySkipLogEntry(entry: QueuedUrl, atMs: number, crawlDelayMs: number): CrawlLogInput {
  return {
    ts: new Date(atMs).toISOString(),
    url: entry.url,
    status: 0,
    bytes: 0,
    contentType: "",
    links: 0,
    durationMs: 0,
    depth: entry.depth,
    skipped: "crawl-delay-too-long",
    crawlDelayMs,
  };
}
