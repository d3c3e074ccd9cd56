// Original file: proto/ubicrawl.proto

import type { DigestVerdict as _ubicrawl_v1_DigestVerdict, DigestVerdict__Output as _ubicrawl_v1_DigestVerdict__Output } from '../../ubicrawl/v1/DigestVerdict.js';
import type { Long } from '@grpc/proto-loader';

/**
 * The answer of a DigestCheck.
 */
export interface DigestVerdicts {
  /**
   * One verdict per digest asked, in order.
   */
  'verdicts'?: (_ubicrawl_v1_DigestVerdict)[];
  /**
   * On `DigestStream`: the `sequence` of the request this answers. 0 on `CheckDigests`.
   */
  'sequence'?: (number | string | Long);
}

/**
 * The answer of a DigestCheck.
 */
export interface DigestVerdicts__Output {
  /**
   * One verdict per digest asked, in order.
   */
  'verdicts': (_ubicrawl_v1_DigestVerdict__Output)[];
  /**
   * On `DigestStream`: the `sequence` of the request this answers. 0 on `CheckDigests`.
   */
  'sequence': (number);
}
