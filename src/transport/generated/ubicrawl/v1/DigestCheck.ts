// Original file: proto/ubicrawl.proto

import type { DigestSettlement as _ubicrawl_v1_DigestSettlement, DigestSettlement__Output as _ubicrawl_v1_DigestSettlement__Output } from '../../ubicrawl/v1/DigestSettlement.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Payload digests the receiver owns, asked about by `from_id`.
 */
export interface DigestCheck {
  /**
   * Id of the asking agent (the claimant of the digests answered NEW).
   */
  'fromId'?: (string);
  /**
   * At most 500 digests, each `sha1:` and 32 base32 characters.
   */
  'digests'?: (string)[];
  /**
   * Claims of `from_id` settled since its last message to the receiver (at most 500), taken in before
   * the digests are answered: a busy agent's settlements ride on its questions.
   */
  'settlements'?: (_ubicrawl_v1_DigestSettlement)[];
  /**
   * The asking agent's incarnation: a claim of an earlier life of the same agent (it crashed before
   * settling) is void, so its restart does not wait for it.
   */
  'fromIncarnation'?: (number | string | Long);
  /**
   * On `DigestStream`: the sender's number for this request (at least 1, never reused on a stream),
   * which its reply carries back. 0 on `CheckDigests`.
   */
  'sequence'?: (number | string | Long);
}

/**
 * Payload digests the receiver owns, asked about by `from_id`.
 */
export interface DigestCheck__Output {
  /**
   * Id of the asking agent (the claimant of the digests answered NEW).
   */
  'fromId': (string);
  /**
   * At most 500 digests, each `sha1:` and 32 base32 characters.
   */
  'digests': (string)[];
  /**
   * Claims of `from_id` settled since its last message to the receiver (at most 500), taken in before
   * the digests are answered: a busy agent's settlements ride on its questions.
   */
  'settlements': (_ubicrawl_v1_DigestSettlement__Output)[];
  /**
   * The asking agent's incarnation: a claim of an earlier life of the same agent (it crashed before
   * settling) is void, so its restart does not wait for it.
   */
  'fromIncarnation': (number);
  /**
   * On `DigestStream`: the sender's number for this request (at least 1, never reused on a stream),
   * which its reply carries back. 0 on `CheckDigests`.
   */
  'sequence': (number);
}
