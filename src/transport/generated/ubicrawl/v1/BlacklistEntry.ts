// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One pattern of the host blacklist and its last change.
 */
export interface BlacklistEntry {
  /**
   * `example.org`, `example.org:443` or `*.example.org`, lower-case, at most 262 characters.
   */
  'pattern'?: (string);
  /**
   * True while blacklisted; false once removed (kept, so that the removal wins over older adds).
   */
  'blocked'?: (boolean);
  /**
   * When it last changed, ms since the epoch, by the clock of the agent that changed it.
   */
  'changedAtMs'?: (number | string | Long);
  /**
   * The agent that changed it (breaks ties between changes in the same ms).
   */
  'changedBy'?: (string);
}

/**
 * One pattern of the host blacklist and its last change.
 */
export interface BlacklistEntry__Output {
  /**
   * `example.org`, `example.org:443` or `*.example.org`, lower-case, at most 262 characters.
   */
  'pattern': (string);
  /**
   * True while blacklisted; false once removed (kept, so that the removal wins over older adds).
   */
  'blocked': (boolean);
  /**
   * When it last changed, ms since the epoch, by the clock of the agent that changed it.
   */
  'changedAtMs': (number);
  /**
   * The agent that changed it (breaks ties between changes in the same ms).
   */
  'changedBy': (string);
}
