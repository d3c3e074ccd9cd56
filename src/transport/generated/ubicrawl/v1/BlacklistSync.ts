// Original file: proto/ubicrawl.proto

import type { BlacklistEntry as _ubicrawl_v1_BlacklistEntry, BlacklistEntry__Output as _ubicrawl_v1_BlacklistEntry__Output } from '../../ubicrawl/v1/BlacklistEntry.js';
import type { BlacklistRestored as _ubicrawl_v1_BlacklistRestored, BlacklistRestored__Output as _ubicrawl_v1_BlacklistRestored__Output } from '../../ubicrawl/v1/BlacklistRestored.js';

/**
 * The blacklist entries of an agent.
 */
export interface BlacklistSync {
  /**
   * Every pattern's last change, removals included (at most 10,000).
   */
  'entries'?: (_ubicrawl_v1_BlacklistEntry)[];
  /**
   * In a reply: what the answering agent's merge gave back of the hosts it took off the blacklist
   * (absent: it took none off, or it predates restoring them).
   */
  'restored'?: (_ubicrawl_v1_BlacklistRestored | null);
}

/**
 * The blacklist entries of an agent.
 */
export interface BlacklistSync__Output {
  /**
   * Every pattern's last change, removals included (at most 10,000).
   */
  'entries': (_ubicrawl_v1_BlacklistEntry__Output)[];
  /**
   * In a reply: what the answering agent's merge gave back of the hosts it took off the blacklist
   * (absent: it took none off, or it predates restoring them).
   */
  'restored': (_ubicrawl_v1_BlacklistRestored__Output | null);
}
