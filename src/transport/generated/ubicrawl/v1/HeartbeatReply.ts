// Original file: proto/ubicrawl.proto

import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';
import type { AgentLoad as _ubicrawl_v1_AgentLoad, AgentLoad__Output as _ubicrawl_v1_AgentLoad__Output } from '../../ubicrawl/v1/AgentLoad.js';
import type { MemberFigures as _ubicrawl_v1_MemberFigures, MemberFigures__Output as _ubicrawl_v1_MemberFigures__Output } from '../../ubicrawl/v1/MemberFigures.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Heartbeat answer: the receiver's view and counters, so one round trip gossips both ways.
 */
export interface HeartbeatReply {
  /**
   * Gossip: the receiver's view of the membership table.
   */
  'members'?: (_ubicrawl_v1_Member)[];
  /**
   * The receiver's termination-detection counters.
   */
  'load'?: (_ubicrawl_v1_AgentLoad | null);
  /**
   * The receiver's own entry, so a joining agent learns the id behind a seed address.
   */
  'from'?: (_ubicrawl_v1_Member | null);
  /**
   * On `HeartbeatStream`: the `sequence` of the request this answers. 0 on `Heartbeat`.
   */
  'sequence'?: (number | string | Long);
  /**
   * The members' figures the receiver knows (absent from an agent that predates the field).
   */
  'figures'?: (_ubicrawl_v1_MemberFigures)[];
  /**
   * The incarnation at which the receiver held the sender's id alive or suspected (not gone) before
   * this request, when older than the request's: the sender restarted before the receiver found it
   * gone, so what its previous life granted as an IP authority may still run. 0: none (also from an
   * agent that predates the field).
   */
  'previousIncarnation'?: (number | string | Long);
}

/**
 * Heartbeat answer: the receiver's view and counters, so one round trip gossips both ways.
 */
export interface HeartbeatReply__Output {
  /**
   * Gossip: the receiver's view of the membership table.
   */
  'members': (_ubicrawl_v1_Member__Output)[];
  /**
   * The receiver's termination-detection counters.
   */
  'load': (_ubicrawl_v1_AgentLoad__Output | null);
  /**
   * The receiver's own entry, so a joining agent learns the id behind a seed address.
   */
  'from': (_ubicrawl_v1_Member__Output | null);
  /**
   * On `HeartbeatStream`: the `sequence` of the request this answers. 0 on `Heartbeat`.
   */
  'sequence': (number);
  /**
   * The members' figures the receiver knows (absent from an agent that predates the field).
   */
  'figures': (_ubicrawl_v1_MemberFigures__Output)[];
  /**
   * The incarnation at which the receiver held the sender's id alive or suspected (not gone) before
   * this request, when older than the request's: the sender restarted before the receiver found it
   * gone, so what its previous life granted as an IP authority may still run. 0: none (also from an
   * agent that predates the field).
   */
  'previousIncarnation': (number);
}
