// Original file: proto/ubicrawl.proto

import type { DigestSettlement as _ubicrawl_v1_DigestSettlement, DigestSettlement__Output as _ubicrawl_v1_DigestSettlement__Output } from '../../ubicrawl/v1/DigestSettlement.js';

/**
 * What `from_id` did with digests it claimed.
 */
export interface DigestSettlements {
  /**
   * Id of the agent that claimed them.
   */
  'fromId'?: (string);
  /**
   * At most 500.
   */
  'settlements'?: (_ubicrawl_v1_DigestSettlement)[];
}

/**
 * What `from_id` did with digests it claimed.
 */
export interface DigestSettlements__Output {
  /**
   * Id of the agent that claimed them.
   */
  'fromId': (string);
  /**
   * At most 500.
   */
  'settlements': (_ubicrawl_v1_DigestSettlement__Output)[];
}
