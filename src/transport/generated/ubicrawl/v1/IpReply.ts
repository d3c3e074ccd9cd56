// Original file: proto/ubicrawl.proto

import type { IpGrant as _ubicrawl_v1_IpGrant, IpGrant__Output as _ubicrawl_v1_IpGrant__Output } from '../../ubicrawl/v1/IpGrant.js';
import type { IpHandOver as _ubicrawl_v1_IpHandOver, IpHandOver__Output as _ubicrawl_v1_IpHandOver__Output } from '../../ubicrawl/v1/IpHandOver.js';

/**
 * The answer to the asks of an IpRequest.
 */
export interface IpReply {
  /**
   * One grant per ask, in order.
   */
  'grants'?: (_ubicrawl_v1_IpGrant)[];
  /**
   * One per address of `take_over`, in order.
   */
  'handedOver'?: (_ubicrawl_v1_IpHandOver)[];
}

/**
 * The answer to the asks of an IpRequest.
 */
export interface IpReply__Output {
  /**
   * One grant per ask, in order.
   */
  'grants': (_ubicrawl_v1_IpGrant__Output)[];
  /**
   * One per address of `take_over`, in order.
   */
  'handedOver': (_ubicrawl_v1_IpHandOver__Output)[];
}
