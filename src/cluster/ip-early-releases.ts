/** Releases this many addresses at most are kept for before this agent is their authority. */
const MAX_EARLY_ADDRESSES = 4_096;

/** Releases kept at one address at most. */
const MAX_RELEASES_AN_ADDRESS = 256;

/** A release kept: `count` requests of `agent`'s ended, as this agent heard at `atMs`. */
export interface EarlyRelease {
  readonly agent: string;
  readonly count: number;
  readonly atMs: number;
}

/**
 * Releases that reached this agent before it was an address's authority, from agents that reported a
 * crash lately: they found the crashed authority gone first, reported what they hold at its addresses
 * (ip-crash-reports.ts), then gave back what ended to the authority their views named, this one. Kept
 * for the grace from the address's first, with when each came, they are taken off the reports once
 * this agent takes the address over from the crashed one — each only if it came after the report it
 * would be taken off, of requests that report counts. (Such a release is also sent on towards the
 * address's account, `IpAuthority.release`; a live authority's count, not the reports, then holds it.)
 */
export class IpEarlyReleases {
  private readonly byIp = new Map<string, { readonly atMs: number; readonly releases: EarlyRelease[] }>();

  /** @param graceMs how long the releases of an address are kept from its first. */
  constructor(private readonly graceMs: number) {}

  /** Agent `agent`, which reported a crash lately, released `count` requests at `ip` at `now`. */
  add(agent: string, ip: string, count: number, now: number): void {
    if (count <= 0) return;
    let entry = this.byIp.get(ip);
    if (!entry || now >= entry.atMs + this.graceMs) {
      if (!entry && this.byIp.size >= MAX_EARLY_ADDRESSES) this.sweep(now);
      // Full of recent ones: not kept (over-counted until they expire: slower, never faster).
      if (!entry && this.byIp.size >= MAX_EARLY_ADDRESSES) return;
      entry = { atMs: now, releases: [] };
      this.byIp.set(ip, entry);
    }
    // A hostile or broken peer's flood is capped: over it, released requests are over-counted.
    if (entry.releases.length < MAX_RELEASES_AN_ADDRESS) entry.releases.push({ agent, count, atMs: now });
  }

  /** The releases kept for `ip` within the grace, forgotten here. */
  take(ip: string, now: number): readonly EarlyRelease[] {
    const entry = this.byIp.get(ip);
    this.byIp.delete(ip);
    return entry && now < entry.atMs + this.graceMs ? entry.releases : [];
  }

  /** Forgets the releases older than the grace. */
  sweep(now: number): void {
    for (const [ip, { atMs }] of this.byIp) if (now >= atMs + this.graceMs) this.byIp.delete(ip);
  }
}
