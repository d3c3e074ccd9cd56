// Original file: proto/ubicrawl.proto

import type { IpHandOver as _ubicrawl_v1_IpHandOver, IpHandOver__Output as _ubicrawl_v1_IpHandOver__Output } from '../../ubicrawl/v1/IpHandOver.js';

/**
 * One address handed over by an agent that leaves (`IpRequest.handed_off`) or back to its authority
 * (`IpRequest.handed_back`), or what an agent holds at an address when another left its view
 * (`IpRequest.holdings`).
 */
export interface IpHandOff {
  /**
   * The address.
   */
  'ip'?: (string);
  /**
   * In `handed_off`: what the sender granted there that may still run, as of the request. In
   * `holdings`: the sender's own requests that may still run there, whoever granted them.
   */
  'state'?: (_ubicrawl_v1_IpHandOver | null);
  /**
   * In `holdings` only: true when the sender held a running lease there granted by the agent gone,
   * ended as it reports (so that agent had no request of its own there).
   */
  'leasedByGone'?: (boolean);
}

/**
 * One address handed over by an agent that leaves (`IpRequest.handed_off`) or back to its authority
 * (`IpRequest.handed_back`), or what an agent holds at an address when another left its view
 * (`IpRequest.holdings`).
 */
export interface IpHandOff__Output {
  /**
   * The address.
   */
  'ip': (string);
  /**
   * In `handed_off`: what the sender granted there that may still run, as of the request. In
   * `holdings`: the sender's own requests that may still run there, whoever granted them.
   */
  'state': (_ubicrawl_v1_IpHandOver__Output | null);
  /**
   * In `holdings` only: true when the sender held a running lease there granted by the agent gone,
   * ended as it reports (so that agent had no request of its own there).
   */
  'leasedByGone': (boolean);
}
