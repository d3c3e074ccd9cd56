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
  /**
   * Apply it to every live agent: the agent asked applies it and relays it (`Agent.Control`, without
   * `cluster`) to each live member it knows; its reply lists every agent's outcome. Not taken by
   * ADD_SEEDS (each seed reaches its host's owner through any agent).
   */
  'cluster'?: (boolean);
  /**
   * ADD_SEEDS only (`ctl add-seeds --force`): queue each URL even when its owner has seen it before,
   * unless it is done there (fetched, or failed for good): nothing is fetched twice. The agent asked
   * relays the URLs other agents own to them (`Agent.Control`, with `relayed`).
   */
  'force'?: (boolean);
  /**
   * Set by an agent relaying forced seeds to their owners: the receiver relays none further (a URL it
   * does not own in its view is routed as a plain seed, and its reply says so).
   */
  'relayed'?: (boolean);
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
  /**
   * Apply it to every live agent: the agent asked applies it and relays it (`Agent.Control`, without
   * `cluster`) to each live member it knows; its reply lists every agent's outcome. Not taken by
   * ADD_SEEDS (each seed reaches its host's owner through any agent).
   */
  'cluster': (boolean);
  /**
   * ADD_SEEDS only (`ctl add-seeds --force`): queue each URL even when its owner has seen it before,
   * unless it is done there (fetched, or failed for good): nothing is fetched twice. The agent asked
   * relays the URLs other agents own to them (`Agent.Control`, with `relayed`).
   */
  'force': (boolean);
  /**
   * Set by an agent relaying forced seeds to their owners: the receiver relays none further (a URL it
   * does not own in its view is routed as a plain seed, and its reply says so).
   */
  'relayed': (boolean);
}
