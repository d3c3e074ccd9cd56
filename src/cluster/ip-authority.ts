import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { IP_BACK_OFF, ServerBackOff } from "./ip-back-off.js";
import { IpWaitQueue } from "./ip-wait-queue.js";

/** Whose requests `--max-per-ip` counts: each agent's own, or the whole cluster's. */
export const IP_LIMITS = ["agent", "cluster"] as const;

/** One of {@link IP_LIMITS}. */
export type IpLimit = (typeof IP_LIMITS)[number];

/** How an {@link IpAuthority} grants. */
export interface IpAuthorityOptions {
  /** Requests at once to one address, cluster-wide (`--max-per-ip`). */
  readonly maxPerIp: number;
  /** The least time between two request starts at one address, cluster-wide (`--ip-delay-ms`), ms. */
  readonly ipDelayMs: number;
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
  | {
      readonly kind: "lease";
      readonly ttlMs: number;
      readonly blockedForMs: number;
      /** The least gap between two starts there: the IP delay, or a longer Crawl-delay of one of its hosts, ms. */
      readonly delayMs: number;
    }
  /**
   * One request may start now; release `slotId` when it ends (it expires after `ttlMs` anyway). `heldMs`:
   * how long the ask was held before the grant (absent: not held).
   */
  | { readonly kind: "slot"; readonly slotId: number; readonly ttlMs: number; readonly heldMs?: number }
  /** Nothing may start now: ask again after `waitMs` (0: an ask held to its end, asked again at once). */
  | { readonly kind: "wait"; readonly waitMs: number }
  /** The lease renewed is over: another agent uses the address (or it lapsed). */
  | { readonly kind: "revoked" };

/** What an address's previous authority granted that may still run, as it hands the address over. */
export interface IpHandOver {
  /** Requests each agent may still have in flight there. */
  readonly held: ReadonlyMap<string, number>;
  /** How long they may still run at most, ms. */
  readonly untilMs: number;
  /** How long the address is still blocked by a server's push-back, ms. */
  readonly blockedForMs: number;
  /** How long the next request there must wait for the IP delay still, ms. */
  readonly spacedForMs: number;
}

/** What an {@link IpAuthority} needs. */
export interface IpAuthorityDeps {
  readonly clock: Clock;
  /** True while this agent is the authority of `ip` in its view. */
  readonly owns: (ip: string) => boolean;
  /** True while agent `id` is alive in this agent's view. */
  readonly isAlive: (id: string) => boolean;
  /**
   * Asks agent `from`, `ip`'s previous authority, to hand it over; resolves with what it answered, or
   * undefined when it could not be asked.
   */
  readonly takeOver: (from: string, ip: string) => Promise<IpHandOver | undefined>;
  /** A number in [0, 1), for the back-off's jitter. */
  readonly random?: () => number;
}

/** How long an exclusive lease lasts unless renewed, ms: a holder renews it every few seconds while it uses it. */
export const IP_LEASE_TTL_MS = 5_000;

/** How long an agent asking for slots waits at most before asking again, ms (when its ask is not held). */
export const IP_POLL_MS = 100;

/**
 * How long an agent asks the authority to hold an ask for a slot at a full address, ms: it is answered
 * as soon as a slot frees for it (see {@link IpAuthority.askHeld}), within the transport's deadline.
 */
export const IP_HOLD_MS = 1_000;

/** How long an authority holds an ask at most, whatever the asker asked, ms. */
export const IP_MAX_HOLD_MS = 2_000;

/** Asks an authority holds at one address at most (agents × `--max-per-ip` waiting there), and in all. */
const MAX_HELD_PER_IP = 64;
const MAX_HELD = 4_096;

/**
 * How long after its ask an agent may still start the request of a slot granted, ms. An authority
 * cannot know when a granted request starts, only that it starts within this of the grant (the asker
 * gives back a slot that came later): it spaces its grants by the IP delay and this.
 */
export const IP_START_SLACK_MS = 100;

/**
 * How long an authority applies a Crawl-delay reported for an address, ms: the agents crawling hosts
 * that ask for one report it again every {@link IP_CRAWL_DELAY_REPORT_MS} while they do.
 */
export const IP_CRAWL_DELAY_MEMORY_MS = 60_000;

/** How often an agent reports again a Crawl-delay of an address it still sends requests to, ms. */
export const IP_CRAWL_DELAY_REPORT_MS = 20_000;

/** Addresses with state at which a sweep first drops those with nothing left to remember. */
const FIRST_SWEEP_AT = 1024;

/** How long an asker not the authority in this agent's view waits before asking again, ms. */
const NOT_AUTHORITY_WAIT_MS = 250;

/** What an ask comes to: a grant, or a wait that a held ask may wait out in the address's line. */
type Decision =
  | IpGrant
  /** At `maxPerIp` (or being handed over): waits for a release. */
  | { readonly kind: "full" }
  /** Free but for the IP delay: a slot may be granted at `atMs`. */
  | { readonly kind: "spaced"; readonly atMs: number };

interface Lease {
  readonly holder: string;
  untilMs: number;
}

/** A slot granted. */
interface Slot {
  readonly agent: string;
  readonly untilMs: number;
  /**
   * Under an IP delay: the latest its request may start (its grant and {@link IP_START_SLACK_MS}), and
   * the latest start that may have happened before it was granted.
   */
  readonly spacing?: { readonly startsByMs: number; readonly before: number };
}

/** Requests a lease's holder may still have in flight once the lease is over, until released. */
interface LeaseRemainder {
  count: number;
  readonly untilMs: number;
  /** Until when its holder may still start requests under the lease (the lease's end, unless known sooner). */
  startsUntilMs: number;
}

interface IpRecord {
  /** No grant before this (a crashed previous authority's grace). */
  holdUntilMs: number;
  /**
   * The latest time a request granted here may have started, by what this authority knows: the IP delay
   * counts from it (-Infinity: none).
   */
  lastStartMs: number;
  /** The longest Crawl-delay reported for a host there, ms (0: none), applied until `crawlDelayUntilMs`. */
  crawlDelayMs: number;
  crawlDelayUntilMs: number;
  /** True while the previous authority is being asked to hand the address over. */
  awaitingHandOver: boolean;
  /** Requests released meanwhile that this authority did not grant, by agent: applied once handed over. */
  readonly untrackedReleases: Map<string, number>;
  /** Agents that asked, and when they last did. */
  readonly users: Map<string, number>;
  lease?: Lease;
  readonly remainders: Map<string, LeaseRemainder>;
  readonly slots: Map<number, Slot>;
  readonly backOff: ServerBackOff;
}

/**
 * A change of the view: until `atMs + graceMs`, a fresh address whose authority was another agent then
 * is handed over by it first, or held for the grace if it is gone.
 */
interface Takeover {
  readonly atMs: number;
  /** The authority of an address before the change (undefined: none known but this agent). */
  readonly previousOf: (ip: string) => string | undefined;
}

/**
 * The politeness of the addresses whose key this agent owns on the circle, for the whole cluster. An
 * address one agent uses alone is leased to it: it applies `--max-per-ip` itself, with no message per
 * request. As soon as a second agent asks, the lease is revoked (its holder learns it at its next
 * renewal; until it reports its requests done, they count as `maxPerIp` in flight until the lease's end
 * and a slot's lifetime), and requests are granted one slot at a time, at most `maxPerIp` at once. A
 * server's push-back blocks every grant for the address (see {@link ServerBackOff}). Fail-safe: an
 * authority new to an address grants nothing there before its previous authority handed it over (what
 * it granted counts until released or expired), or, when that one crashed, before the grace is over.
 * An ask for a slot at a full address may be held ({@link askHeld}) in the address's line (see
 * {@link IpWaitQueue}), first come first served: a release hands the slot to the first waiter at once.
 */
export class IpAuthority {
  private readonly records = new Map<string, IpRecord>();
  private takeovers: Takeover[] = [];
  /** Addresses handed over to another authority: nothing is granted there until then. */
  private readonly handedOff = new Map<string, number>();
  /** The number of addresses with state at which the next sweep runs: twice what the last one kept. */
  private sweepAt = FIRST_SWEEP_AT;
  private nextSlotId = 1;
  private readonly waiters: IpWaitQueue<IpGrant>;

