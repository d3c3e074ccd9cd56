// Original file: proto/ubicrawl.proto

import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';
import type { HostClaim as _ubicrawl_v1_HostClaim, HostClaim__Output as _ubicrawl_v1_HostClaim__Output } from '../../ubicrawl/v1/HostClaim.js';

/**
 * ClaimHosts: the claimant asks for hosts it owns now.
 */
export interface ClaimRequest {
  /**
   * The claimant itself (status ALIVE).
   */
  'claimant'?: (_ubicrawl_v1_Member | null);
  /**
   * At most 1,000 hosts.
   */
  'hosts'?: (_ubicrawl_v1_HostClaim)[];
}

/**
 * ClaimHosts: the claimant asks for hosts it owns now.
 */
export interface ClaimRequest__Output {
  /**
   * The claimant itself (status ALIVE).
   */
  'claimant': (_ubicrawl_v1_Member__Output | null);
  /**
   * At most 1,000 hosts.
   */
  'hosts': (_ubicrawl_v1_HostClaim__Output)[];
}
