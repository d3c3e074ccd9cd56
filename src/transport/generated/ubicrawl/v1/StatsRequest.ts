// Original file: proto/ubicrawl.proto


/**
 * Statistics query.
 */
export interface StatsRequest {
  /**
   * False: only the receiver's own stats. True: also ask every live member it knows.
   */
  'cluster'?: (boolean);
}

/**
 * Statistics query.
 */
export interface StatsRequest__Output {
  /**
   * False: only the receiver's own stats. True: also ask every live member it knows.
   */
  'cluster': (boolean);
}
