// Original file: proto/ubicrawl.proto

import type { AgentControlOutcome as _ubicrawl_v1_AgentControlOutcome, AgentControlOutcome__Output as _ubicrawl_v1_AgentControlOutcome__Output } from '../../ubicrawl/v1/AgentControlOutcome.js';

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
  /**
   * With `cluster`: each live agent's outcome, the agent asked first.
   */
  'agents'?: (_ubicrawl_v1_AgentControlOutcome)[];
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
  /**
   * With `cluster`: each live agent's outcome, the agent asked first.
   */
  'agents': (_ubicrawl_v1_AgentControlOutcome__Output)[];
}
