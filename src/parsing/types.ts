/** The shapes link extraction hands back. */

/** One outgoing link of a page. */
export interface ExtractedLink {
  /** The canonical absolute URL (see `normalizeUrl`). */
  url: string;
  /** True when every occurrence of the link had `rel=nofollow`, or the page itself is `nofollow`. */
  nofollow: boolean;
}

/** What a page says about itself and where it links to. */
export interface ExtractedPage {
  /** Unique links in document order, at most `maxLinks`. */
  links: ExtractedLink[];
  /** A robots meta tag asked not to index the page. */
  noindex: boolean;
  /** A robots meta tag asked not to follow the page's links; every link is then marked `nofollow`. */
  nofollow: boolean;
  /** The canonical URL relative links were resolved against: the first valid `<base href>` or the page. */
  baseUrl: string;
  /** More unique links were present than `maxLinks`; the rest were dropped. */
  truncated: boolean;
}

/** Options of `extractLinks`. */
export interface ExtractLinksOptions {
  /**
   * Most unique links returned per page; beyond it `truncated` is set.
   * @default 10000
   */
  maxLinks?: number;
  /**
   * The crawler's robots token (e.g. `ubicrawl`): `<meta name="ubicrawl">` counts like
   * `<meta name="robots">`. Matched case-insensitively.
   */
  userAgentToken?: string;
  /**
   * The `charset` of the response's Content-Type, used for byte input when the document has no BOM.
   * Unknown labels are ignored.
   */
  transportCharset?: string;
}
