import type { Clock, TimerHandle } from "../clock.js";
import type { IpSpacing } from "../frontier/index.js";
import type { IpGrant } from "./ip-grant.js";

/** Leases are looked at (renewed, returned, ended) this often, ms. */
const LEASE_TICK_MS = 500;

/** An address leased to this agent by its authority: requests start there with no message. */
export interface IpLease {
  readonly authority: string;
  /** Its id, which the releases of its slots name (undefined: its authority names none). */
  readonly leaseId: number | undefined;
  /** The lease's end as this agent counts it: from when it asked, so never after the authority's. */
  untilMs: number;
  ttlMs: number;
  /** No start before this: counted from the answer, so never before the authority's. */
  blockedUntilMs: number;
  inFlight: number;
  lastUsedMs: number;
  renewing: boolean;
  ended: boolean;
}

/** What {@link IpLeases} needs. */
export interface IpLeasesDeps {
  readonly clock: Clock;
  /** The authority of `ip` in this agent's current view. */
  readonly authorityOf: (ip: string) => string;
  /** This agent's spacing of its own starts: raised to each lease's IP delay. */
  readonly spacing: Pick<IpSpacing, "raise">;
  /** Asks `authority` to renew the lease on `ip`. */
  readonly renew: (authority: string, ip: string) => Promise<IpGrant>;
  /** Gives `slots` of the ended lease `leaseId` on `ip`, granted by `grantor`, back. */
  readonly release: (ip: string, slots: number, grantor: string, leaseId: number | undefined) => void;
}

/**
 * The addresses leased to an agent (see cluster-ip-gate.ts): each lease is used only until its end
 * counted from the ask, renewed while in use (an agent's leases at one authority together), returned
 * when idle for half its time, and ended when its address's authority changes.
 */
export class IpLeases {
  private readonly leases = new Map<string, IpLease>();
  /** Leases ended with requests still in flight, and their addresses. */
  private readonly draining = new Map<IpLease, string>();
  /**
   * The leases ended, by {@link endedKey}, until their authorities have surely heard so or let them
   * lapse: an answer naming one again (its authority had not heard yet) is not taken.
   */
  private readonly ended = new Map<string, number>();
  private ticker: TimerHandle | undefined;
  /** Set by {@link close}: no lease is renewed any more. */
  private closed = false;

  constructor(
    /** Requests at once to one address: what an ended lease gives back, less those still running. */
    private readonly maxPerIp: number,
    private readonly deps: IpLeasesDeps,
  ) {}

  /** Addresses leased now. */
  get size(): number {
    return this.leases.size;
  }

  /** Until when the lease on `ip` starts nothing (undefined: no lease). */
  blockedUntilMs(ip: string): number | undefined {
    return this.leases.get(ip)?.blockedUntilMs;
  }

  /** The lease on `ip` if it may be used now; a lease past its end or of another authority is ended. */
  usable(ip: string, authority: string): IpLease | undefined {
    const lease = this.leases.get(ip);
    if (!lease) return undefined;
    if (lease.authority === authority && this.deps.clock.now() < lease.untilMs) return lease;
    this.end(ip, lease);
    return undefined;
  }

  /** A request to `ip` starts under `lease`; call the returned function once it ended. */
  started(ip: string, lease: IpLease): () => void {
    lease.inFlight++;
    lease.lastUsedMs = this.deps.clock.now();
    return () => {
      lease.inFlight--;
      if (!lease.ended) return;
      if (lease.inFlight === 0) this.draining.delete(lease);
      this.deps.release(ip, 1, lease.authority, lease.leaseId);
    };
  }

  /**
   * `authority` leased `ip` to this agent (asked at `askedAtMs`): a new lease, or the current one
   * renewed. False when the grant names a lease this agent ended (its return had not reached the
   * authority): not taken, since that return, once there, ends it — ask again later.
   */
  take(ip: string, authority: string, askedAtMs: number, grant: IpGrant & { kind: "lease" }): boolean {
    const now = this.deps.clock.now();
    if (grant.leaseId !== undefined && now < (this.ended.get(endedKey(ip, authority, grant.leaseId)) ?? now))
      return false;
    const previous = this.leases.get(ip);
    const blockedUntilMs = now + grant.blockedForMs;
    this.deps.spacing.raise(ip, grant.delayMs);
    // The same lease again (its holder asked while it held it): renewed. Another id is another lease.
    if (
      previous &&
      previous.authority === authority &&
      previous.leaseId === grant.leaseId &&
      !previous.ended
    ) {
      previous.untilMs = askedAtMs + grant.ttlMs;
      previous.blockedUntilMs = blockedUntilMs;
      return true;
    }
    if (previous) this.end(ip, previous);
    this.leases.set(ip, {
      authority,
      leaseId: grant.leaseId,
      untilMs: askedAtMs + grant.ttlMs,
      ttlMs: grant.ttlMs,
      blockedUntilMs,
      inFlight: 0,
      lastUsedMs: askedAtMs,
      renewing: false,
      ended: false,
    });
    this.startTicker();
    return true;
  }

