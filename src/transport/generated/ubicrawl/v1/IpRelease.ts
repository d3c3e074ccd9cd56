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
   * How many of the requests the sender may have started under the lease `lease_id` ended (or were
   * never started): the sender ended that lease, so a lease still running is returned.
   */
  'leaseSlots'?: (number);
  /**
   * Whose requests ended, when not the sender's (empty: the sender's): a release sent on by an agent
   * that does not keep the address's account (it left, or handed the address over, or its view names
   * another authority) to the one that does, where its slot and lease end exactly (by id), or are taken
   * off what was handed over there.
   */
  'agentId'?: (string);
  /**
   * How many times it was sent on, this time included (0: from the agent whose requests ended); an
   * agent sends a release on while this is under 2.
   */
  'hops'?: (number);
  /**
   * The lease `lease_slots` are of (`IpGrant.lease_id`). Its authority takes them off that lease only,
   * so a late release of a lease over never frees what a later one of the same agent's may run; another
   * authority's lease comes off what the receiver counts of the agent without an id (what other
   * authorities handed over, or a crash left). 0 (an agent that predates the field): the lease part
   * ends nothing, and what it counts ends as it expires.
   */
  'leaseId'?: (number | string | Long);
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
   * How many of the requests the sender may have started under the lease `lease_id` ended (or were
   * never started): the sender ended that lease, so a lease still running is returned.
   */
  'leaseSlots': (number);
  /**
   * Whose requests ended, when not the sender's (empty: the sender's): a release sent on by an agent
   * that does not keep the address's account (it left, or handed the address over, or its view names
   * another authority) to the one that does, where its slot and lease end exactly (by id), or are taken
   * off what was handed over there.
   */
  'agentId': (string);
  /**
   * How many times it was sent on, this time included (0: from the agent whose requests ended); an
   * agent sends a release on while this is under 2.
   */
  'hops': (number);
  /**
   * The lease `lease_slots` are of (`IpGrant.lease_id`). Its authority takes them off that lease only,
   * so a late release of a lease over never frees what a later one of the same agent's may run; another
   * authority's lease comes off what the receiver counts of the agent without an id (what other
   * authorities handed over, or a crash left). 0 (an agent that predates the field): the lease part
   * ends nothing, and what it counts ends as it expires.
   */
  'leaseId': (number);
}
