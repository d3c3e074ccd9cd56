// Original file: proto/ubicrawl.proto


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
}