  constructor(
    readonly options: IpAuthorityOptions,
    private readonly deps: IpAuthorityDeps,
  ) {
    if (!Number.isInteger(options.maxPerIp) || options.maxPerIp < 1) {
      throw new UbiError(ErrorCode.InvalidArgument, `max requests per IP must be a positive integer`);
    }
    this.waiters = new IpWaitQueue<IpGrant>(
      { maxPerIp: MAX_HELD_PER_IP, maxTotal: MAX_HELD },
      { clock: deps.clock, wake: (ip) => this.serve(ip), timedOut: () => ({ kind: "wait", waitMs: 0 }) },
    );
  }

  /** Answers every ask held, and holds none from now on (this agent stops). */
  close(): void {
    this.waiters.close({ kind: "wait", waitMs: IP_POLL_MS });
  }

  /** Asks held now, at every address. */
  get held(): number {
    return this.waiters.size;
  }

  /**
   * The view changed: addresses this agent no longer owns are forgotten, and a fresh address it owns now
   * is taken over from `previousOf(ip)`, its authority before, within the grace.
   */
  viewChanged(previousOf: (ip: string) => string | undefined): void {
    const now = this.deps.clock.now();
    this.takeovers = this.takeovers.filter((t) => now < t.atMs + this.options.graceMs);
    this.takeovers.push({ atMs: now, previousOf });
    for (const ip of this.records.keys()) {
      if (this.deps.owns(ip)) continue;
      this.records.delete(ip);
      this.waiters.drop(ip, { kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS });
    }
  }

