// Original file: proto/ubicrawl.proto


/**
 * HandOverHosts answer, sent once the hosts are durably taken in.
 */
export interface HandOverReply {
  /**
   * Hosts taken in.
   */
  'taken'?: (number);
}

/**
 * HandOverHosts answer, sent once the hosts are durably taken in.
 */
export interface HandOverReply__Output {
  /**
   * Hosts taken in.
   */
  'taken': (number);
}
