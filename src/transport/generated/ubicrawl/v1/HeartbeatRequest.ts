// Original file: proto/ubicrawl.proto

import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';
import type { AgentLoad as _ubicrawl_v1_AgentLoad, AgentLoad__Output as _ubicrawl_v1_AgentLoad__Output } from '../../ubicrawl/v1/AgentLoad.js';
import type { MemberFigures as _ubicrawl_v1_MemberFigures, MemberFigures__Output as _ubicrawl_v1_MemberFigures__Output } from '../../ubicrawl/v1/MemberFigures.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Heartbeat: liveness plus gossip.
 */
export interface HeartbeatRequest {
  /**
   * The sender itself.
   */
  'from'?: (_ubicrawl_v1_Member | null);
  /**
   * Gossip: the sender's view of the membership table.
   */
  'members'?: (_ubicrawl_v1_Member)[];
  /**
   * The sender's termination-detection counters.
   */
  'load'?: (_ubicrawl_v1_AgentLoad | null);
  /**
   * On `HeartbeatStream`: the sender's number for this request (at least 1, never reused on a stream),
   * echoed by its reply. Ignored on `Heartbeat` (0).
   */
  'sequence'?: (number | string | Long);
  /**
   * True when the sender's last heartbeat to the receiver went unanswered (failed or late): the
   * receiver then asks the sender too, whatever their ids, so the sender hears it through those
   * requests when only the replies of this pair's connection are lost or slow.
   */
  'unanswered'?: (boolean);
  /**
   * How the sender spreads URLs over the agents: "host" (its host's hash) or "url" (the URL's own, for
   * experiments); empty from an agent that predates the field, read as "host". A cluster uses one: the
   * receiver refuses a heartbeat that says otherwise with INVALID_ARGUMENT, so a newcomer that differs
   * cannot join.
   */
  'partitioning'?: (string);
  /**
   * The members' figures the sender knows (absent from an agent that predates the field).
   */
  'figures'?: (_ubicrawl_v1_MemberFigures)[];
}

/**
 * Heartbeat: liveness plus gossip.
 */
export interface HeartbeatRequest__Output {
  /**
   * The sender itself.
   */
  'from': (_ubicrawl_v1_Member__Output | null);
  /**
   * Gossip: the sender's view of the membership table.
   */
  'members': (_ubicrawl_v1_Member__Output)[];
  /**
   * The sender's termination-detection counters.
   */
  'load': (_ubicrawl_v1_AgentLoad__Output | null);
  /**
   * On `HeartbeatStream`: the sender's number for this request (at least 1, never reused on a stream),
   * echoed by its reply. Ignored on `Heartbeat` (0).
   */
  'sequence': (number);
  /**
   * True when the sender's last heartbeat to the receiver went unanswered (failed or late): the
   * receiver then asks the sender too, whatever their ids, so the sender hears it through those
   * requests when only the replies of this pair's connection are lost or slow.
   */
  'unanswered': (boolean);
  /**
   * How the sender spreads URLs over the agents: "host" (its host's hash) or "url" (the URL's own, for
   * experiments); empty from an agent that predates the field, read as "host". A cluster uses one: the
   * receiver refuses a heartbeat that says otherwise with INVALID_ARGUMENT, so a newcomer that differs
   * cannot join.
   */
  'partitioning': (string);
  /**
   * The members' figures the sender knows (absent from an agent that predates the field).
   */
  'figures': (_ubicrawl_v1_MemberFigures__Output)[];
}
