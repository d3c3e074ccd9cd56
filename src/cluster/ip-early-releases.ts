/** Releases this many addresses at most are kept for before this agent is their authority. */
const MAX_EARLY_ADDRESSES = 4_096;

/**
 * Releases that reached this agent before it was an address's authority after a crash: their senders
 * found the crashed authority gone first, reported what they hold at its addresses (ip-crash-reports.ts),
 * then gave back what ended to the authority their views named, this one. Kept for the grace from the
 * address's first, they are taken off the reports once this agent takes the address over from the
 * crashed one. Only those sent after their sender's report are kept: the reports do not count requests
 * that ended before them. (A release that reaches an agent before its view changes otherwise is sent on
 * to the address's account, where its slot or lease ends exactly: see `IpAuthority.release`.)
 */
export class IpEarlyReleases {
  private readonly byIp = new Map<string, { readonly atMs: number; readonly byAgent: Map<string, number> }>();

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
      entry = { atMs: now, byAgent: new Map() };
      this.byIp.set(ip, entry);
    }
    entry.byAgent.set(agent, (entry.byAgent.get(agent) ?? 0) + count);
  }

  /** The releases kept for `ip` within the grace, by agent, forgotten here. */
  take(ip: string, now: number): ReadonlyMap<string, number> {
    const entry = this.byIp.get(ip);
    this.byIp.delete(ip);
    return entry && now < entry.atMs + this.graceMs ? entry.byAgent : new Map();
  }

  /** Forgets the releases older than the grace. */
  sweep(now: number): void {
    for (const [ip, { atMs }] of this.byIp) if (now >= atMs + this.graceMs) this.byIp.delete(ip);
  }
}
