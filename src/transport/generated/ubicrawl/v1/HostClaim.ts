// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One host of a claim.
 */
export interface HostClaim {
  /**
   * The host key.
   */
  'host'?: (string);
  /**
   * Done fingerprints of this host already received from the asked agent (a continuation after
   * `more`): the answer starts after them.
   */
  'skip'?: (number | string | Long);
  /**
   * Page histories (`HostHandOver.pages`) of this host already received from the asked agent (a
   * continuation after `more`): the answer's start after them.
   */
  'skipPages'?: (number | string | Long);
}

/**
 * One host of a claim.
 */
export interface HostClaim__Output {
  /**
   * The host key.
   */
  'host': (string);
  /**
   * Done fingerprints of this host already received from the asked agent (a continuation after
   * `more`): the answer starts after them.
   */
  'skip': (number);
  /**
   * Page histories (`HostHandOver.pages`) of this host already received from the asked agent (a
   * continuation after `more`): the answer's start after them.
   */
  'skipPages': (number);
}
