import type { IpAuthorityOptions, IpGrant, IpReleased } from "../../src/cluster/ip-authority.js";

/** An authority's options in its unit tests: 2 at once, no IP delay, short lease, slot and grace. */
export const OPTIONS: IpAuthorityOptions = {
  maxPerIp: 2,
  ipDelayMs: 0,
  leaseTtlMs: 5_000,
  slotTtlMs: 10_000,
  graceMs: 20_000,
};

/** The address these tests' authorities keep. */
export const IP = "127.0.0.9";

/** What a holder's release of `slots` of the lease `grant` (a lease its ask was answered) says. */
export function leaseReleased(grant: IpGrant, slots: number): IpReleased {
  if (grant.kind !== "lease") throw new Error(`a ${grant.kind}, not a lease`);
  return {
    slotIds: [],
    leaseSlots: slots,
    ...(grant.leaseId === undefined ? {} : { leaseId: grant.leaseId }),
  };
}
