// Over 400 lines on purpose: one address's account at its authority — the lease, the slots, what ended
// leases and crashed agents may still have in flight, hand-overs both ways, the IP delay's spacing and
// the server's back-off — whose one invariant (never more than --max-per-ip counted in flight, no start
// closer than the IP delay) holds only if every change to them is made here, in order; the spacing and
// the back-off, which have state of their own, are classes of their own files.
import { IP_BACK_OFF, ServerBackOff } from "./ip-back-off.js";
import {
  IP_CRAWL_DELAY_MEMORY_MS,
  IP_START_SLACK_MS,
  type IpAuthorityOptions,
  type IpGrant,
  type IpHandOver,
  type IpReleased,
} from "./ip-grant.js";
import { IpStartSpacing, type SlotSpacing } from "./ip-start-spacing.js";

/** What an ask comes to at a {@link IpLedger}: a grant, or a wait that a held ask may wait out in the address's line. */
export type IpDecision =
  | IpGrant
  /** At `maxPerIp` (or being handed over): waits for a release. */
  | { readonly kind: "full" }
  /** Free but for the IP delay: a slot may be granted at `atMs`. */
  | { readonly kind: "spaced"; readonly atMs: number };

interface Lease {
  readonly holder: string;
  /** Its id, which its holder's releases of it name. */
  readonly id: number;
  untilMs: number;
}

/** A slot granted. */
interface Slot {
  readonly agent: string;
  readonly untilMs: number;
  /** Under an IP delay: what its grant set in the address's spacing. */
  readonly spacing?: SlotSpacing;
}

/**
 * Requests an agent may still have in flight there that no slot id names, until released: those of a
 * lease of this authority's once it is over (by the lease's id), or, with no id, what other authorities
 * handed over or a crash left, counted by agent.
 */
interface LeaseRemainder {
  readonly agent: string;
  /** The lease of this authority's it is what is left of (undefined: counted by agent). */
  readonly leaseId?: number;
  count: number;
  readonly untilMs: number;
  /** Until when its holder may still start requests under the lease (the lease's end, unless known sooner). */
  startsUntilMs: number;
}

/**
 * One address's account at its authority: who may have requests in flight there (the lease, the slots
 * granted, what ended leases may still run), who asked lately, when the next request may start
 * ({@link IpStartSpacing}) and the server's push-back ({@link ServerBackOff}). It decides an ask on its
 * own state; the address's line of held asks, the view and the hand-over messages are its authority's.
 */
export class IpLedger {
  /** No grant before this (a crashed previous authority's grace). */
  private holdUntilMs = 0;
  /**
   * Hand-overs awaited: a previous authority asked to hand the address over, or the other agents asked
   * what they hold there of a crashed one's grants.
   */
  private awaitedHandOvers = 0;
  /** Requests released meanwhile that this authority did not grant, by agent: applied once handed over. */
  private readonly untrackedReleases = new Map<string, number>();
  /** Agents that asked, and when they last did. */
  private readonly users = new Map<string, number>();
  private lease?: Lease;
  /** By {@link remainderKey}. */
  private readonly remainders = new Map<string, LeaseRemainder>();
  /**
   * Leases of this authority's whose remainders stopped counting before all their releases came
   * (expired, or forgotten at a restart), until when a late release of theirs is still known for one,
   * by {@link remainderKey}: it is not taken off what the agent holds otherwise.
   */
  private readonly retired = new Map<string, number>();
  private readonly slots = new Map<number, Slot>();
  private readonly backOff: ServerBackOff;
  private readonly spacing: IpStartSpacing;

  /**
   * @param newSlotId the id of the next slot or lease granted (unique across the authority's addresses
   *   and lives).
   * @param random a number in [0, 1), for the back-off's jitter.
   */
  constructor(
    private readonly options: IpAuthorityOptions,
    private readonly newSlotId: () => number,
    random: () => number,
  ) {
    this.backOff = new ServerBackOff(IP_BACK_OFF, random);
    this.spacing = new IpStartSpacing(options.ipDelayMs, IP_CRAWL_DELAY_MEMORY_MS);
  }

  /** A crashed previous authority's grants may run, and start, until `untilMs`: nothing is granted before. */
  holdUntil(untilMs: number): void {
    this.holdUntilMs = Math.max(this.holdUntilMs, untilMs);
    this.spacing.startedBy(untilMs);
  }

