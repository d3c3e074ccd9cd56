import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { IP_BACK_OFF, ServerBackOff } from "./ip-back-off.js";

/** How an {@link IpAuthority} grants. */
export interface IpAuthorityOptions {
  /** Requests at once to one address, cluster-wide (`--max-per-ip`). */
  readonly maxPerIp: number;
  /** How long an exclusive lease lasts unless renewed, ms. */
  readonly leaseTtlMs: number;
  /** How long a granted slot lasts when its release never comes (a fetch's longest time and a margin), ms. */
  readonly slotTtlMs: number;
  /**
   * How late another agent may still grant for an address this agent has just become the authority of,
   * ms: its last leases and slots, and the time its view takes to catch up with this one's.
   */
  readonly graceMs: number;
}

/** An authority's answer to an ask. */
export type IpGrant =
  /** The asker is the address's only user: it applies the limit itself until `ttlMs` from its ask. */
  | { readonly kind: "lease"; readonly ttlMs: number; readonly blockedForMs: number }
  /** One request may start now; release `slotId` when it ends (it expires after `ttlMs` anyway). */
  | { readonly kind: "slot"; readonly slotId: number; readonly ttlMs: number }
  /** Nothing may start now: ask again after `waitMs`. */
  | { readonly kind: "wait"; readonly waitMs: number }
  /** The lease renewed is over: another agent uses the address (or it lapsed). */
  | { readonly kind: "revoked" };

/** What an {@link IpAuthority} needs. */
export interface IpAuthorityDeps {
  readonly clock: Clock;
  /** True while this agent is the authority of `ip` in its view. */
  readonly owns: (ip: string) => boolean;
  /** A number in [0, 1), for the back-off's jitter. */
  readonly random?: () => number;
}

/** How long an agent asking for slots waits at most before asking again, ms. */
export const IP_POLL_MS = 100;

/** How long an asker not the authority in this agent's view waits before asking again, ms. */
const NOT_AUTHORITY_WAIT_MS = 250;

interface Lease {
  readonly holder: string;
  untilMs: number;
}

/** Requests a lease's holder may still have in flight once the lease is over, until released. */
interface LeaseRemainder {
  count: number;
  readonly untilMs: number;
}

interface IpRecord {
  /** No grant before this (a takeover's grace). */
  readonly holdUntilMs: number;
  /** Agents that asked, and when they last did. */
  readonly users: Map<string, number>;
  lease?: Lease;
  readonly remainders: Map<string, LeaseRemainder>;
  readonly slots: Map<number, { readonly agent: string; readonly untilMs: number }>;
  readonly backOff: ServerBackOff;
}

/** A change of the view: until `atMs + graceMs`, fresh addresses this agent did not own then are held. */
interface Takeover {
  readonly atMs: number;
  readonly wasAuthority: (ip: string) => boolean;
}

/**
 * The politeness of the addresses whose key this agent owns on the circle, for the whole cluster. An
 * address one agent uses alone is leased to it: it applies `--max-per-ip` itself, with no message per
 * request. As soon as a second agent asks, the lease is revoked (its holder learns it at its next
 * renewal; until it reports its requests done, they count as `maxPerIp` in flight until the lease's end
 * and a slot's lifetime), and requests are granted one slot at a time, at most `maxPerIp` at once. A
 * server's push-back blocks every grant for the address (see {@link ServerBackOff}). Fail-safe: an
 * authority new to an address grants nothing there before another's grants have run out.
 */
export class IpAuthority {
  private readonly records = new Map<string, IpRecord>();
  private takeovers: Takeover[] = [];
  private nextSlotId = 1;

  constructor(
    readonly options: IpAuthorityOptions,
    private readonly deps: IpAuthorityDeps,
  ) {
    if (!Number.isInteger(options.maxPerIp) || options.maxPerIp < 1) {
      throw new UbiError(ErrorCode.InvalidArgument, `max requests per IP must be a positive integer`);
    }
  }

  /**
   * The view changed (or this agent joined a cluster: `wasAuthority` then says false everywhere):
   * addresses it no longer owns are forgotten, and those it did not own are held for the grace.
   */
  viewChanged(wasAuthority: (ip: string) => boolean): void {
    const now = this.deps.clock.now();
    this.takeovers = this.takeovers.filter((t) => now < t.atMs + this.options.graceMs);
    this.takeovers.push({ atMs: now, wasAuthority });
    for (const ip of this.records.keys()) if (!this.deps.owns(ip)) this.records.delete(ip);
  }

