// Original file: proto/ubicrawl.proto

/**
 * What a host's hand-over says about the host's crawl.
 */
export const HandOverStatus = {
  /**
   * Not set; refused by validation.
   */
  HAND_OVER_STATUS_UNSPECIFIED: 'HAND_OVER_STATUS_UNSPECIFIED',
  /**
   * The sender held the host's crawl and passes it to the receiver (the claimant, or the next owner).
   */
  GRANTED: 'GRANTED',
  /**
   * The sender passed the host's crawl to `holder` before: ask it.
   */
  PASSED: 'PASSED',
  /**
   * The sender does not hold the host's crawl: ask `holder` when set, else the next agent along the circle.
   */
  NOT_HELD: 'NOT_HELD',
  /**
   * In the sender's view the host belongs to `holder`, not to the claimant (the claimant's view lacks
   * that agent): the claimant learns of it and does not crawl the host.
   */
  NOT_YOURS: 'NOT_YOURS',
  /**
   * The sender passed the crawl on but still has a request in flight to the host: ask again soon.
   */
  LATER: 'LATER',
} as const;

/**
 * What a host's hand-over says about the host's crawl.
 */
export type HandOverStatus =
  /**
   * Not set; refused by validation.
   */
  | 'HAND_OVER_STATUS_UNSPECIFIED'
  | 0
  /**
   * The sender held the host's crawl and passes it to the receiver (the claimant, or the next owner).
   */
  | 'GRANTED'
  | 1
  /**
   * The sender passed the host's crawl to `holder` before: ask it.
   */
  | 'PASSED'
  | 2
  /**
   * The sender does not hold the host's crawl: ask `holder` when set, else the next agent along the circle.
   */
  | 'NOT_HELD'
  | 3
  /**
   * In the sender's view the host belongs to `holder`, not to the claimant (the claimant's view lacks
   * that agent): the claimant learns of it and does not crawl the host.
   */
  | 'NOT_YOURS'
  | 4
  /**
   * The sender passed the crawl on but still has a request in flight to the host: ask again soon.
   */
  | 'LATER'
  | 5

/**
 * What a host's hand-over says about the host's crawl.
 */
export type HandOverStatus__Output = typeof HandOverStatus[keyof typeof HandOverStatus]
