// Original file: proto/ubicrawl.proto

import type { DigestState as _ubicrawl_v1_DigestState, DigestState__Output as _ubicrawl_v1_DigestState__Output } from '../../ubicrawl/v1/DigestState.js';
import type { PayloadOriginal as _ubicrawl_v1_PayloadOriginal, PayloadOriginal__Output as _ubicrawl_v1_PayloadOriginal__Output } from '../../ubicrawl/v1/PayloadOriginal.js';

/**
 * One digest's verdict.
 */
export interface DigestVerdict {
  /**
   * What the receiver knows of the digest.
   */
  'state'?: (_ubicrawl_v1_DigestState);
  /**
   * The response that stored the payload, with DIGEST_SEEN; absent otherwise.
   */
  'original'?: (_ubicrawl_v1_PayloadOriginal | null);
}

/**
 * One digest's verdict.
 */
export interface DigestVerdict__Output {
  /**
   * What the receiver knows of the digest.
   */
  'state': (_ubicrawl_v1_DigestState__Output);
  /**
   * The response that stored the payload, with DIGEST_SEEN; absent otherwise.
   */
  'original': (_ubicrawl_v1_PayloadOriginal__Output | null);
}
