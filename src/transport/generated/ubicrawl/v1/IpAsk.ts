// Original file: proto/ubicrawl.proto


/**
 * One ask: a slot for one request, or the renewal of the sender's lease.
 */
export interface IpAsk {
  /**
   * The address (IPv4 dotted or IPv6 text, at most 45 characters).
   */
  'ip'?: (string);
  /**
   * True to renew the lease the sender holds on the address (answered IP_GRANT_LEASE or
   * IP_GRANT_REVOKED); false to start one request.
   */
  'renew'?: (boolean);
  /**
   * How long the receiver may hold this ask's answer, ms (0: answered at once; the receiver holds at
   * most 2,000). An ask for a slot at an address that is full (or being handed over) then waits in the
   * address's line, first come first served across agents, and is answered as soon as a slot frees for
   * it, or IP_GRANT_WAIT with `wait_ms` 0 at the end of the hold (ask again); a line that is full, or an
   * agent that stops or is no longer the authority, answers at once as without it. The reply waits for
   * every held ask of the request, so a sender holds an ask only in a request of its own, with the
   * call's deadline lengthened by the hold. An agent that predates this field answers at once.
   */
  'holdMs'?: (number);
  /**
   * How long after the grant the sender may start a slot's request, ms (0: 100): 100 beyond the least
   * of its recent round trips to the receiver, since it can bound the grant only by its ask. The
   * receiver grants 100 to 1,000 (`IpGrant.start_slack_ms`) and spaces the slots it grants by it.
   */
  'startSlackMs'?: (number);
}

/**
 * One ask: a slot for one request, or the renewal of the sender's lease.
 */
export interface IpAsk__Output {
  /**
   * The address (IPv4 dotted or IPv6 text, at most 45 characters).
   */
  'ip': (string);
  /**
   * True to renew the lease the sender holds on the address (answered IP_GRANT_LEASE or
   * IP_GRANT_REVOKED); false to start one request.
   */
  'renew': (boolean);
  /**
   * How long the receiver may hold this ask's answer, ms (0: answered at once; the receiver holds at
   * most 2,000). An ask for a slot at an address that is full (or being handed over) then waits in the
   * address's line, first come first served across agents, and is answered as soon as a slot frees for
   * it, or IP_GRANT_WAIT with `wait_ms` 0 at the end of the hold (ask again); a line that is full, or an
   * agent that stops or is no longer the authority, answers at once as without it. The reply waits for
   * every held ask of the request, so a sender holds an ask only in a request of its own, with the
   * call's deadline lengthened by the hold. An agent that predates this field answers at once.
   */
  'holdMs': (number);
  /**
   * How long after the grant the sender may start a slot's request, ms (0: 100): 100 beyond the least
   * of its recent round trips to the receiver, since it can bound the grant only by its ask. The
   * receiver grants 100 to 1,000 (`IpGrant.start_slack_ms`) and spaces the slots it grants by it.
   */
  'startSlackMs': (number);
}
