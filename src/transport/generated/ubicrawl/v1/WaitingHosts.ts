// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Hosts with queued URLs that wait for one reason.
 */
export interface WaitingHosts {
  /**
   * robots (robots.txt unavailable, asked again later), retry (a fetch that may pass, retried later),
   * throttled (the server answered 429 or 503), crawl-delay (robots.txt's Crawl-delay spaces its
   * requests by more than 2 s), polite (the agent's --delay-ms or --delay-factor does), held (for a
   * crashed previous owner: the takeover grace), hand-over (being handed over by the agent that crawled
   * it before), error (a visit that failed unexpectedly).
   */
  'reason'?: (string);
  /**
   * How many hosts.
   */
  'hosts'?: (number | string | Long);
  /**
   * Milliseconds until the first of them is visited again.
   */
  'nextInMs'?: (number | string | Long);
}

/**
 * Hosts with queued URLs that wait for one reason.
 */
export interface WaitingHosts__Output {
  /**
   * robots (robots.txt unavailable, asked again later), retry (a fetch that may pass, retried later),
   * throttled (the server answered 429 or 503), crawl-delay (robots.txt's Crawl-delay spaces its
   * requests by more than 2 s), polite (the agent's --delay-ms or --delay-factor does), held (for a
   * crashed previous owner: the takeover grace), hand-over (being handed over by the agent that crawled
   * it before), error (a visit that failed unexpectedly).
   */
  'reason': (string);
  /**
   * How many hosts.
   */
  'hosts': (number);
  /**
   * Milliseconds until the first of them is visited again.
   */
  'nextInMs': (number);
}
