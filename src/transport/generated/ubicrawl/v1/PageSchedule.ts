// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * What a continuous crawl (`--recrawl`) keeps of one done page of a handed-over host: what a conditional
 * GET, the change-rate estimate and the revisit schedule need. The receiver keeps whichever history of
 * the page saw the later visit (the one handed over on a tie).
 */
export interface PageSchedule {
  /**
   * The page's canonical URL (at most 4096 characters), of the host handed over.
   */
  'url'?: (string);
  /**
   * The URL's per-host depth.
   */
  'depth'?: (number);
  /**
   * The last answer's ETag (at most 1024 characters); empty: none.
   */
  'etag'?: (string);
  /**
   * The last answer's Last-Modified (at most 64 characters); empty: none.
   */
  'lastModified'?: (string);
  /**
   * The `sha1:` digest of the page's current payload (at most 64 characters); empty: no capture to
   * compare (an error page, a truncated body), and the capture fields below are empty too.
   */
  'captureDigest'?: (string);
  /**
   * The URL of the stored response holding that payload (the WARC record a revisit refers to).
   */
  'captureUrl'?: (string);
  /**
   * That response's WARC-Date (at most 64 characters).
   */
  'captureDate'?: (string);
  /**
   * That response's WARC-Record-ID (at most 128 characters).
   */
  'captureRecordId'?: (string);
  /**
   * Fetches of the page that got an answer (at least 1).
   */
  'visits'?: (number);
  /**
   * Visits after the first that found the page changed (at most visits - 1).
   */
  'changes'?: (number);
  /**
   * Time between the first visit and the last, ms.
   */
  'observedMs'?: (number | string | Long);
  /**
   * When the last visit started, ms since the epoch.
   */
  'lastAtMs'?: (number | string | Long);
  /**
   * When the page is due again, ms since the epoch; 0: no revisit planned at the sender (queued there
   * already, or past its horizon): the receiver plans one from the last visit.
   */
  'nextAtMs'?: (number | string | Long);
  /**
   * The `<changefreq>` a sitemap gave the page when it was first queued (values as in
   * `DiscoveredUrl.changefreq`); empty: none. Under `--recrawl adaptive` it sets the page's intervals
   * until its own visits give an estimate; a hand-over with any other value is refused.
   */
  'changefreq'?: (string);
}

/**
 * What a continuous crawl (`--recrawl`) keeps of one done page of a handed-over host: what a conditional
 * GET, the change-rate estimate and the revisit schedule need. The receiver keeps whichever history of
 * the page saw the later visit (the one handed over on a tie).
 */
export interface PageSchedule__Output {
  /**
   * The page's canonical URL (at most 4096 characters), of the host handed over.
   */
  'url': (string);
  /**
   * The URL's per-host depth.
   */
  'depth': (number);
  /**
   * The last answer's ETag (at most 1024 characters); empty: none.
   */
  'etag': (string);
  /**
   * The last answer's Last-Modified (at most 64 characters); empty: none.
   */
  'lastModified': (string);
  /**
   * The `sha1:` digest of the page's current payload (at most 64 characters); empty: no capture to
   * compare (an error page, a truncated body), and the capture fields below are empty too.
   */
  'captureDigest': (string);
  /**
   * The URL of the stored response holding that payload (the WARC record a revisit refers to).
   */
  'captureUrl': (string);
  /**
   * That response's WARC-Date (at most 64 characters).
   */
  'captureDate': (string);
  /**
   * That response's WARC-Record-ID (at most 128 characters).
   */
  'captureRecordId': (string);
  /**
   * Fetches of the page that got an answer (at least 1).
   */
  'visits': (number);
  /**
   * Visits after the first that found the page changed (at most visits - 1).
   */
  'changes': (number);
  /**
   * Time between the first visit and the last, ms.
   */
  'observedMs': (number);
  /**
   * When the last visit started, ms since the epoch.
   */
  'lastAtMs': (number);
  /**
   * When the page is due again, ms since the epoch; 0: no revisit planned at the sender (queued there
   * already, or past its horizon): the receiver plans one from the last visit.
   */
  'nextAtMs': (number);
  /**
   * The `<changefreq>` a sitemap gave the page when it was first queued (values as in
   * `DiscoveredUrl.changefreq`); empty: none. Under `--recrawl adaptive` it sets the page's intervals
   * until its own visits give an estimate; a hand-over with any other value is refused.
   */
  'changefreq': (string);
}