  /**
   * A previous authority is asked to hand the address over (or, crashed, the other agents what they
   * hold there): nothing is granted until each hand-over awaited came ({@link handedOver}).
   */
  awaitHandOver(): void {
    this.awaitedHandOvers++;
  }

  /** True while a hand-over is awaited. */
  get awaiting(): boolean {
    return this.awaitedHandOvers > 0;
  }

  /**
   * Agent `agent` released `count` requests that this authority did not grant: its previous authorities
   * did (some reached it before it was the address's authority, their senders' views changing first).
   * Taken off what was handed over, now or once the hand-over awaited comes.
   */
  releasedUngranted(agent: string, count: number): void {
    if (count <= 0) return;
    if (this.awaiting) {
      this.untrackedReleases.set(agent, (this.untrackedReleases.get(agent) ?? 0) + count);
      return;
    }
    this.takeOff(agent, count);
  }

  /**
   * The releases awaiting the hand-over are not taken off it (it comes another way, which may not count
   * their requests): over-counted until they expire, slower, never faster.
   */
  forgetReleasesBefore(): void {
    this.untrackedReleases.clear();
  }

  /**
   * A hand-over awaited came: `handOver` (undefined: its previous authority could not be asked) at
   * `now`. Counts add up, hand-over after hand-over.
   */
  handedOver(handOver: IpHandOver | undefined, now: number): void {
    this.awaitedHandOvers = Math.max(0, this.awaitedHandOvers - 1);
    if (!handOver) {
      // Unanswered: what it granted may run, and start, for a grace yet.
      this.holdUntil(now + this.options.graceMs);
      return;
    }
    // Its spacing counted from its answer, which came before now; its leases' starts until they end
    // (until a holder gives its lease back), or, unsaid, while its requests may run.
    for (const [agent, held] of handOver.held) {
      const count = held - (this.untrackedReleases.get(agent) ?? 0);
      this.untrackedReleases.delete(agent);
      this.addRemainder(agent, count, handOver, now);
    }
    this.takeInWaits(handOver, now);
    // The other releases meanwhile were of requests counted already (what a leaver handed over).
    for (const [agent, released] of this.untrackedReleases) this.takeOff(agent, released);
    this.untrackedReleases.clear();
  }

  /**
   * What an agent that left handed over at `now`, added to what this ledger counts (another previous
   * authority may still be asked: its answer comes on top).
   */
  tookOverFromLeaver(handOver: IpHandOver, now: number): void {
    for (const [agent, held] of handOver.held) this.addRemainder(agent, held, handOver, now);
    this.takeInWaits(handOver, now);
  }

  /** `count` requests of `agent` from `handOver` counted until its end, on top of any counted already. */
  private addRemainder(agent: string, count: number, handOver: IpHandOver, now: number): void {
    if (count <= 0) return;
    const untilMs = now + handOver.untilMs;
    const startsUntilMs = now + (handOver.startsFor?.get(agent) ?? handOver.untilMs);
    const key = remainderKey(agent);
    const existing = this.remainders.get(key);
    this.remainders.set(
      key,
      existing
        ? {
            agent,
            count: existing.count + count,
            untilMs: Math.max(existing.untilMs, untilMs),
            startsUntilMs: Math.max(existing.startsUntilMs, startsUntilMs),
          }
        : { agent, count, untilMs, startsUntilMs },
    );
  }

  /** `handOver`'s spacing, block and hold, counted from `now` (its answer came before). */
  private takeInWaits(handOver: IpHandOver, now: number): void {
    this.spacing.startedBy(now + handOver.spacedForMs - this.options.ipDelayMs);
    if (handOver.blockedForMs > 0) this.backOff.refused(now, handOver.blockedForMs);
    if ((handOver.holdForMs ?? 0) > 0) this.holdUntil(now + (handOver.holdForMs ?? 0));
  }

