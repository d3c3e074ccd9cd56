// Original file: proto/ubicrawl.proto

import type { MemberStatus as _ubicrawl_v1_MemberStatus, MemberStatus__Output as _ubicrawl_v1_MemberStatus__Output } from '../../ubicrawl/v1/MemberStatus.js';
import type { Long } from '@grpc/proto-loader';

/**
 * One entry of the membership table.
 */
export interface Member {
  /**
   * Unique agent identifier (1-128 chars of [A-Za-z0-9._-]); it seeds the agent's replicas.
   */
  'id'?: (string);
  /**
   * Where the agent's gRPC server listens, as `host:port`.
   */
  'address'?: (string);
  /**
   * Relative capacity (at least 1); multiplies the number of replicas on the circle.
   */
  'capacity'?: (number);
  /**
   * Incremented by the agent itself on restart or to refute a suspicion; the higher one wins.
   */
  'incarnation'?: (number | string | Long);
  /**
   * How the sender regards this member.
   */
  'status'?: (_ubicrawl_v1_MemberStatus);
  /**
   * Milliseconds since the sender last heard (directly or by gossip) from this member.
   */
  'lastHeardMsAgo'?: (number | string | Long);
}

/**
 * One entry of the membership table.
 */
export interface Member__Output {
  /**
   * Unique agent identifier (1-128 chars of [A-Za-z0-9._-]); it seeds the agent's replicas.
   */
  'id': (string);
  /**
   * Where the agent's gRPC server listens, as `host:port`.
   */
  'address': (string);
  /**
   * Relative capacity (at least 1); multiplies the number of replicas on the circle.
   */
  'capacity': (number);
  /**
   * Incremented by the agent itself on restart or to refute a suspicion; the higher one wins.
   */
  'incarnation': (number);
  /**
   * How the sender regards this member.
   */
  'status': (_ubicrawl_v1_MemberStatus__Output);
  /**
   * Milliseconds since the sender last heard (directly or by gossip) from this member.
   */
  'lastHeardMsAgo': (number);
}
