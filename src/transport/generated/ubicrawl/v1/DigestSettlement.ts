// Original file: proto/ubicrawl.proto

import type { PayloadOriginal as _ubicrawl_v1_PayloadOriginal, PayloadOriginal__Output as _ubicrawl_v1_PayloadOriginal__Output } from '../../ubicrawl/v1/PayloadOriginal.js';

/**
 * One claim's end.
 */
export interface DigestSettlement {
  /**
   * The payload digest claimed (`sha1:` and 32 base32 characters).
   */
  'digest'?: (string);
  /**
   * The stored response; absent: it could not be stored, and the claim is released.
   */
  'original'?: (_ubicrawl_v1_PayloadOriginal | null);
}

/**
 * One claim's end.
 */
export interface DigestSettlement__Output {
  /**
   * The payload digest claimed (`sha1:` and 32 base32 characters).
   */
  'digest': (string);
  /**
   * The stored response; absent: it could not be stored, and the claim is released.
   */
  'original': (_ubicrawl_v1_PayloadOriginal__Output | null);
}