  /**
   * Agent `id` left or was found dead: its requests ended with it (a killed process's connections close).
   * What it was granted counts one lease's time more — the time an agent suspected wrongly takes to stop
   * starting requests under its lease — and is forgotten then, instead of after a whole fetch's time.
   */
  agentGone(id: string): void {
    const untilMs = this.deps.clock.now() + this.options.leaseTtlMs;
    for (const record of this.records.values()) {
      let held = record.remainders.get(id)?.count ?? 0;
      if (record.lease?.holder === id) {
        held += this.options.maxPerIp;
        record.lease = undefined;
      }
      for (const [slotId, slot] of record.slots) {
        if (slot.agent !== id) continue;
        held++;
        record.slots.delete(slotId);
      }
      if (held > 0) record.remainders.set(id, { count: held, untilMs, startsUntilMs: untilMs });
      record.users.delete(id);
    }
    // Nobody listens for their answers any more.
    this.waiters.dropAgent(id, { kind: "wait", waitMs: IP_POLL_MS });
  }

  /**
   * Another agent, now `ip`'s authority in its view, takes it over: this agent grants nothing there for
   * the grace, and answers what it granted that may still run.
   */
  handOver(ip: string): IpHandOver {
    const now = this.deps.clock.now();
    this.handedOff.set(ip, now + this.options.graceMs);
    const record = this.records.get(ip);
    this.records.delete(ip);
    this.waiters.drop(ip, { kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS });
    if (!record) return { held: new Map(), untilMs: 0, blockedForMs: 0, spacedForMs: 0 };
    this.expire(record, now);
    const held = new Map<string, number>();
    let untilMs = now;
    const add = (agent: string, count: number, endMs: number) => {
      held.set(agent, (held.get(agent) ?? 0) + count);
      untilMs = Math.max(untilMs, endMs);
    };
    for (const slot of record.slots.values()) add(slot.agent, 1, slot.untilMs);
    for (const [agent, r] of record.remainders) add(agent, r.count, r.untilMs);
    if (record.lease)
      add(record.lease.holder, this.options.maxPerIp, record.lease.untilMs + this.options.slotTtlMs);
    return {
      held,
      untilMs: untilMs - now,
      blockedForMs: Math.max(0, record.backOff.blockedUntilMs - now),
      spacedForMs: Math.max(0, this.nextStartAtMs(record, true) - now),
    };
  }

  /**
   * Agent `agent` asks to start one request to `ip` (`renew`: to renew the lease it holds), answered at
   * once. The caller stops using a lease whose renewal is not answered by a lease.
   */
  ask(agent: string, ip: string, renew: boolean): IpGrant {
    return this.toGrant(this.decide(agent, ip, renew, false), this.deps.clock.now());
  }

