// Original file: proto/ubicrawl.proto

import type { IpHeld as _ubicrawl_v1_IpHeld, IpHeld__Output as _ubicrawl_v1_IpHeld__Output } from '../../ubicrawl/v1/IpHeld.js';
import type { Long } from '@grpc/proto-loader';

/**
 * What an address's previous authority granted that may still run.
 */
export interface IpHandOver {
  /**
   * Requests each agent may still have in flight there (at most 1,000 entries).
   */
  'held'?: (_ubicrawl_v1_IpHeld)[];
  /**
   * How long they may still run at most, ms.
   */
  'untilMs'?: (number | string | Long);
  /**
   * How long the address is still blocked by a server's push-back, ms.
   */
  'blockedForMs'?: (number | string | Long);
  /**
   * How long the next request there must wait still for the IP delay (--ip-delay-ms) since the last
   * start the sender granted or leased, ms.
   */
  'spacedForMs'?: (number | string | Long);
  /**
   * How long nothing may be granted there, ms: the sender does not know all that may run there (it was
   * still waiting for its own previous authority's answer or a crashed one's grace, or it has left).
   */
  'holdForMs'?: (number | string | Long);
}

/**
 * What an address's previous authority granted that may still run.
 */
export interface IpHandOver__Output {
  /**
   * Requests each agent may still have in flight there (at most 1,000 entries).
   */
  'held': (_ubicrawl_v1_IpHeld__Output)[];
  /**
   * How long they may still run at most, ms.
   */
  'untilMs': (number);
  /**
   * How long the address is still blocked by a server's push-back, ms.
   */
  'blockedForMs': (number);
  /**
   * How long the next request there must wait still for the IP delay (--ip-delay-ms) since the last
   * start the sender granted or leased, ms.
   */
  'spacedForMs': (number);
  /**
   * How long nothing may be granted there, ms: the sender does not know all that may run there (it was
   * still waiting for its own previous authority's answer or a crashed one's grace, or it has left).
   */
  'holdForMs': (number);
}
