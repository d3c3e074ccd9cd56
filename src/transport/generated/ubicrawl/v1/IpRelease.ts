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
   * Whose requests ended, when not the sender's (empty: the sender's): an authority that left forwards
   * the releases it still gets for an address it handed over to the address's next authority.
   */
  'agentId'?: (string);
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
   * Whose requests ended, when not the sender's (empty: the sender's): an authority that left forwards
   * the releases it still gets for an address it handed over to the address's next authority.
   */
  'agentId': (string);
}
