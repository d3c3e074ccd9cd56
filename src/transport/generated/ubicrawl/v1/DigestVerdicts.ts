// Original file: proto/ubicrawl.proto

import type { DigestVerdict as _ubicrawl_v1_DigestVerdict, DigestVerdict__Output as _ubicrawl_v1_DigestVerdict__Output } from '../../ubicrawl/v1/DigestVerdict.js';

/**
 * The answer of a DigestCheck.
 */
export interface DigestVerdicts {
  /**
   * One verdict per digest asked, in order.
   */
  'verdicts'?: (_ubicrawl_v1_DigestVerdict)[];
}

/**
 * The answer of a DigestCheck.
 */
export interface DigestVerdicts__Output {
  /**
   * One verdict per digest asked, in order.
   */
  'verdicts': (_ubicrawl_v1_DigestVerdict__Output)[];
}
