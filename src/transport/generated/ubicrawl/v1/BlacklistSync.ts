// Original file: proto/ubicrawl.proto

import type { BlacklistEntry as _ubicrawl_v1_BlacklistEntry, BlacklistEntry__Output as _ubicrawl_v1_BlacklistEntry__Output } from '../../ubicrawl/v1/BlacklistEntry.js';

/**
 * The blacklist entries of an agent.
 */
export interface BlacklistSync {
  /**
   * Every pattern's last change, removals included (at most 10,000).
   */
  'entries'?: (_ubicrawl_v1_BlacklistEntry)[];
}

/**
 * The blacklist entries of an agent.
 */
export interface BlacklistSync__Output {
  /**
   * Every pattern's last change, removals included (at most 10,000).
   */
  'entries': (_ubicrawl_v1_BlacklistEntry__Output)[];
}
