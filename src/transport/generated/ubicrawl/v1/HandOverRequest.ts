// Original file: proto/ubicrawl.proto

import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';
import type { HostHandOver as _ubicrawl_v1_HostHandOver, HostHandOver__Output as _ubicrawl_v1_HostHandOver__Output } from '../../ubicrawl/v1/HostHandOver.js';

/**
 * HandOverHosts: hosts pushed by an agent that leaves.
 */
export interface HandOverRequest {
  /**
   * The sender.
   */
  'from'?: (_ubicrawl_v1_Member | null);
  /**
   * At most 1,000 hosts, each GRANTED.
   */
  'hosts'?: (_ubicrawl_v1_HostHandOver)[];
}

/**
 * HandOverHosts: hosts pushed by an agent that leaves.
 */
export interface HandOverRequest__Output {
  /**
   * The sender.
   */
  'from': (_ubicrawl_v1_Member__Output | null);
  /**
   * At most 1,000 hosts, each GRANTED.
   */
  'hosts': (_ubicrawl_v1_HostHandOver__Output)[];
}