  /**
   * Agent `agent` asks to start one request to `ip`, and may wait `holdMs` for the answer (at most
   * {@link IP_MAX_HOLD_MS}): when the address is full, or free but for the IP delay within the hold,
   * the ask waits in the address's line (first come first served) and is answered as soon as a release
   * (or the delay) lets a slot be granted to it; at the hold's end it is answered `wait` 0 (ask again).
   * A full line, or an authority stopped, answers at once as {@link ask} does.
   */
  askHeld(agent: string, ip: string, holdMs: number): IpGrant | Promise<IpGrant> {
    const now = this.deps.clock.now();
    const decision = this.decide(agent, ip, false, false);
    const holdFor = Math.min(holdMs, IP_MAX_HOLD_MS);
    const holdable =
      decision.kind === "full" || (decision.kind === "spaced" && decision.atMs - now < holdFor);
    const held = holdable ? this.waiters.wait(ip, agent, holdFor) : undefined;
    if (!held) return this.toGrant(decision, now);
    if (decision.kind === "spaced") this.waiters.wakeAt(ip, decision.atMs);
    return held;
  }

  /**
   * What an ask comes to now (`queued`: the first asker held in the address's line; any other asker
   * comes after those waiting there).
   */
  private decide(agent: string, ip: string, renew: boolean, queued: boolean): Decision {
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
    if (!queued && this.waiters.waiting(ip) > 0) {
      // Those waiting come first: a slot that lapsed meanwhile is theirs.
      this.serve(ip);
      if (this.waiters.waiting(ip) > 0) return { kind: "full" };
    }
    if (record.awaitingHandOver) return { kind: "full" };
    const held = Math.max(record.holdUntilMs, record.backOff.blockedUntilMs) - now;
    if (held > 0) return { kind: "wait", waitMs: held };
    const used = this.used(record);
    if (used === 0 && this.aloneIn(record, agent, now)) {
      record.lease = { holder: agent, untilMs: now + this.options.leaseTtlMs };
      return this.leaseGrant(record, now);
    }
    if (used >= this.options.maxPerIp) return { kind: "full" };
    const spacedMs = this.nextStartAtMs(record, false) - now;
    if (spacedMs > 0) return { kind: "spaced", atMs: now + spacedMs };
    const slotId = this.nextSlotId++;
    const slot: Slot = { agent, untilMs: now + this.options.slotTtlMs };
    if (this.delayOf(record, now) > 0) {
      const startsByMs = now + IP_START_SLACK_MS;
      record.slots.set(slotId, { ...slot, spacing: { startsByMs, before: record.lastStartMs } });
      record.lastStartMs = startsByMs;
    } else record.slots.set(slotId, slot);
    return { kind: "slot", slotId, ttlMs: this.options.slotTtlMs };
  }

  /** The answer to an ask not held: a wait for what a held ask would wait for in the line. */
  private toGrant(decision: Decision, now: number): IpGrant {
    if (decision.kind === "full") return { kind: "wait", waitMs: IP_POLL_MS };
    if (decision.kind === "spaced") return { kind: "wait", waitMs: decision.atMs - now };
    return decision;
  }

  /**
   * Answers the asks held at `ip` in order while each can be answered: a slot (or a lease) granted, or
   * a wait that outlasts the ask's hold; the first stays first while the address is full, or until the
   * IP delay lets a slot be granted (its line wakes then).
   */
  private serve(ip: string): void {
    this.waiters.serve(ip, (agent, waitedMs, leftMs) => {
      const decision = this.decide(agent, ip, false, true);
      if (decision.kind === "full") return undefined;
      const now = this.deps.clock.now();
      if (decision.kind === "spaced" && decision.atMs - now < leftMs) return { notBeforeMs: decision.atMs };
      if (decision.kind === "slot") return { answer: { ...decision, heldMs: waitedMs } };
      return { answer: this.toGrant(decision, now) };
    });
  }

  /**
   * Agent `agent`'s requests to `ip` ended: those of slots `slotIds`, and `leaseSlots` of those it may
   * have started under its lease (which ends, if it still ran: a holder returns its lease this way).
   */
  release(agent: string, ip: string, slotIds: readonly number[], leaseSlots: number): void {
    const now = this.deps.clock.now();
    if (!this.deps.owns(ip) || this.isHandedOff(ip, now)) return;
    this.count(agent, ip, slotIds, leaseSlots, now);
    // What was freed goes to the first waiting there, at once.
    this.serve(ip);
  }