  /**
   * Agent `agent` asks to start one request to `ip` (`renew`: to renew the lease it holds). The
   * caller stops using a lease whose renewal is not answered by a lease.
   */
  ask(agent: string, ip: string, renew: boolean): IpGrant {
    if (!this.deps.owns(ip))
      return renew ? { kind: "revoked" } : { kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS };
    const now = this.deps.clock.now();
    const record = this.record(ip, now);
    record.users.set(agent, now);
    this.expire(record, now);
    const { lease } = record;
    if (lease && lease.holder !== agent) this.endLease(record, lease);
    if (renew) {
      if (record.lease?.holder !== agent) return { kind: "revoked" };
      record.lease.untilMs = now + this.options.leaseTtlMs;
      return this.leaseGrant(record, now);
    }
    if (record.lease) return this.leaseGrant(record, now); // the holder asks again: its lease stands
    const held = Math.max(record.holdUntilMs, record.backOff.blockedUntilMs) - now;
    if (held > 0) return { kind: "wait", waitMs: held };
    const used = this.used(record);
    if (used === 0 && this.aloneIn(record, agent, now)) {
      record.lease = { holder: agent, untilMs: now + this.options.leaseTtlMs };
      return this.leaseGrant(record, now);
    }
    if (used >= this.options.maxPerIp) return { kind: "wait", waitMs: IP_POLL_MS };
    const slotId = this.nextSlotId++;
    record.slots.set(slotId, { agent, untilMs: now + this.options.slotTtlMs });
    return { kind: "slot", slotId, ttlMs: this.options.slotTtlMs };
  }

  /**
   * Agent `agent`'s requests to `ip` ended: those of slots `slotIds`, and `leaseSlots` of those it may
   * have started under its lease (which ends, if it still ran: a holder returns its lease this way).
   */
  release(agent: string, ip: string, slotIds: readonly number[], leaseSlots: number): void {
    const record = this.records.get(ip);
    if (!record) return;
    const now = this.deps.clock.now();
    record.users.set(agent, now);
    for (const id of slotIds) if (record.slots.get(id)?.agent === agent) record.slots.delete(id);
    if (leaseSlots <= 0) return;
    if (record.lease?.holder === agent) this.endLease(record, record.lease);
    const remainder = record.remainders.get(agent);
    if (!remainder) return;
    remainder.count -= leaseSlots;
    if (remainder.count <= 0) record.remainders.delete(agent);
  }

  /**
   * Agent `agent` was refused by `ip`'s server (429, 503) asking to wait `retryAfterMs` (undefined:
   * unsaid): no grant for the address until the back-off ends, which is returned (0: not the authority).
   */
  refused(agent: string, ip: string, retryAfterMs: number | undefined): number {
    if (!this.deps.owns(ip)) return 0;
    const now = this.deps.clock.now();
    const record = this.record(ip, now);
    record.users.set(agent, now);
    return record.backOff.refused(now, retryAfterMs);
  }

  /** Addresses with state here. */
  get size(): number {
    return this.records.size;
  }

  /** Requests `ip` may have in flight by this authority's count (slots, leases' remainders, a lease's limit). */
  inFlight(ip: string): number {
    const record = this.records.get(ip);
    if (!record) return 0;
    this.expire(record, this.deps.clock.now());
    return this.used(record) + (record.lease ? this.options.maxPerIp : 0);
  }

  private record(ip: string, now: number): IpRecord {
    let record = this.records.get(ip);
    if (!record) {
      let holdUntilMs = 0;
      for (const t of this.takeovers) {
        const end = t.atMs + this.options.graceMs;
        if (now < end && !t.wasAuthority(ip)) holdUntilMs = Math.max(holdUntilMs, end);
      }
      record = {
        holdUntilMs,
        users: new Map(),
        remainders: new Map(),
        slots: new Map(),
        backOff: new ServerBackOff(IP_BACK_OFF, this.deps.random ?? Math.random),
      };
      this.records.set(ip, record);
    }
    return record;
  }

  /** A lease over (revoked, returned or lapsed): its holder may have `maxPerIp` requests in flight still. */
  private endLease(record: IpRecord, lease: Lease): void {
    record.lease = undefined;
    record.remainders.set(lease.holder, {
      count: this.options.maxPerIp,
      untilMs: lease.untilMs + this.options.slotTtlMs,
    });
  }

  private leaseGrant(record: IpRecord, now: number): IpGrant {
    return {
      kind: "lease",
      ttlMs: (record.lease as Lease).untilMs - now,
      blockedForMs: Math.max(0, record.backOff.blockedUntilMs - now),
    };
  }

  /** True when no agent but `agent` asked within a lease's time. */
  private aloneIn(record: IpRecord, agent: string, now: number): boolean {
    for (const [user, atMs] of record.users) {
      if (user !== agent && now - atMs < this.options.leaseTtlMs) return false;
    }
    return true;
  }

  private used(record: IpRecord): number {
    let used = record.slots.size;
    for (const remainder of record.remainders.values()) used += remainder.count;
    return used;
  }

  private expire(record: IpRecord, now: number): void {
    if (record.lease && now >= record.lease.untilMs) this.endLease(record, record.lease);
    for (const [id, slot] of record.slots) if (now >= slot.untilMs) record.slots.delete(id);
    for (const [agent, r] of record.remainders) if (now >= r.untilMs) record.remainders.delete(agent);
    for (const [user, atMs] of record.users)
      if (now - atMs >= this.options.leaseTtlMs) record.users.delete(user);
  }
}
