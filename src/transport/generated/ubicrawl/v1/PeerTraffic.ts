// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * URL exchange counters between this agent and one peer.
 */
export interface PeerTraffic {
  /**
   * The peer's id.
   */
  'peerId'?: (string);
  /**
   * URLs sent to the peer.
   */
  'urlsSent'?: (number | string | Long);
  /**
   * URLs received from the peer.
   */
  'urlsReceived'?: (number | string | Long);
  /**
   * Batches sent to the peer.
   */
  'batchesSent'?: (number | string | Long);
  /**
   * Batches received from the peer.
   */
  'batchesReceived'?: (number | string | Long);
}

/**
 * URL exchange counters between this agent and one peer.
 */
export interface PeerTraffic__Output {
  /**
   * The peer's id.
   */
  'peerId': (string);
  /**
   * URLs sent to the peer.
   */
  'urlsSent': (number);
  /**
   * URLs received from the peer.
   */
  'urlsReceived': (number);
  /**
   * Batches sent to the peer.
   */
  'batchesSent': (number);
  /**
   * Batches received from the peer.
   */
  'batchesReceived': (number);
}
