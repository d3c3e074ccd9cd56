// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

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
  /**
   * How long it may still start requests there, ms, with `has_starts_for` (under a lease it holds:
   * until the lease's end). Without it (an older sender), until the hand-over's `until_ms`. Starts the
   * sender granted as slots are in `IpHandOver.spaced_for_ms`.
   */
  'startsForMs'?: (number | string | Long);
  /**
   * True when `starts_for_ms` is said.
   */
  'hasStartsFor'?: (boolean);
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
  /**
   * How long it may still start requests there, ms, with `has_starts_for` (under a lease it holds:
   * until the lease's end). Without it (an older sender), until the hand-over's `until_ms`. Starts the
   * sender granted as slots are in `IpHandOver.spaced_for_ms`.
   */
  'startsForMs': (number);
  /**
   * True when `starts_for_ms` is said.
   */
  'hasStartsFor': (boolean);
}
