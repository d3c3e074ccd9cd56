// Original file: proto/ubicrawl.proto

import type { HostHandOver as _ubicrawl_v1_HostHandOver, HostHandOver__Output as _ubicrawl_v1_HostHandOver__Output } from '../../ubicrawl/v1/HostHandOver.js';

/**
 * ClaimHosts answer.
 */
export interface ClaimReply {
  /**
   * One entry per claimed host, in the same order.
   */
  'hosts'?: (_ubicrawl_v1_HostHandOver)[];
}

/**
 * ClaimHosts answer.
 */
export interface ClaimReply__Output {
  /**
   * One entry per claimed host, in the same order.
   */
  'hosts': (_ubicrawl_v1_HostHandOver__Output)[];
}
