// Original file: proto/ubicrawl.proto


/**
 * Outcome of an operator command.
 */
export interface ControlReply {
  /**
   * True when the command was applied.
   */
  'ok'?: (boolean);
  /**
   * Human-readable outcome.
   */
  'message'?: (string);
}

/**
 * Outcome of an operator command.
 */
export interface ControlReply__Output {
  /**
   * True when the command was applied.
   */
  'ok': (boolean);
  /**
   * Human-readable outcome.
   */
  'message': (string);
}
