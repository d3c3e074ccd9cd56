// Original file: proto/ubicrawl.proto


/**
 * The WARC response record that stored a payload first: what a revisit record refers to.
 */
export interface PayloadOriginal {
  /**
   * Its WARC-Target-URI (at most 4096 characters).
   */
  'url'?: (string);
  /**
   * Its WARC-Date (ISO 8601, UTC).
   */
  'date'?: (string);
  /**
   * Its WARC-Record-ID (`<urn:uuid:…>`).
   */
  'recordId'?: (string);
}

/**
 * The WARC response record that stored a payload first: what a revisit record refers to.
 */
export interface PayloadOriginal__Output {
  /**
   * Its WARC-Target-URI (at most 4096 characters).
   */
  'url': (string);
  /**
   * Its WARC-Date (ISO 8601, UTC).
   */
  'date': (string);
  /**
   * Its WARC-Record-ID (`<urn:uuid:…>`).
   */
  'recordId': (string);
}
