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
}
