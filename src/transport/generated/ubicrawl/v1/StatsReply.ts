// Original file: proto/ubicrawl.proto

import type { AgentStats as _ubicrawl_v1_AgentStats, AgentStats__Output as _ubicrawl_v1_AgentStats__Output } from '../../ubicrawl/v1/AgentStats.js';

/**
 * Statistics answer.
 */
export interface StatsReply {
  /**
   * One entry per agent that answered.
   */
  'agents'?: (_ubicrawl_v1_AgentStats)[];
}

/**
 * Statistics answer.
 */
export interface StatsReply__Output {
  /**
   * One entry per agent that answered.
   */
  'agents': (_ubicrawl_v1_AgentStats__Output)[];
}
