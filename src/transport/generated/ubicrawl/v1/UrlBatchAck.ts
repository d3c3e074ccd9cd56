// Original file: proto/ubicrawl.proto


/**
 * Acknowledgement of a URL batch; accepted + forwarded + duplicates + kept = number of URLs.
 */
export interface UrlBatchAck {
  /**
   * URLs the receiver owns and queued as new.
   */
  'accepted'?: (number);
  /**
   * URLs the receiver does not own (its view differs) and passed on to their owner.
   */
  'forwarded'?: (number);
  /**
   * URLs already seen (or a retried batch), dropped.
   */
  'duplicates'?: (number);
  /**
   * URLs of a `keep_for_owners` batch recorded for their owners.
   */
  'kept'?: (number);
}

/**
 * Acknowledgement of a URL batch; accepted + forwarded + duplicates + kept = number of URLs.
 */
export interface UrlBatchAck__Output {
  /**
   * URLs the receiver owns and queued as new.
   */
  'accepted': (number);
  /**
   * URLs the receiver does not own (its view differs) and passed on to their owner.
   */
  'forwarded': (number);
  /**
   * URLs already seen (or a retried batch), dropped.
   */
  'duplicates': (number);
  /**
   * URLs of a `keep_for_owners` batch recorded for their owners.
   */
  'kept': (number);
}