  /**
   * Ends every lease (this agent leaves): what did not start is given back now, the rest as it ends, so
   * the authorities need not count it until the leases lapse.
   */
  endAll(): void {
    for (const [ip, lease] of this.leases) this.end(ip, lease);
  }

  /**
   * What this agent may still have in flight under its leases, by address: a lease running counts
   * `maxPerIp` (as its authority counts it: what did not start is given back when it ends); one ended
   * the requests it still runs.
   */
  held(): Map<string, number> {
    const held = new Map<string, number>();
    for (const ip of this.leases.keys()) held.set(ip, this.maxPerIp);
    for (const [lease, ip] of this.draining) held.set(ip, (held.get(ip) ?? 0) + lease.inFlight);
    return held;
  }

  /**
   * Ends the leases `authority` granted, found gone, and returns their addresses with the block each
   * carried (the server's push-back as that authority knew it at the last renewal; 0: none): nothing
   * starts under them any more, and what did not start is not given back — this agent's report of the
   * crash says what still runs (their requests, released to the addresses' next authorities as they
   * end). Given back, the unstarted part would be taken off a report that counted the whole lease, and
   * a report that came after it would count it until a slot's life is over.
   */
  endGrantedBy(authority: string): Map<string, number> {
    const ended = new Map<string, number>();
    for (const [ip, lease] of this.leases) {
      if (lease.authority !== authority) continue;
      lease.ended = true;
      this.remember(ip, lease);
      this.leases.delete(ip);
      if (lease.inFlight > 0) this.draining.set(lease, ip);
      ended.set(ip, lease.blockedUntilMs);
    }
    return ended;
  }

  /** Stops renewing leases (they lapse at the authorities). */
  close(): void {
    this.closed = true;
    if (this.ticker) this.deps.clock.clearTimeout(this.ticker);
    this.ticker = undefined;
  }

  /** No request starts under `lease` any more: those that did not start are released now, the others as they end. */
  private end(ip: string, lease: IpLease): void {
    if (lease.ended) return;
    lease.ended = true;
    this.remember(ip, lease);
    if (this.leases.get(ip) === lease) this.leases.delete(ip);
    if (lease.inFlight > 0) this.draining.set(lease, ip);
    this.deps.release(ip, this.maxPerIp - lease.inFlight, lease.authority, lease.leaseId);
  }

  /**
   * `lease` on `ip` ended: not taken again until its authority ended it (at the return sent now) or let
   * it lapse, a lease's time after its end here at the latest (its last renewal came before).
   */
  private remember(ip: string, lease: IpLease): void {
    if (lease.leaseId === undefined) return;
    const untilMs = Math.max(this.deps.clock.now(), lease.untilMs) + lease.ttlMs;
    this.ended.set(endedKey(ip, lease.authority, lease.leaseId), untilMs);
    this.startTicker(); // which forgets it
  }

  private startTicker(): void {
    // Closed, a lease granted to an ask answered late lapses at its authority: no renewal is sent.
    if (this.ticker || this.closed) return;
    this.ticker = this.deps.clock.setTimeout(() => {
      this.ticker = undefined;
      this.tick();
      if (this.leases.size + this.ended.size > 0) this.startTicker();
    }, LEASE_TICK_MS);
  }

  /**
   * Forgets the leases ended long enough ago, ends those idle for half their time (returned) or past
   * their end, and renews those in use once one of the same authority's runs out within half its time:
   * all of them in that message, so an agent's leases at one authority are renewed together.
   */
  private tick(): void {
    const now = this.deps.clock.now();
    for (const [key, untilMs] of this.ended) if (now >= untilMs) this.ended.delete(key);
    const due = new Set<string>();
    for (const [ip, lease] of this.leases) {
      if (lease.renewing || now < lease.untilMs - lease.ttlMs / 2) continue;
      const idle = lease.inFlight === 0 && now - lease.lastUsedMs >= lease.ttlMs / 2;
      if (idle || now >= lease.untilMs || lease.authority !== this.deps.authorityOf(ip)) this.end(ip, lease);
      else due.add(lease.authority);
    }
    for (const [ip, lease] of this.leases) {
      if (lease.renewing || !due.has(lease.authority)) continue;
      lease.renewing = true;
      this.deps.renew(lease.authority, ip).then((grant) => {
        lease.renewing = false;
        if (grant.kind === "lease") {
          this.deps.spacing.raise(ip, grant.delayMs);
          lease.untilMs = now + grant.ttlMs;
          lease.blockedUntilMs = this.deps.clock.now() + grant.blockedForMs;
        } else if (grant.kind === "revoked") this.end(ip, lease);
      });
    }
  }
}

/** The key of lease `leaseId` of `authority` on `ip` among those ended. */
function endedKey(ip: string, authority: string, leaseId: number): string {
  return `${ip} ${authority} ${leaseId}`;
}