  /** What this authority granted that may still run, as it hands the address over to another. */
  handOver(now: number): IpHandOver {
    this.expire(now);
    const held = new Map<string, number>();
    const startsFor = new Map<string, number>();
    let untilMs = now;
    const add = (agent: string, count: number, endMs: number, startsUntilMs: number) => {
      held.set(agent, (held.get(agent) ?? 0) + count);
      untilMs = Math.max(untilMs, endMs);
      startsFor.set(agent, Math.max(startsFor.get(agent) ?? 0, startsUntilMs - now));
    };
    // A slot's start is in the spacing; a lease's (or its remainder's) may come until its end.
    for (const slot of this.slots.values()) add(slot.agent, 1, slot.untilMs, now);
    for (const r of this.remainders.values()) add(r.agent, r.count, r.untilMs, r.startsUntilMs);
    if (this.lease) {
      const { holder, untilMs: leaseEndMs } = this.lease;
      add(holder, this.options.maxPerIp, leaseEndMs + this.options.slotTtlMs, leaseEndMs);
    }
    return {
      held,
      untilMs: untilMs - now,
      startsFor,
      blockedForMs: Math.max(0, this.backOff.blockedUntilMs - now),
      // The starts this authority granted; those the agents may make are in `startsFor`.
      spacedForMs: Math.max(0, this.spacing.nextStartAtMs(now) - now),
      // Not all known here: still waiting for the previous authority's answer, or a crashed one's grace.
      holdForMs: this.awaiting ? this.options.graceMs : Math.max(0, this.holdUntilMs - now),
    };
  }

  /** Agent `id` is gone: what it was granted counts as in flight until `untilMs`, then is forgotten. */
  agentGone(id: string, untilMs: number): void {
    let held = 0;
    for (const [key, remainder] of this.remainders) {
      if (remainder.agent !== id) continue;
      held += remainder.count;
      this.remainders.delete(key);
    }
    if (this.lease?.holder === id) {
      held += this.options.maxPerIp;
      this.lease = undefined;
    }
    for (const [slotId, slot] of this.slots) {
      if (slot.agent !== id) continue;
      held++;
      this.slots.delete(slotId);
    }
    // Counted by agent: should it be back (wrongly taken for dead), its releases are taken off this.
    if (held > 0)
      this.remainders.set(remainderKey(id), { agent: id, count: held, untilMs, startsUntilMs: untilMs });
    this.users.delete(id);
  }

  /**
   * The lease part of agent `agent`'s ask (`renew`: to renew the lease it holds): another's lease is
   * revoked; a renewal or the holder's ask is answered here; undefined: no lease decides it, see {@link decide}.
   */
  answerLease(agent: string, renew: boolean, now: number): IpGrant | undefined {
    this.users.set(agent, now);
    this.expire(now);
    const { lease } = this;
    if (lease && lease.holder !== agent) this.endLease(lease);
    if (renew) {
      if (this.lease?.holder !== agent) return { kind: "revoked" };
      this.lease.untilMs = now + this.options.leaseTtlMs;
      return this.leaseGrant(now);
    }
    if (this.lease) return this.leaseGrant(now); // the holder asks again: its lease stands
    return undefined;
  }

  /**
   * What agent `agent`'s ask for one request comes to now, once {@link answerLease} left it undecided:
   * a lease when it is alone there, else a slot while fewer than `maxPerIp` are out and the delay allows,
   * its request to start within `startSlackMs` of now (see `grantedStartSlack`).
   */
  decide(agent: string, now: number, startSlackMs = IP_START_SLACK_MS): IpDecision {
    if (this.awaiting) return { kind: "full" };
    const held = Math.max(this.holdUntilMs, this.backOff.blockedUntilMs) - now;
    if (held > 0) return { kind: "wait", waitMs: held };
    const used = this.used();
    if (used === 0 && this.aloneIn(agent, now)) {
      this.lease = { holder: agent, id: this.newSlotId(), untilMs: now + this.options.leaseTtlMs };
      return this.leaseGrant(now);
    }
    if (used >= this.options.maxPerIp) return { kind: "full" };
    const spacedMs = this.nextStartAtMs(now, false) - now;
    if (spacedMs > 0) return { kind: "spaced", atMs: now + spacedMs };
    const slotId = this.newSlotId();
    const spacing = this.spacing.slotGranted(now, startSlackMs);
    const untilMs = now + this.options.slotTtlMs;
    this.slots.set(slotId, spacing ? { agent, untilMs, spacing } : { agent, untilMs });
    return startSlackMs === IP_START_SLACK_MS
      ? { kind: "slot", slotId, ttlMs: this.options.slotTtlMs }
      : { kind: "slot", slotId, ttlMs: this.options.slotTtlMs, startSlackMs };
  }

