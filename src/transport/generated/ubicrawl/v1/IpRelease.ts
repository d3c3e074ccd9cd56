// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Requests to one address that ended.
 */
export interface IpRelease {
  /**
   * The address.
   */
  'ip'?: (string);
  /**
   * The slots of the requests that ended (at most 1,000).
   */
  'slotIds'?: (number | string | Long)[];
  /**
   * How many of the requests the sender may have started under its lease ended (or were never started):
   * with a lease still running, the lease is returned.
   */
  'leaseSlots'?: (number);
  /**
   * Whose requests ended, when not the sender's (empty: the sender's): a release sent on by an agent
   * that does not keep the address's account (it left, or handed the address over, or its view names
   * another authority) to the one that does, where its slot ends exactly (by id); its lease part counts
   * only against what was handed over there (a lease has no id: it ends no lease the holder may use again).
   */
  'agentId'?: (string);
  /**
   * How many times it was sent on, this time included (0: from the agent whose requests ended); an
   * agent sends a release on while this is under 2.
   */
  'hops'?: (number);
}

/**
 * Requests to one address that ended.
 */
export interface IpRelease__Output {
  /**
   * The address.
   */
  'ip': (string);
  /**
   * The slots of the requests that ended (at most 1,000).
   */
  'slotIds': (number)[];
  /**
   * How many of the requests the sender may have started under its lease ended (or were never started):
   * with a lease still running, the lease is returned.
   */
  'leaseSlots': (number);
  /**
   * Whose requests ended, when not the sender's (empty: the sender's): a release sent on by an agent
   * that does not keep the address's account (it left, or handed the address over, or its view names
   * another authority) to the one that does, where its slot ends exactly (by id); its lease part counts
   * only against what was handed over there (a lease has no id: it ends no lease the holder may use again).
   */
  'agentId': (string);
  /**
   * How many times it was sent on, this time included (0: from the agent whose requests ended); an
   * agent sends a release on while this is under 2.
   */
  'hops': (number);
}
