// Original file: proto/ubicrawl.proto

/**
 * Operator commands.
 */
export const ControlAction = {
  /**
   * Not set; refused by validation.
   */
  CONTROL_ACTION_UNSPECIFIED: 'CONTROL_ACTION_UNSPECIFIED',
  /**
   * Stop starting new fetches (in-flight ones finish); URL exchange continues.
   */
  PAUSE: 'PAUSE',
  /**
   * Resume fetching after PAUSE.
   */
  RESUME: 'RESUME',
  /**
   * Leave the cluster gracefully and stop.
   */
  LEAVE: 'LEAVE',
  /**
   * Add the host pattern in `argument` to the blacklist, durably: `example.org` (any port),
   * `example.org:443`, or `*.example.org` (every host below it). A malformed pattern is answered with
   * `ok` false.
   */
  BLACKLIST_ADD: 'BLACKLIST_ADD',
  /**
   * Remove the host pattern in `argument` from the blacklist.
   */
  BLACKLIST_REMOVE: 'BLACKLIST_REMOVE',
  /**
   * Inject the seed URLs in `urls` into the running crawl: each goes to its host's owner (and is
   * skipped there if seen before).
   */
  ADD_SEEDS: 'ADD_SEEDS',
  /**
   * Change a setting while the agent runs, `NAME=VALUE` in `argument`: `delay-ms` (the politeness
   * delay, from each host's next request) or `max-active-hosts`; until the agent stops. An unknown
   * name or a value out of range is answered with `ok` false.
   */
  SET: 'SET',
  /**
   * List the blacklist's patterns in the reply's `message`, one a line (empty: nothing blacklisted).
   */
  BLACKLIST_LIST: 'BLACKLIST_LIST',
} as const;

/**
 * Operator commands.
 */
export type ControlAction =
  /**
   * Not set; refused by validation.
   */
  | 'CONTROL_ACTION_UNSPECIFIED'
  | 0
  /**
   * Stop starting new fetches (in-flight ones finish); URL exchange continues.
   */
  | 'PAUSE'
  | 1
  /**
   * Resume fetching after PAUSE.
   */
  | 'RESUME'
  | 2
  /**
   * Leave the cluster gracefully and stop.
   */
  | 'LEAVE'
  | 3
  /**
   * Add the host pattern in `argument` to the blacklist, durably: `example.org` (any port),
   * `example.org:443`, or `*.example.org` (every host below it). A malformed pattern is answered with
   * `ok` false.
   */
  | 'BLACKLIST_ADD'
  | 4
  /**
   * Remove the host pattern in `argument` from the blacklist.
   */
  | 'BLACKLIST_REMOVE'
  | 5
  /**
   * Inject the seed URLs in `urls` into the running crawl: each goes to its host's owner (and is
   * skipped there if seen before).
   */
  | 'ADD_SEEDS'
  | 6
  /**
   * Change a setting while the agent runs, `NAME=VALUE` in `argument`: `delay-ms` (the politeness
   * delay, from each host's next request) or `max-active-hosts`; until the agent stops. An unknown
   * name or a value out of range is answered with `ok` false.
   */
  | 'SET'
  | 7
  /**
   * List the blacklist's patterns in the reply's `message`, one a line (empty: nothing blacklisted).
   */
  | 'BLACKLIST_LIST'
  | 8

/**
 * Operator commands.
 */
export type ControlAction__Output = typeof ControlAction[keyof typeof ControlAction]
