// Original file: proto/ubicrawl.proto

/**
 * What an authority grants.
 */
export const IpGrantKind = {
  /**
   * Not set; refused by validation.
   */
  IP_GRANT_KIND_UNSPECIFIED: 'IP_GRANT_KIND_UNSPECIFIED',
  /**
   * The sender uses the address alone: it applies --max-per-ip and --ip-delay-ms itself for `ttl_ms`
   * from its ask, and starts nothing for `blocked_for_ms` from the answer.
   */
  IP_GRANT_LEASE: 'IP_GRANT_LEASE',
  /**
   * One request may start now; release `slot_id` when it ends (it expires after `ttl_ms` anyway). It
   * starts within `start_slack_ms` (100 unless asked for more) of its ask (of its grant, for an ask
   * held: `held_ms`) or not at all (the authority spaces its grants by --ip-delay-ms and that, and
   * blocks them at a server's push-back): a slot that came later is released unused.
   */
  IP_GRANT_SLOT: 'IP_GRANT_SLOT',
  /**
   * Nothing may start now: ask again after `wait_ms` (0: an ask held to the end of its hold, asked
   * again at once).
   */
  IP_GRANT_WAIT: 'IP_GRANT_WAIT',
  /**
   * The lease asked to be renewed is over: the sender starts nothing under it any more, releases what
   * it may have started under it, and asks for slots.
   */
  IP_GRANT_REVOKED: 'IP_GRANT_REVOKED',
} as const;

/**
 * What an authority grants.
 */
export type IpGrantKind =
  /**
   * Not set; refused by validation.
   */
  | 'IP_GRANT_KIND_UNSPECIFIED'
  | 0
  /**
   * The sender uses the address alone: it applies --max-per-ip and --ip-delay-ms itself for `ttl_ms`
   * from its ask, and starts nothing for `blocked_for_ms` from the answer.
   */
  | 'IP_GRANT_LEASE'
  | 1
  /**
   * One request may start now; release `slot_id` when it ends (it expires after `ttl_ms` anyway). It
   * starts within `start_slack_ms` (100 unless asked for more) of its ask (of its grant, for an ask
   * held: `held_ms`) or not at all (the authority spaces its grants by --ip-delay-ms and that, and
   * blocks them at a server's push-back): a slot that came later is released unused.
   */
  | 'IP_GRANT_SLOT'
  | 2
  /**
   * Nothing may start now: ask again after `wait_ms` (0: an ask held to the end of its hold, asked
   * again at once).
   */
  | 'IP_GRANT_WAIT'
  | 3
  /**
   * The lease asked to be renewed is over: the sender starts nothing under it any more, releases what
   * it may have started under it, and asks for slots.
   */
  | 'IP_GRANT_REVOKED'
  | 4

/**
 * What an authority grants.
 */
export type IpGrantKind__Output = typeof IpGrantKind[keyof typeof IpGrantKind]
