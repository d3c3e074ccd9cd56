// Original file: proto/ubicrawl.proto

import type { IpGrantKind as _ubicrawl_v1_IpGrantKind, IpGrantKind__Output as _ubicrawl_v1_IpGrantKind__Output } from '../../ubicrawl/v1/IpGrantKind.js';
import type { Long } from '@grpc/proto-loader';

/**
 * The answer to one ask.
 */
export interface IpGrant {
  /**
   * What is granted.
   */
  'kind'?: (_ubicrawl_v1_IpGrantKind);
  /**
   * With IP_GRANT_SLOT: the slot to release.
   */
  'slotId'?: (number | string | Long);
  /**
   * With IP_GRANT_LEASE and IP_GRANT_SLOT: how long it lasts, ms.
   */
  'ttlMs'?: (number | string | Long);
  /**
   * With IP_GRANT_WAIT: when to ask again, ms.
   */
  'waitMs'?: (number | string | Long);
  /**
   * With IP_GRANT_LEASE: how long the sender starts nothing there, ms: a server's push-back, or the
   * IP delay (--ip-delay-ms) since the last start others were granted.
   */
  'blockedForMs'?: (number | string | Long);
  /**
   * With IP_GRANT_LEASE: the least gap between two starts there, ms: the IP delay, or a longer
   * Crawl-delay reported for a host at the address.
   */
  'delayMs'?: (number | string | Long);
  /**
   * With IP_GRANT_SLOT: how long the ask was held (`hold_ms`) before the slot was granted, ms. The
   * slot's time to start (`start_slack_ms`) counts from the grant: the sender gives the slot back
   * unused when its round trip, less this, took longer.
   */
  'heldMs'?: (number | string | Long);
  /**
   * With IP_GRANT_SLOT: how long after the grant its request may start, ms (0: 100, an authority that
   * predates the field): what the ask's `start_slack_ms` asked, within 100 to 1,000.
   */
  'startSlackMs'?: (number);
  /**
   * With IP_GRANT_LEASE: the lease's id, the same while it is renewed, unique across the authority's
   * addresses and lives (drawn from its slots' counter); the releases of its slots name it
   * (`IpRelease.lease_id`). 0: an authority that predates the field.
   */
  'leaseId'?: (number | string | Long);
}

/**
 * The answer to one ask.
 */
export interface IpGrant__Output {
  /**
   * What is granted.
   */
  'kind': (_ubicrawl_v1_IpGrantKind__Output);
  /**
   * With IP_GRANT_SLOT: the slot to release.
   */
  'slotId': (number);
  /**
   * With IP_GRANT_LEASE and IP_GRANT_SLOT: how long it lasts, ms.
   */
  'ttlMs': (number);
  /**
   * With IP_GRANT_WAIT: when to ask again, ms.
   */
  'waitMs': (number);
  /**
   * With IP_GRANT_LEASE: how long the sender starts nothing there, ms: a server's push-back, or the
   * IP delay (--ip-delay-ms) since the last start others were granted.
   */
  'blockedForMs': (number);
  /**
   * With IP_GRANT_LEASE: the least gap between two starts there, ms: the IP delay, or a longer
   * Crawl-delay reported for a host at the address.
   */
  'delayMs': (number);
  /**
   * With IP_GRANT_SLOT: how long the ask was held (`hold_ms`) before the slot was granted, ms. The
   * slot's time to start (`start_slack_ms`) counts from the grant: the sender gives the slot back
   * unused when its round trip, less this, took longer.
   */
  'heldMs': (number);
  /**
   * With IP_GRANT_SLOT: how long after the grant its request may start, ms (0: 100, an authority that
   * predates the field): what the ask's `start_slack_ms` asked, within 100 to 1,000.
   */
  'startSlackMs': (number);
  /**
   * With IP_GRANT_LEASE: the lease's id, the same while it is renewed, unique across the authority's
   * addresses and lives (drawn from its slots' counter); the releases of its slots name it
   * (`IpRelease.lease_id`). 0: an authority that predates the field.
   */
  'leaseId': (number);
}