  private count(
    agent: string,
    ip: string,
    slotIds: readonly number[],
    leaseSlots: number,
    now: number,
  ): void {
    const record = this.record(ip, now);
    record.users.set(agent, now);
    // A slot this authority does not know was granted by the address's previous one (handed over).
    let untracked = leaseSlots;
    for (const id of slotIds) {
      const slot = record.slots.get(id);
      if (slot?.agent !== agent) {
        untracked++;
        continue;
      }
      record.slots.delete(id);
      // Its request started before its release came: the latest start it set is known sooner.
      if (slot.spacing && record.lastStartMs === slot.spacing.startsByMs)
        record.lastStartMs = Math.max(slot.spacing.before, Math.min(now, slot.spacing.startsByMs));
    }
    const ownLease = record.lease?.holder === agent;
    if (leaseSlots > 0 && ownLease) this.endLease(record, record.lease as Lease);
    // Its lease was ended before this was sent (revoked, or returned whole: nothing of it ran), so nothing
    // starts under it any more; a part released while it holds one may be of an older lease of its.
    const remainder = record.remainders.get(agent);
    if (remainder && leaseSlots > 0 && (!ownLease || leaseSlots >= this.options.maxPerIp))
      remainder.startsUntilMs = Math.min(remainder.startsUntilMs, now);
    if (untracked === 0) return;
    if (record.awaitingHandOver) {
      record.untrackedReleases.set(agent, (record.untrackedReleases.get(agent) ?? 0) + untracked);
      return;
    }
    if (!remainder) return;
    remainder.count -= untracked;
    if (remainder.count <= 0) this.dropRemainder(record, agent, remainder);
  }

  /**
   * Agent `agent` was refused by `ip`'s server (429, 503) asking to wait `retryAfterMs` (undefined:
   * unsaid): no grant for the address until the back-off ends, which is returned (0: not the authority).
   */
  refused(agent: string, ip: string, retryAfterMs: number | undefined): number {
    const now = this.deps.clock.now();
    if (!this.deps.owns(ip) || this.isHandedOff(ip, now)) return 0;
    const record = this.record(ip, now);
    record.users.set(agent, now);
    const blockedMs = record.backOff.refused(now, retryAfterMs);
    this.serve(ip); // those waiting there hear of the block now
    return blockedMs;
  }

  /**
   * A host at `ip` asks for a robots.txt Crawl-delay of `delayMs`, reported by agent `agent`: every
   * agent's requests there are spaced by it (the longest reported), for {@link IP_CRAWL_DELAY_MEMORY_MS}.
   */
  crawlDelay(agent: string, ip: string, delayMs: number): void {
    const now = this.deps.clock.now();
    if (!this.deps.owns(ip) || this.isHandedOff(ip, now)) return;
    const record = this.record(ip, now);
    record.users.set(agent, now);
    if (now >= record.crawlDelayUntilMs) record.crawlDelayMs = 0;
    record.crawlDelayMs = Math.max(record.crawlDelayMs, delayMs);
    record.crawlDelayUntilMs = now + IP_CRAWL_DELAY_MEMORY_MS;
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
    const existing = this.records.get(ip);
    if (existing) return existing;
    const record: IpRecord = {
      holdUntilMs: 0,
      lastStartMs: Number.NEGATIVE_INFINITY,
      crawlDelayMs: 0,
      crawlDelayUntilMs: 0,
      awaitingHandOver: false,
      untrackedReleases: new Map(),
      users: new Map(),
      remainders: new Map(),
      slots: new Map(),
      backOff: new ServerBackOff(IP_BACK_OFF, this.deps.random ?? Math.random),
    };
    if (this.records.size >= this.sweepAt) this.sweep(now);
    this.records.set(ip, record);
    let from: string | undefined;
    for (const t of this.takeovers) {
      const end = t.atMs + this.options.graceMs;
      const previous = end > now ? t.previousOf(ip) : undefined;
      if (previous === undefined) continue;
      if (this.deps.isAlive(previous)) from = previous;
      else {
        // A crashed authority cannot answer: what it granted may start until the grace ends.
        record.holdUntilMs = Math.max(record.holdUntilMs, end);
        record.lastStartMs = Math.max(record.lastStartMs, end);
      }
    }
    if (from !== undefined) this.askHandOver(ip, record, from);
    return record;
  }

