// Original file: proto/ubicrawl.proto

import type { IpHandOver as _ubicrawl_v1_IpHandOver, IpHandOver__Output as _ubicrawl_v1_IpHandOver__Output } from '../../ubicrawl/v1/IpHandOver.js';

/**
 * One address handed over by an agent that leaves (`IpRequest.handed_off`).
 */
export interface IpHandOff {
  /**
   * The address.
   */
  'ip'?: (string);
  /**
   * What the sender granted there that may still run, as of the request.
   */
  'state'?: (_ubicrawl_v1_IpHandOver | null);
}

/**
 * One address handed over by an agent that leaves (`IpRequest.handed_off`).
 */
export interface IpHandOff__Output {
  /**
   * The address.
   */
  'ip': (string);
  /**
   * What the sender granted there that may still run, as of the request.
   */
  'state': (_ubicrawl_v1_IpHandOver__Output | null);
}
