// Original file: proto/ubicrawl.proto

import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';

/**
 * Join: a newcomer announces itself.
 */
export interface JoinRequest {
  /**
   * The newcomer itself (status ALIVE).
   */
  'member'?: (_ubicrawl_v1_Member | null);
}

/**
 * Join: a newcomer announces itself.
 */
export interface JoinRequest__Output {
  /**
   * The newcomer itself (status ALIVE).
   */
  'member': (_ubicrawl_v1_Member__Output | null);
}
