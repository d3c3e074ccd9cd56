// Original file: proto/ubicrawl.proto


/**
 * A URL found by a crawler, with the depth at which it was found.
 */
export interface DiscoveredUrl {
  /**
   * Absolute http(s) URL, at most 4096 characters; the receiver normalizes it again.
   */
  'url'?: (string);
  /**
   * Per-host link depth: 0 when the link came from another host (or is a seed), else the
   * depth of the page it was found on plus one.
   */
  'depth'?: (number);
  /**
   * Fetch attempts of this URL that failed in a way that may pass (a queue handed over keeps them), so
   * the senders' and the receiver's attempts together stay within `--max-fetch-attempts`. 0: none.
   */
  'attempts'?: (number);
  /**
   * A sitemap file to read (its pages are queued in turn), not a page: a host's queued sitemaps stay
   * sitemaps when the host changes hands.
   */
  'sitemap'?: (boolean);
  /**
   * The `<lastmod>` a sitemap gave the page, as written (at most 64 characters); empty: none.
   */
  'lastmod'?: (string);
  /**
   * For a sitemap on another host than the one whose robots.txt listed it (sitemaps.org's
   * cross-submission): that host's key, whose URLs the sitemap may list; empty: none.
   */
  'sitemapFor'?: (string);
  /**
   * The `<changefreq>` a sitemap gave the page, one of sitemaps.org's values in lower case ("always",
   * "hourly", "daily", "weekly", "monthly", "yearly", "never"); empty: none. A hint of the page's first
   * revisit interval under `--recrawl adaptive`; a batch with any other value is refused.
   */
  'changefreq'?: (string);
}

/**
 * A URL found by a crawler, with the depth at which it was found.
 */
export interface DiscoveredUrl__Output {
  /**
   * Absolute http(s) URL, at most 4096 characters; the receiver normalizes it again.
   */
  'url': (string);
  /**
   * Per-host link depth: 0 when the link came from another host (or is a seed), else the
   * depth of the page it was found on plus one.
   */
  'depth': (number);
  /**
   * Fetch attempts of this URL that failed in a way that may pass (a queue handed over keeps them), so
   * the senders' and the receiver's attempts together stay within `--max-fetch-attempts`. 0: none.
   */
  'attempts': (number);
  /**
   * A sitemap file to read (its pages are queued in turn), not a page: a host's queued sitemaps stay
   * sitemaps when the host changes hands.
   */
  'sitemap': (boolean);
  /**
   * The `<lastmod>` a sitemap gave the page, as written (at most 64 characters); empty: none.
   */
  'lastmod': (string);
  /**
   * For a sitemap on another host than the one whose robots.txt listed it (sitemaps.org's
   * cross-submission): that host's key, whose URLs the sitemap may list; empty: none.
   */
  'sitemapFor': (string);
  /**
   * The `<changefreq>` a sitemap gave the page, one of sitemaps.org's values in lower case ("always",
   * "hourly", "daily", "weekly", "monthly", "yearly", "never"); empty: none. A hint of the page's first
   * revisit interval under `--recrawl adaptive`; a batch with any other value is refused.
   */
  'changefreq': (string);
}
