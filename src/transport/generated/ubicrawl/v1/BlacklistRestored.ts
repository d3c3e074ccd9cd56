// Original file: proto/ubicrawl.proto


/**
 * URLs an agent had kept aside while their hosts were blacklisted, once the hosts came off the list.
 */
export interface BlacklistRestored {
  /**
   * Hosts whose kept-aside URLs were restored.
   */
  'hosts'?: (number);
  /**
   * URLs queued again by that agent (it owns their hosts).
   */
  'queuedHere'?: (number);
  /**
   * URLs sent to the agents owning their hosts (each queued there unless it has them already).
   */
  'sentToOwners'?: (number);
  /**
   * URLs now deeper than --max-depth or out of --scope: dropped.
   */
  'outOfLimits'?: (number);
  /**
   * URLs done meanwhile: not fetched again.
   */
  'doneMeanwhile'?: (number);
  /**
   * URLs dropped beyond the per-host cap of URLs kept aside: not kept, so not restored.
   */
  'beyondCap'?: (number);
}

/**
 * URLs an agent had kept aside while their hosts were blacklisted, once the hosts came off the list.
 */
export interface BlacklistRestored__Output {
  /**
   * Hosts whose kept-aside URLs were restored.
   */
  'hosts': (number);
  /**
   * URLs queued again by that agent (it owns their hosts).
   */
  'queuedHere': (number);
  /**
   * URLs sent to the agents owning their hosts (each queued there unless it has them already).
   */
  'sentToOwners': (number);
  /**
   * URLs now deeper than --max-depth or out of --scope: dropped.
   */
  'outOfLimits': (number);
  /**
   * URLs done meanwhile: not fetched again.
   */
  'doneMeanwhile': (number);
  /**
   * URLs dropped beyond the per-host cap of URLs kept aside: not kept, so not restored.
   */
  'beyondCap': (number);
}
