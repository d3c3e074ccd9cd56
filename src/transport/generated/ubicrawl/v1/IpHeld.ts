// Original file: proto/ubicrawl.proto


/**
 * One agent's requests in flight at an address handed over.
 */
export interface IpHeld {
  /**
   * The agent's id.
   */
  'agentId'?: (string);
  /**
   * How many.
   */
  'count'?: (number);
}

/**
 * One agent's requests in flight at an address handed over.
 */
export interface IpHeld__Output {
  /**
   * The agent's id.
   */
  'agentId': (string);
  /**
   * How many.
   */
  'count': (number);
}