  private askHandOver(ip: string, record: IpRecord, from: string): void {
    record.awaitingHandOver = true;
    const done = (handOver: IpHandOver | undefined) => {
      record.awaitingHandOver = false;
      const now = this.deps.clock.now();
      if (!handOver) {
        // Unanswered: what it granted may run, and start, for a grace yet.
        record.holdUntilMs = Math.max(record.holdUntilMs, now + this.options.graceMs);
        record.lastStartMs = Math.max(record.lastStartMs, now + this.options.graceMs);
        return;
      }
      // Its spacing counted from its answer, which came before now; its leases' starts until they end.
      const startsUntilMs = now + handOver.untilMs;
      record.lastStartMs = Math.max(record.lastStartMs, now + handOver.spacedForMs - this.options.ipDelayMs);
      for (const [agent, held] of handOver.held) {
        const count = held - (record.untrackedReleases.get(agent) ?? 0);
        if (count > 0)
          record.remainders.set(agent, { count, untilMs: now + handOver.untilMs, startsUntilMs });
      }
      record.untrackedReleases.clear();
      if (handOver.blockedForMs > 0) record.backOff.refused(now, handOver.blockedForMs);
      if (this.records.get(ip) === record) this.serve(ip);
    };
    this.deps.takeOver(from, ip).then(done, () => done(undefined));
  }

  /** Drops the addresses with nothing left to remember, so memory follows the addresses in use. */
  private sweep(now: number): void {
    for (const [ip, record] of this.records) {
      this.expire(record, now);
      const idle =
        !record.lease &&
        !record.awaitingHandOver &&
        this.waiters.waiting(ip) === 0 &&
        record.slots.size + record.remainders.size + record.users.size === 0 &&
        now >= record.holdUntilMs &&
        now >= record.crawlDelayUntilMs &&
        record.backOff.forgettable(now);
      if (idle) this.records.delete(ip);
    }
    for (const [ip, untilMs] of this.handedOff) if (now >= untilMs) this.handedOff.delete(ip);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.records.size);
  }

  private isHandedOff(ip: string, now: number): boolean {
    const untilMs = this.handedOff.get(ip);
    if (untilMs === undefined) return false;
    if (now < untilMs) return true;
    this.handedOff.delete(ip);
    return false;
  }

  /** A lease over (revoked, returned or lapsed): its holder may have `maxPerIp` requests in flight still. */
  private endLease(record: IpRecord, lease: Lease): void {
    record.lease = undefined;
    record.remainders.set(lease.holder, {
      count: this.options.maxPerIp,
      untilMs: lease.untilMs + this.options.slotTtlMs,
      startsUntilMs: lease.untilMs,
    });
  }

  /** A remainder released or expired: the starts it may have made still space the next ones. */
  private dropRemainder(record: IpRecord, agent: string, remainder: LeaseRemainder): void {
    record.lastStartMs = Math.max(record.lastStartMs, remainder.startsUntilMs);
    record.remainders.delete(agent);
  }

  /**
   * When the next request may start at the address for the IP delay: that long after the latest start
   * that may have happened (`withLease`: the running lease's starts too, which run until its end).
   */
  private nextStartAtMs(record: IpRecord, withLease: boolean): number {
    const delayMs = this.delayOf(record, this.deps.clock.now());
    if (delayMs === 0) return 0;
    let latest = record.lastStartMs;
    for (const remainder of record.remainders.values()) latest = Math.max(latest, remainder.startsUntilMs);
    if (withLease && record.lease) latest = Math.max(latest, record.lease.untilMs);
    return latest + delayMs;
  }

  /** The least gap between two starts at the address: the IP delay, or a longer Crawl-delay reported there. */
  private delayOf(record: IpRecord, now: number): number {
    return Math.max(this.options.ipDelayMs, now < record.crawlDelayUntilMs ? record.crawlDelayMs : 0);
  }

  /** A lease's grant: it starts nothing while the address is blocked, nor before the IP delay since others' starts. */
  private leaseGrant(record: IpRecord, now: number): IpGrant {
    const startAtMs = Math.max(record.backOff.blockedUntilMs, this.nextStartAtMs(record, false));
    return {
      kind: "lease",
      ttlMs: (record.lease as Lease).untilMs - now,
      blockedForMs: Math.max(0, startAtMs - now),
      delayMs: this.delayOf(record, now),
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
    for (const [agent, r] of record.remainders) if (now >= r.untilMs) this.dropRemainder(record, agent, r);
    for (const [user, atMs] of record.users)
      if (now - atMs >= this.options.leaseTtlMs) record.users.delete(user);
  }
}
