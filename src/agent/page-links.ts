import { type FetchResult, responseHeader } from "../fetching/index.js";
import { extractLinks } from "../parsing/index.js";
import { normalizeUrl } from "../url/index.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { LinkRouter } from "./link-router.js";

/** How links are read from a page. */
export interface PageLinkOptions {
  /** Links read from one page at most. */
  readonly maxLinksPerPage: number;
  /** Product token matched against meta robots names (besides `robots`); undefined when it has none. */
  readonly userAgentToken: string | undefined;
}

/** The page a link was found on. */
export interface LinkSource {
  readonly url: string;
  readonly depth: number;
  readonly host: string;
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/**
 * Routes the links of a fetched page (a redirect's target, or an HTML page's links that meta robots
 * and `rel=nofollow` let through); returns how many were found.
 */
export function followLinks(
  result: FetchResult,
  from: LinkSource,
  options: PageLinkOptions,
  deps: { readonly router: LinkRouter; readonly stats: CrawlStats },
): number {
  const { router, stats } = deps;
  if (result.status >= 300 && result.status < 400) {
    const location = responseHeader(result, "location");
    const target = location === undefined ? null : normalizeUrl(location, from.url);
    if (target === null) return 0;
    router.route(target, from.depth, from.host);
    return 1;
  }
  if (result.status < 200 || result.status >= 300 || !HTML_TYPES.has(result.contentType)) return 0;
  const page = extractLinks(result.body, from.url, {
    maxLinks: options.maxLinksPerPage,
    userAgentToken: options.userAgentToken,
    // The Content-Type charset outranks a <meta> one; without it windows-1252 or Shift_JIS links break.
    ...(result.charset === undefined ? {} : { transportCharset: result.charset }),
  });
  stats.linksFound += page.links.length;
  for (const link of page.links) {
    if (page.nofollow || link.nofollow) {
      stats.recordDrop("nofollow");
      continue;
    }
    router.route(link.url, from.depth, from.host);
  }
  return page.links.length;
}

/**
 * Whether every link of a page at `b` resolves as it does at `a`: same origin and same directory (a
 * relative link depends on nothing else; the query differs in session ids and tracking parameters).
 */
export function sameLinkBase(a: string, b: string): boolean {
  const x = new URL(a);
  const y = new URL(b);
  const directory = (path: string) => path.slice(0, path.lastIndexOf("/") + 1);
  return x.origin === y.origin && directory(x.pathname) === directory(y.pathname);
}
