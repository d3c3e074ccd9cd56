// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A robots.txt Crawl-delay of a host at an address.
 */
export interface IpCrawlDelay {
  /**
   * The address.
   */
  'ip'?: (string);
  /**
   * The Crawl-delay, ms, as the sender honours it (within its --max-crawl-delay).
   */
  'delayMs'?: (number | string | Long);
}

/**
 * A robots.txt Crawl-delay of a host at an address.
 */
export interface IpCrawlDelay__Output {
  /**
   * The address.
   */
  'ip': (string);
  /**
   * The Crawl-delay, ms, as the sender honours it (within its --max-crawl-delay).
   */
  'delayMs': (number);
}