  /**
   * Agent `agent`'s requests there ended: those of the slots `released` names, and `leaseSlots` of
   * those it may have started under the lease `leaseId` (which its holder ended: it starts nothing under
   * it any more). A lease of this authority's is known by its id: ended if it still ran, its remainder
   * taken off; a late release of one no longer counted counts for nothing. Another authority's (counted
   * here by agent since its hand-over or a crash) is taken off what the agent holds by count; it never
   * ends a lease this authority granted, which its holder may use. One that names no lease counts for
   * nothing.
   */
  release(agent: string, released: IpReleased, now: number): void {
    this.users.set(agent, now);
    // A slot this authority does not know was granted by the address's previous one (handed over).
    let untracked = 0;
    for (const id of released.slotIds) {
      const slot = this.slots.get(id);
      if (slot?.agent !== agent) {
        untracked++;
        continue;
      }
      this.slots.delete(id);
      // Its request started before its release came: the latest start it set is known sooner.
      if (slot.spacing) this.spacing.slotReleased(slot.spacing, now);
    }
    const { leaseSlots, leaseId } = released;
    // A lease part that names no lease (an agent that predates lease ids) may be of any: it ends
    // nothing, and what it counts ends as it expires (slower, never faster).
    if (leaseSlots > 0 && leaseId !== undefined && !this.releasedLease(agent, leaseId, leaseSlots, now)) {
      untracked += leaseSlots;
      // Another authority's lease, ended: what is counted by agent starts nothing more under it.
      const byAgent = this.remainders.get(remainderKey(agent));
      if (byAgent) byAgent.startsUntilMs = Math.min(byAgent.startsUntilMs, now);
    }
    this.releasedUngranted(agent, untracked);
  }

  /**
   * `count` requests of agent `agent`'s lease `leaseId` ended, or never started: true when the lease is
   * this authority's (running, counted still, or retired lately), false when it is not known here.
   */
  private releasedLease(agent: string, leaseId: number, count: number, now: number): boolean {
    if (this.lease?.holder === agent && this.lease.id === leaseId) this.endLease(this.lease);
    const key = remainderKey(agent, leaseId);
    const remainder = this.remainders.get(key);
    if (!remainder) return (this.retired.get(key) ?? Number.NEGATIVE_INFINITY) > now;
    // Its holder ended it: nothing starts under it after now.
    remainder.startsUntilMs = Math.min(remainder.startsUntilMs, now);
    remainder.count -= count;
    if (remainder.count <= 0) this.dropRemainder(key, remainder);
    return true;
  }

  /** Agent `agent` was refused by the server: returns the end of the address's block. */
  refused(agent: string, retryAfterMs: number | undefined, now: number): number {
    this.users.set(agent, now);
    return this.backOff.refused(now, retryAfterMs);
  }

  /** Agent `agent` reports a host's Crawl-delay of `delayMs` there. */
  crawlDelay(agent: string, delayMs: number, now: number): void {
    this.users.set(agent, now);
    this.spacing.reportCrawlDelay(delayMs, now);
  }

  /** Requests the address may have in flight by this count (slots, leases' remainders, a lease's limit). */
  inFlight(now: number): number {
    this.expire(now);
    return this.used() + (this.lease ? this.options.maxPerIp : 0);
  }

  /** Until when the server's push-back blocks the address (0: never blocked), and the gap between starts in force, ms. */
  backOffAt(now: number): { readonly blockedUntilMs: number; readonly delayMs: number } {
    return { blockedUntilMs: this.backOff.blockedUntilMs, delayMs: this.spacing.delayMs(now) };
  }

  /**
   * True when nothing is left to remember (no lease, slot, user, hold, Crawl-delay or back-off history,
   * nor a lease over whose late releases are still known).
   */
  forgettable(now: number): boolean {
    this.expire(now);
    return (
      !this.lease &&
      !this.awaiting &&
      this.slots.size + this.remainders.size + this.retired.size + this.users.size === 0 &&
      now >= this.holdUntilMs &&
      this.spacing.forgettable(now) &&
      this.backOff.forgettable(now)
    );
  }

