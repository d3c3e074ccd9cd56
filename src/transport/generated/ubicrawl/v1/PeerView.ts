// Original file: proto/ubicrawl.proto

import type { MemberStatus as _ubicrawl_v1_MemberStatus, MemberStatus__Output as _ubicrawl_v1_MemberStatus__Output } from '../../ubicrawl/v1/MemberStatus.js';
import type { Long } from '@grpc/proto-loader';

/**
 * How one agent sees one peer.
 */
export interface PeerView {
  /**
   * The peer's id.
   */
  'id'?: (string);
  /**
   * The peer's `host:port`.
   */
  'address'?: (string);
  /**
   * The peer's status in this agent's view.
   */
  'status'?: (_ubicrawl_v1_MemberStatus);
  /**
   * Milliseconds since this agent last heard of the peer.
   */
  'lastHeardMsAgo'?: (number | string | Long);
}

/**
 * How one agent sees one peer.
 */
export interface PeerView__Output {
  /**
   * The peer's id.
   */
  'id': (string);
  /**
   * The peer's `host:port`.
   */
  'address': (string);
  /**
   * The peer's status in this agent's view.
   */
  'status': (_ubicrawl_v1_MemberStatus__Output);
  /**
   * Milliseconds since this agent last heard of the peer.
   */
  'lastHeardMsAgo': (number);
}
