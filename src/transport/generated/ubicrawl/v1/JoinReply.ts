// Original file: proto/ubicrawl.proto

import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';

/**
 * Join answer: the receiver's whole membership table, the newcomer included.
 */
export interface JoinReply {
  /**
   * Every member the receiver knows, with its status.
   */
  'members'?: (_ubicrawl_v1_Member)[];
}

/**
 * Join answer: the receiver's whole membership table, the newcomer included.
 */
export interface JoinReply__Output {
  /**
   * Every member the receiver knows, with its status.
   */
  'members': (_ubicrawl_v1_Member__Output)[];
}
