// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A server's push-back.
 */
export interface IpRefusal {
  /**
   * The address.
   */
  'ip'?: (string);
  /**
   * The wait its `Retry-After` asked for, ms, with `has_retry_after`.
   */
  'retryAfterMs'?: (number | string | Long);
  /**
   * False when the answer had no readable `Retry-After`: the authority's back-off applies.
   */
  'hasRetryAfter'?: (boolean);
}

/**
 * A server's push-back.
 */
export interface IpRefusal__Output {
  /**
   * The address.
   */
  'ip': (string);
  /**
   * The wait its `Retry-After` asked for, ms, with `has_retry_after`.
   */
  'retryAfterMs': (number);
  /**
   * False when the answer had no readable `Retry-After`: the authority's back-off applies.
   */
  'hasRetryAfter': (boolean);
}
