// Original file: proto/ubicrawl.proto


/**
 * One agent's outcome of an operator command relayed to the whole cluster.
 */
export interface AgentControlOutcome {
  /**
   * The agent's id.
   */
  'id'?: (string);
  /**
   * The agent's `host:port`.
   */
  'address'?: (string);
  /**
   * True when the agent applied the command.
   */
  'ok'?: (boolean);
  /**
   * Its outcome, or why the relay failed.
   */
  'message'?: (string);
}

/**
 * One agent's outcome of an operator command relayed to the whole cluster.
 */
export interface AgentControlOutcome__Output {
  /**
   * The agent's id.
   */
  'id': (string);
  /**
   * The agent's `host:port`.
   */
  'address': (string);
  /**
   * True when the agent applied the command.
   */
  'ok': (boolean);
  /**
   * Its outcome, or why the relay failed.
   */
  'message': (string);
}
