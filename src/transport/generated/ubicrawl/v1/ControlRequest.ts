// Original file: proto/ubicrawl.proto

import type { ControlAction as _ubicrawl_v1_ControlAction, ControlAction__Output as _ubicrawl_v1_ControlAction__Output } from '../../ubicrawl/v1/ControlAction.js';

/**
 * An operator command.
 */
export interface ControlRequest {
  /**
   * What to do.
   */
  'action'?: (_ubicrawl_v1_ControlAction);
  /**
   * The action's argument (a host pattern for the blacklist actions, NAME=VALUE for SET; empty otherwise).
   */
  'argument'?: (string);
  /**
   * The URLs of ADD_SEEDS (at most 10,000, each at most 4096 characters); empty otherwise.
   */
  'urls'?: (string)[];
}

/**
 * An operator command.
 */
export interface ControlRequest__Output {
  /**
   * What to do.
   */
  'action': (_ubicrawl_v1_ControlAction__Output);
  /**
   * The action's argument (a host pattern for the blacklist actions, NAME=VALUE for SET; empty otherwise).
   */
  'argument': (string);
  /**
   * The URLs of ADD_SEEDS (at most 10,000, each at most 4096 characters); empty otherwise.
   */
  'urls': (string)[];
}
