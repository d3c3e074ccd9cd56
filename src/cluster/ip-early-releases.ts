/** Releases this many addresses at most are kept for before this agent is their authority. */
const MAX_EARLY_ADDRESSES = 4_096;

/** An agent's releases kept at one address: all of them, and those sent after it reported a crash. */
interface Released {
  all: number;
  afterReport: number;
}

/** The releases kept for one address, by agent (see {@link IpEarlyReleases.take}). */
export interface EarlyReleases {
  /** Every release: of requests that a live or leaving previous authority's hand-over counts. */
  readonly all: ReadonlyMap<string, number>;
  /** Those sent after their sender reported a crash: of requests its report counts (ip-crash-reports.ts). */
  readonly afterReport: ReadonlyMap<string, number>;
}

/**
 * Releases that reached this agent before it was an address's authority: their senders' views changed
 * first, so they went to the authority they knew of. Kept for the grace, they are taken off what the
 * address is taken over with. A previous authority never saw them, so its hand-over (or a leaver's)
 * still counts their requests: all of them are taken off. After a crash, the others' reports count only
 * the requests still running as they reported: only a release sent after its sender's report is.
 * Without them, an agent whose lease ended with its authority's change would wait, at the new
 * authority, for its own requests to expire (a lease and a fetch's time).
 */
export class IpEarlyReleases {
  private readonly byIp = new Map<
    string,
    { readonly atMs: number; readonly byAgent: Map<string, Released> }
  >();

  /** @param graceMs how long a release is kept: a take-over comes within the grace of a view's change. */
  constructor(private readonly graceMs: number) {}

  /** Agent `agent` released `count` requests at `ip` at `now` (`afterReport`: after it reported a crash). */
  add(agent: string, ip: string, count: number, afterReport: boolean, now: number): void {
    if (count <= 0) return;
    let entry = this.byIp.get(ip);
    if (!entry || now >= entry.atMs + this.graceMs) {
      if (!entry && this.byIp.size >= MAX_EARLY_ADDRESSES) this.sweep(now);
      // Full of recent ones: not kept (over-counted until they expire: slower, never faster).
      if (!entry && this.byIp.size >= MAX_EARLY_ADDRESSES) return;
      entry = { atMs: now, byAgent: new Map() };
      this.byIp.set(ip, entry);
    }
    const released = entry.byAgent.get(agent) ?? { all: 0, afterReport: 0 };
    released.all += count;
    if (afterReport) released.afterReport += count;
    entry.byAgent.set(agent, released);
  }

  /** The releases kept for `ip` within the grace, forgotten here. */
  take(ip: string, now: number): EarlyReleases {
    const entry = this.byIp.get(ip);
    this.byIp.delete(ip);
    const all = new Map<string, number>();
    const afterReport = new Map<string, number>();
    if (entry && now < entry.atMs + this.graceMs) {
      for (const [agent, released] of entry.byAgent) {
        all.set(agent, released.all);
        if (released.afterReport > 0) afterReport.set(agent, released.afterReport);
      }
    }
    return { all, afterReport };
  }

  /** Forgets the releases older than the grace. */
  sweep(now: number): void {
    for (const [ip, { atMs }] of this.byIp) if (now >= atMs + this.graceMs) this.byIp.delete(ip);
  }
}