  /** A lease over (revoked, returned or lapsed): its holder may have `maxPerIp` requests in flight still. */
  private endLease(lease: Lease): void {
    this.lease = undefined;
    this.remainders.set(remainderKey(lease.holder, lease.id), {
      agent: lease.holder,
      leaseId: lease.id,
      count: this.options.maxPerIp,
      untilMs: lease.untilMs + this.options.slotTtlMs,
      startsUntilMs: lease.untilMs,
    });
  }

  /**
   * What agent `agent` may have had in flight here counts no more: it is back as a new incarnation,
   * whose predecessor's requests ended with its process (see `IpAuthority.restarted`). Its starts stay
   * in the spacing, as made now at the latest.
   */
  forgetCount(agent: string, now: number): void {
    for (const [key, remainder] of this.remainders) {
      if (remainder.agent !== agent) continue;
      remainder.startsUntilMs = Math.min(remainder.startsUntilMs, now);
      // Its predecessor's releases may still be on their way.
      this.dropRemainder(key, remainder, true);
    }
  }

  /** `count` of agent `agent`'s requests counted by agent (no slot or lease of this authority's) ended. */
  private takeOff(agent: string, count: number): void {
    const key = remainderKey(agent);
    const remainder = this.remainders.get(key);
    if (!remainder) return;
    remainder.count -= count;
    if (remainder.count <= 0) this.dropRemainder(key, remainder);
  }

  /**
   * A remainder released, expired or forgotten: the starts it may have made still space the next ones.
   * `late`: a lease's releases may still be on their way (it was not released whole), known for a slot's
   * life after its end.
   */
  private dropRemainder(key: string, remainder: LeaseRemainder, late = false): void {
    this.spacing.startedBy(remainder.startsUntilMs);
    this.remainders.delete(key);
    if (late && remainder.leaseId !== undefined)
      this.retired.set(key, remainder.untilMs + this.options.slotTtlMs);
  }

  /**
   * When the next request may start at the address for the IP delay: that long after the latest start
   * that may have happened (`withLease`: the running lease's starts too, which run until its end).
   */
  private nextStartAtMs(now: number, withLease: boolean): number {
    let latest = Number.NEGATIVE_INFINITY;
    for (const remainder of this.remainders.values()) latest = Math.max(latest, remainder.startsUntilMs);
    if (withLease && this.lease) latest = Math.max(latest, this.lease.untilMs);
    return this.spacing.nextStartAtMs(now, latest);
  }

  /** A lease's grant: it starts nothing while the address is blocked, nor before the IP delay since others' starts. */
  private leaseGrant(now: number): IpGrant {
    const startAtMs = Math.max(this.backOff.blockedUntilMs, this.nextStartAtMs(now, false));
    const lease = this.lease as Lease;
    return {
      kind: "lease",
      leaseId: lease.id,
      ttlMs: lease.untilMs - now,
      blockedForMs: Math.max(0, startAtMs - now),
      delayMs: this.spacing.delayMs(now),
    };
  }

  /** True when no agent but `agent` asked within a lease's time. */
  private aloneIn(agent: string, now: number): boolean {
    for (const [user, atMs] of this.users) {
      if (user !== agent && now - atMs < this.options.leaseTtlMs) return false;
    }
    return true;
  }

  private used(): number {
    let used = this.slots.size;
    for (const remainder of this.remainders.values()) used += remainder.count;
    return used;
  }

  private expire(now: number): void {
    if (this.lease && now >= this.lease.untilMs) this.endLease(this.lease);
    for (const [id, slot] of this.slots) if (now >= slot.untilMs) this.slots.delete(id);
    for (const [key, r] of this.remainders) if (now >= r.untilMs) this.dropRemainder(key, r, true);
    for (const [key, untilMs] of this.retired) if (now >= untilMs) this.retired.delete(key);
    for (const [user, atMs] of this.users) if (now - atMs >= this.options.leaseTtlMs) this.users.delete(user);
  }
}

/** The key of agent `agent`'s remainder of lease `leaseId` (undefined: what it holds counted by agent). */
function remainderKey(agent: string, leaseId?: number): string {
  return leaseId === undefined ? agent : `${agent}\n${leaseId}`;
}
