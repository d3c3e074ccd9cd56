import type { IpAuthorityOptions } from "../../src/cluster/ip-authority.js";

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
