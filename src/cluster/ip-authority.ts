// Over 400 lines on purpose: every message an authority answers (asks, releases, refusals, hand-overs
// both ways, a leave, a crash's reports) reads and changes the same ledgers and line, so one class keeps
// the order of those changes in one place; each part with state of its own is a class of its own file
// (IpLedger, IpHandOvers, IpCrashReports, IpWaitQueue).
import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { IpPoliteness } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import { IpCrashReports } from "./ip-crash-reports.js";
import { IpEarlyReleases } from "./ip-early-releases.js";
import {
  grantedStartSlack,
  IP_MAX_HOLD_MS,
  IP_POLL_MS,
  IP_START_SLACK_MS,
  type IpAuthorityOptions,
  type IpGrant,
  type IpHandOver,
  type IpReleased,
} from "./ip-grant.js";
import { aged, type CrashedAuthority, type CrashHolding, IpHandOvers } from "./ip-hand-over.js";
import { type IpDecision, IpLedger } from "./ip-ledger.js";
import { IpWaitQueue } from "./ip-wait-queue.js";

export {
  DEFAULT_IP_LIMIT,
  IP_CRAWL_DELAY_MEMORY_MS,
  IP_CRAWL_DELAY_REPORT_MS,
  IP_HOLD_MS,
  IP_LEASE_TTL_MS,
  IP_LIMITS,
  IP_MAX_HOLD_MS,
  IP_MAX_START_SLACK_MS,
  IP_POLL_MS,
  IP_START_SLACK_MS,
  type IpAuthorityOptions,
  type IpGrant,
  type IpHandOver,
  type IpLimit,
  type IpReleased,
} from "./ip-grant.js";

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
  /** The authority of `ip` in this agent's view (this agent's own id when it owns it). */
  readonly authorityOf?: (ip: string) => string;
  /**
   * Sends agent `agent`'s release at `ip` on to `to`, which keeps the account of its requests there
   * (see {@link IpAuthority.release}), `hops` times sent on with this one; unset: not sent on (counted
   * there until it expires).
   */
  readonly forwardRelease?: (
    to: string,
    agent: string,
    ip: string,
    released: IpReleased,
    hops: number,
  ) => void;
  /** A number in [0, 1), for the back-off's jitter. */
  readonly random?: () => number;
  /** Where the blocks of its addresses after their servers' push-back are said (unset: nowhere). */
  readonly logger?: Logger;
}

/** Asks an authority holds at one address at most (agents × `--max-per-ip` waiting there), and in all. */
const MAX_HELD_PER_IP = 64;
const MAX_HELD = 4_096;

/** Addresses with state at which a sweep first drops those with nothing left to remember. */
const FIRST_SWEEP_AT = 1024;

/**
 * How many times a release is sent on at most, agent to agent, towards the address's account: from the
 * authority its sender's view named, to the one this agent's view names or handed the address to, and
 * once more if that one had handed it on meanwhile.
 */
const MAX_RELEASE_HOPS = 2;

/** Slot ids a life of an authority may grant a ms, at most (see `IpAuthority.nextSlotId`). */
const SLOT_IDS_A_MS = 1_000;

/** How long an asker not the authority in this agent's view waits before asking again, ms. */
const NOT_AUTHORITY_WAIT_MS = 250;

/**
 * How soon an address's previous authority, alive in this agent's view, is asked again to hand it over
 * when its answer did not come (a process killed and not yet suspected, or restarted on an address not
 * yet gossiped), ms.
 */
export const HAND_OVER_RETRY_MS = 500;

/**
 * The politeness of the addresses whose key this agent owns on the circle, for the whole cluster. An
 * address one agent uses alone is leased to it: it applies `--max-per-ip` itself, with no message per
 * request. As soon as a second agent asks, the lease is revoked (its holder learns it at its next
 * renewal; until it reports its requests done, they count as `maxPerIp` in flight until the lease's end
 * and a slot's lifetime), and requests are granted one slot at a time, at most `maxPerIp` at once. A
 * server's push-back blocks every grant for the address (see `ServerBackOff`). Fail-safe: an
 * authority new to an address grants nothing there before its previous authority handed it over (what
 * it granted counts until released or expired), or, when that one crashed, before the grace is over.
 * An ask for a slot at a full address may be held ({@link askHeld}) in the address's line (see
 * {@link IpWaitQueue}), first come first served: a release hands the slot to the first waiter at once.
 *
 * This class keeps the addresses, the view and the line; each address's account is an {@link IpLedger},
 * and the hand-overs between authorities are kept by {@link IpHandOvers}.
 */
export class IpAuthority {
  private readonly ledgers = new Map<string, IpLedger>();
  /**
   * The ledgers of addresses this agent no longer owns in its view, kept for the grace until their new
   * authority asks for them (it asks with its first request there, often after this view changed).
   */
  private readonly former = new Map<string, { readonly ledger: IpLedger; readonly untilMs: number }>();
  private readonly handOvers: IpHandOvers;
  /** The number of addresses with state at which the next sweep runs: twice what the last one kept. */
  private sweepAt = FIRST_SWEEP_AT;
  /**
   * The next slot's or lease's id. A life's ids start at its start time in ms × {@link SLOT_IDS_A_MS},
   * so none repeats one of a previous life's, whose releases may still come (a previous life cannot have
   * granted that many a ms): a late release of a slot or lease of the previous life never ends one of
   * this life's.
   */
  private nextSlotId: number;
  private readonly waiters: IpWaitQueue<IpGrant>;
  /** True once this agent handed its addresses over to leave: it grants nothing anywhere any more. */
  private left = false;
  /** True once stopped ({@link close}): no hand-over is asked again. */
  private closed = false;
  /** What this agent answered when it handed each address over, within the grace: a repeated ask gets it again. */
  private readonly answered = new Map<string, { readonly handOver: IpHandOver; readonly atMs: number }>();
  /**
   * When what an agent back in the view (as the same life) granted at an address was counted here, by
   * `${ip} ${agent}`, for the grace: it is counted once, whether it was asked for or handed back.
   */
  private readonly learnt = new Map<string, number>();
  /** Hand-overs of agents leaving, gathered request by request until their last (`leaving`). */
  private readonly leaving = new Map<string, Map<string, IpHandOver>>();
  /** Since this agent left: each address it handed over, to whom (where releases are forwarded). */
  private readonly handedTo = new Map<string, string>();
  /** What the agents said they hold at crashed authorities' addresses, and the addresses awaiting it. */
  private readonly crashReports: IpCrashReports;
  /** Releases that came before this agent was their address's authority, for its take-over. */
  private readonly early: IpEarlyReleases;
  /** The agents of this agent's view, itself included. */
  private members: readonly string[] = [];
  /**
   * This agent's previous life, restarted before the others found it gone, while what it granted may
   * still run (see {@link previousLifeMayRun}).
   */
  private previousLife:
    | { readonly self: string; readonly atMs: number; readonly untilMs: number }
    | undefined;

  constructor(
    readonly options: IpAuthorityOptions,
    private readonly deps: IpAuthorityDeps,
  ) {
    if (!Number.isInteger(options.maxPerIp) || options.maxPerIp < 1) {
      throw new UbiError(ErrorCode.InvalidArgument, `max requests per IP must be a positive integer`);
    }
    this.nextSlotId = Math.max(0, Math.floor(deps.clock.now())) * SLOT_IDS_A_MS + 1;
    this.handOvers = new IpHandOvers(options.graceMs, deps.isAlive);
    const { maxPerIp, leaseTtlMs, slotTtlMs, ipDelayMs } = options;
    this.crashReports = new IpCrashReports(
      options.graceMs,
      { maxPerIp, leaseTtlMs, slotTtlMs, ipDelayMs },
      deps.isAlive,
    );
    this.early = new IpEarlyReleases(options.graceMs);
    this.waiters = new IpWaitQueue<IpGrant>(
      { maxHeldPerIp: MAX_HELD_PER_IP, maxTotal: MAX_HELD },
      { clock: deps.clock, wake: (ip) => this.serve(ip), timedOut: () => ({ kind: "wait", waitMs: 0 }) },
    );
  }

  /** Answers every ask held, and holds none from now on (this agent stops). */
  close(): void {
    this.closed = true;
    this.waiters.close({ kind: "wait", waitMs: IP_POLL_MS });
  }

  /** Asks held now, at every address. */
  get held(): number {
    return this.waiters.size;
  }

  /**
   * The view changed from `membersBefore` to `membersAfter` (unsaid: an address of an authority that
   * crashed is held for the grace): addresses this agent no longer owns are forgotten, and a fresh
   * address it owns now is taken over from `previousOf(ip)`, its authority before, within the grace.
   * `returnedOf(ip)`: an address's authority among the agents back in the view as the same life (the
   * other side of a healed partition; see `returnedAuthorityOf`), asked too what it granted there, for
   * the addresses this agent kept as for those it takes up within the grace (see {@link learnGrants}).
   */
  viewChanged(
    previousOf: (ip: string) => string | undefined,
    membersBefore: readonly string[] = [],
    membersAfter: readonly string[] = [],
    returnedOf?: (ip: string) => string | undefined,
  ): void {
    const now = this.deps.clock.now();
    this.handOvers.viewChanged(now, previousOf, membersBefore, membersAfter, returnedOf);
    const before = new Set(membersBefore);
    this.crashReports.cameBack(membersAfter.filter((id) => !before.has(id)));
    this.members = membersAfter;
    const untilMs = now + this.options.graceMs;
    for (const [ip, ledger] of this.ledgers) {
      if (this.deps.owns(ip)) continue;
      this.ledgers.delete(ip);
      this.former.set(ip, { ledger, untilMs });
      this.crashReports.forget(ip, now);
      this.waiters.drop(ip, { kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS });
    }
    // An address kept here that an agent back as the same life (the other side of a healed partition)
    // was the authority of meanwhile: what it granted there is asked for.
    if (returnedOf && !this.left)
      for (const [ip, ledger] of this.ledgers) {
        const from = returnedOf(ip);
        if (from !== undefined && this.deps.isAlive(from)) this.learnGrants(ip, ledger, from);
      }
    const previous = this.previousLifeCrash(now);
    if (previous === undefined) return;
    // Those waiting there hear at once.
    for (const ip of this.crashReports.previousLifeView(previous.reporters, previous.view, now))
      this.serve(ip);
  }

  /**
   * This agent, `self`, restarted before the others found its previous life gone (another agent held
   * that life alive): what it granted may run until `untilMs` (a lease and a slot's life after it
   * ended). Each address this agent is the authority of is taken over from that life as from a crashed
   * authority: nothing is granted there until every other agent of this agent's view has said, in the
   * same view, what it holds there (they do on hearing this life; see `ClusterIpLimit`), or until
   * `untilMs`. Its own requests ended with its process and count no more.
   */
  previousLifeMayRun(self: string, untilMs: number): void {
    const now = this.deps.clock.now();
    if (untilMs <= now) return;
    this.previousLife = { self, atMs: now, untilMs };
    this.crashReports.awaitPreviousLife(self);
    const previous = this.previousLifeCrash(now);
    if (previous === undefined) return;
    for (const [ip, ledger] of this.ledgers) this.crashReports.awaitReports(ip, ledger, previous, now);
  }

  /** The take-over from this agent's previous life while its grants may run (see {@link previousLifeMayRun}). */
  private previousLifeCrash(now: number): CrashedAuthority | undefined {
    const life = this.previousLife;
    if (life === undefined || now >= life.untilMs) return undefined;
    return {
      gone: life.self,
      atMs: life.atMs,
      reporters: this.members.filter((id) => id !== life.self),
      view: new Set(this.members.length > 0 ? this.members : [life.self]),
      untilMs: life.untilMs,
      previousLife: true,
    };
  }

  /**
   * Agent `from`, whose view became `view` without agent `gone`, says what it holds at `gone`'s
   * addresses (`last`: all of it said). An address taken over from `gone`, crashed, goes on once
   * every agent of the view before has said so in the same view (see ip-crash-reports.ts).
   */
  reportedHoldings(
    from: string,
    gone: string,
    holdings: ReadonlyMap<string, CrashHolding>,
    view: readonly string[],
    last: boolean,
  ): void {
    const now = this.deps.clock.now();
    // Those waiting there hear at once.
    for (const ip of this.crashReports.reported(from, gone, holdings, view, last, now)) this.serve(ip);
  }

  /**
   * Agent `id` left or was found dead: its requests ended with it (a killed process's connections close).
   * What it was granted counts one lease's time more — the time an agent suspected wrongly takes to stop
   * starting requests under its lease — and is forgotten then, instead of after a whole fetch's time.
   */
  agentGone(id: string): void {
    const untilMs = this.deps.clock.now() + this.options.leaseTtlMs;
    for (const ledger of this.ledgers.values()) ledger.agentGone(id, untilMs);
    for (const { ledger } of this.former.values()) ledger.agentGone(id, untilMs);
    // Nobody listens for their answers any more.
    this.waiters.dropAgent(id, { kind: "wait", waitMs: IP_POLL_MS });
    // A hand-over it began and never ended will not end now: its addresses wait out the grace.
    this.leaving.delete(id);
  }

  /**
   * Agent `id` is back as a new incarnation (restarted) after it was found gone: what its predecessor
   * held anywhere here — a lease or slots counted since, or its own requests as a crash's reports count
   * them — ended with its process, and counts no more (its starts still space the next ones, as made
   * now at the latest). What it holds now it was granted as the new incarnation, after this.
   */
  restarted(id: string): void {
    const now = this.deps.clock.now();
    for (const ledger of this.ledgers.values()) ledger.forgetCount(id, now);
    for (const { ledger } of this.former.values()) ledger.forgetCount(id, now);
  }

  /**
   * This agent leaves the cluster: from now on it grants nothing anywhere, and hands each of its
   * addresses over to `nextAuthorityOf(ip)`, its authority without this agent (undefined: none). Returns
   * what it granted that may still run (its own requests included: their releases are forwarded), by
   * next authority and address; every other address had none. Sent before the leave is announced, they
   * let the next authorities grant at once instead of waiting out the grace of an agent gone without a
   * word.
   */
  leave(nextAuthorityOf: (ip: string) => string | undefined): Map<string, Map<string, IpHandOver>> {
    this.left = true;
    const now = this.deps.clock.now();
    const byAuthority = new Map<string, Map<string, IpHandOver>>();
    const kept = [...this.ledgers];
    for (const [ip, { ledger, untilMs }] of this.former) if (now < untilMs) kept.push([ip, ledger]);
    for (const [ip, ledger] of kept) {
      const next = nextAuthorityOf(ip);
      if (next === undefined) continue;
      this.handOvers.handOff(ip, next, now);
      this.handedTo.set(ip, next);
      const handOffs = byAuthority.get(next) ?? new Map<string, IpHandOver>();
      handOffs.set(ip, ledger.handOver(now));
      byAuthority.set(next, handOffs);
    }
    this.ledgers.clear();
    this.former.clear();
    this.waiters.close({ kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS });
    return byAuthority;
  }

  /**
   * Agent `from`, leaving, hands over `handOffs` (see {@link leave}); `last`: the last of its requests
   * to this agent, after which every address of its moving here is taken as handed over (those not in
   * any request had nothing that may still run). An address this agent keeps already (its view changed
   * first) takes in what was granted there, and keeps its wait too (when in doubt, slower). A request
   * from an agent no longer alive here is late and not taken (a hand-over begun and not ended is
   * dropped when its agent is gone): its addresses wait out the grace.
   */
  leftHandingOver(
    from: string,
    handOffs: ReadonlyMap<string, IpHandOver>,
    last: boolean,
    view: readonly string[],
  ): void {
    // Late (the leaver is gone here already, its hand-over perhaps partial): the grace is waited out.
    if (!this.deps.isAlive(from)) return;
    const now = this.deps.clock.now();
    const gathered = this.leaving.get(from) ?? new Map<string, IpHandOver>();
    for (const [ip, handOff] of handOffs) {
      gathered.set(ip, handOff);
      this.ledgers.get(ip)?.tookOverFromLeaver(handOff, now);
    }
    if (!last) {
      this.leaving.set(from, gathered);
      return;
    }
    this.leaving.delete(from);
    this.handOvers.leftHandingOver(from, gathered, view, now);
  }

  /**
   * Agent `to`, now `ip`'s authority in its view, takes it over: this agent grants nothing there for
   * the grace (unless `to` leaves and hands it back), and answers what it granted that may still run.
   */
  handOver(ip: string, to: string): IpHandOver {
    const now = this.deps.clock.now();
    // Left: what it granted there went to the next authority it knew of; the asker cannot know it.
    if (this.left)
      return {
        held: new Map(),
        untilMs: 0,
        blockedForMs: 0,
        spacedForMs: 0,
        holdForMs: this.options.graceMs,
      };
    this.handOvers.handOff(ip, to, now);
    const ledger = this.ledgers.get(ip) ?? this.takeFormer(ip, now);
    this.ledgers.delete(ip);
    this.waiters.drop(ip, { kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS });
    if (!ledger) {
      // Asked again (its answer lost on the way, and the asker asks again): the same, aged.
      const answered = this.answered.get(ip);
      if (answered && now < answered.atMs + this.options.graceMs)
        return aged(answered.handOver, now - answered.atMs);
      return { held: new Map(), untilMs: 0, blockedForMs: 0, spacedForMs: 0 };
    }
    const handOver = ledger.handOver(now);
    if (this.answered.size >= this.sweepAt) this.forgetAnswers(now);
    this.answered.set(ip, { handOver, atMs: now });
    return handOver;
  }

  /**
   * Agents `returned` are back in this agent's view as the same lives (it had taken them for dead, or a
   * partition healed) and the authorities of addresses it kept meanwhile: each address whose account is
   * still here (not asked for yet) is handed off to its authority back, as to an asker (this agent grants
   * nothing there any more and sends its releases on), with what it granted there that may still run,
   * returned by agent and address to be sent to each ({@link handedBack}). An agent back whose own view
   * never changed would never ask: it never took this one for its addresses' authority.
   */
  handBack(returned: readonly string[]): Map<string, Map<string, IpHandOver>> {
    const back = new Set(returned);
    const byAgent = new Map<string, Map<string, IpHandOver>>();
    if (this.left) return byAgent;
    for (const ip of [...this.former.keys()]) {
      const to = this.deps.authorityOf?.(ip);
      if (to === undefined || !back.has(to)) continue;
      const handOver = this.handOver(ip, to);
      if (handOver.held.size === 0 && handOver.blockedForMs === 0 && handOver.spacedForMs === 0) continue;
      const handOffs = byAgent.get(to) ?? new Map<string, IpHandOver>();
      handOffs.set(ip, handOver);
      byAgent.set(to, handOffs);
    }
    return byAgent;
  }

  /**
   * Agent `from`, back in this agent's view, hands back addresses of this one's that it kept while it
   * took this one for dead (see {@link handBack}): what it granted there that may still run counts here
   * on top of this agent's own account, once (a view that changed here too asked for it already).
   */
  handedBack(from: string, handOffs: ReadonlyMap<string, IpHandOver>): void {
    const now = this.deps.clock.now();
    for (const [ip, handOver] of handOffs) {
      if (!this.keeps(ip, now) || !this.learn(ip, from, now)) continue;
      this.ledger(ip, now).tookOverFromLeaver({ ...handOver, holdForMs: 0 }, now);
      this.serve(ip); // those waiting there hear of it
    }
  }

  /**
   * Agent `agent` asks to start one request to `ip` (`renew`: to renew the lease it holds), answered at
   * once; a slot's request starts within `startSlackMs` of the grant (see `grantedStartSlack`). The
   * caller stops using a lease whose renewal is not answered by a lease.
   */
  ask(agent: string, ip: string, renew: boolean, startSlackMs?: number): IpGrant {
    const slackMs = grantedStartSlack(startSlackMs);
    return this.toGrant(this.decide(agent, ip, renew, false, slackMs), this.deps.clock.now());
  }

  /**
   * Agent `agent` asks to start one request to `ip`, and may wait `holdMs` for the answer (at most
   * {@link IP_MAX_HOLD_MS}): when the address is full, or free but for the IP delay within the hold,
   * the ask waits in the address's line (first come first served) and is answered as soon as a release
   * (or the delay) lets a slot be granted to it; at the hold's end it is answered `wait` 0 (ask again).
   * A full line, or an authority stopped, answers at once as {@link ask} does. `startSlackMs`: as for
   * {@link ask}.
   */
  askHeld(agent: string, ip: string, holdMs: number, startSlackMs?: number): IpGrant | Promise<IpGrant> {
    const now = this.deps.clock.now();
    const slackMs = grantedStartSlack(startSlackMs);
    const decision = this.decide(agent, ip, false, false, slackMs);
    const holdFor = Math.min(holdMs, IP_MAX_HOLD_MS);
    const holdable =
      decision.kind === "full" || (decision.kind === "spaced" && decision.atMs - now < holdFor);
    const held = holdable ? this.waiters.wait(ip, agent, holdFor, slackMs) : undefined;
    if (!held) return this.toGrant(decision, now);
    if (decision.kind === "spaced") this.waiters.wakeAt(ip, decision.atMs);
    return held;
  }

  /**
   * What an ask comes to now (`queued`: the first asker held in the address's line; any other asker
   * comes after those waiting there). An address handed over within the grace is the other authority's,
   * though this agent's view may not say so yet: nothing is granted there (were this agent its authority
   * again within the grace, its requests would wait for the grace: slower, never more at once).
   */
  private decide(
    agent: string,
    ip: string,
    renew: boolean,
    queued: boolean,
    startSlackMs = IP_START_SLACK_MS,
  ): IpDecision {
    const now = this.deps.clock.now();
    if (!this.keeps(ip, now))
      return renew ? { kind: "revoked" } : { kind: "wait", waitMs: NOT_AUTHORITY_WAIT_MS };
    const ledger = this.ledger(ip, now);
    this.crashReports.settle(ip, now);
    const leaseAnswer = ledger.answerLease(agent, renew, now);
    if (leaseAnswer) return leaseAnswer;
    if (!queued && this.waiters.waiting(ip) > 0) {
      // Those waiting come first: a slot that lapsed meanwhile is theirs.
      this.serve(ip);
      if (this.waiters.waiting(ip) > 0) return { kind: "full" };
    }
    return ledger.decide(agent, now, startSlackMs);
  }

  /** The answer to an ask not held: a wait for what a held ask would wait for in the line. */
  private toGrant(decision: IpDecision, now: number): IpGrant {
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
    this.waiters.serve(ip, (agent, waitedMs, leftMs, startSlackMs) => {
      const decision = this.decide(agent, ip, false, true, startSlackMs);
      if (decision.kind === "full") return undefined;
      const now = this.deps.clock.now();
      if (decision.kind === "spaced" && decision.atMs - now < leftMs) return { notBeforeMs: decision.atMs };
      if (decision.kind === "slot") return { answer: { ...decision, heldMs: waitedMs } };
      return { answer: this.toGrant(decision, now) };
    });
  }

  /**
   * Agent `agent`'s requests to `ip` ended: those of the slots `released` names, and those it may have
   * started under its lease (which ends, if it still ran: a holder returns its lease this way); see
   * `IpLedger.release`.
   */
  release(agent: string, ip: string, released: IpReleased): void {
    const now = this.deps.clock.now();
    if (!this.keeps(ip, now)) {
      if (this.releasedToFormer(agent, ip, released, now)) return;
      // The sender's view and this one's differ: on to whoever keeps the address's account.
      this.sendOn(agent, ip, released, 0, undefined, now);
      // After a crash the sender's view changed first: kept for a take-over from the crashed authority.
      if (!this.left && !this.deps.owns(ip) && this.crashReports.reportedLately(agent, now))
        this.early.add(agent, ip, released.slotIds.length + released.leaseSlots, now);
      return;
    }
    this.ledger(ip, now).release(agent, released, now);
    // What was freed goes to the first waiting there, at once.
    this.serve(ip);
  }

  /**
   * Agent `from` sends agent `agent`'s release at `ip` on to this one (`hops` times sent on): `from` left
   * and handed the address over to this one, or handed it over, or its view names this one the
   * authority. Released here if this agent keeps the address (or its account for the next authority),
   * else taken off what a leaving `from` handed over, else sent on once more towards the account.
   */
  forwardedRelease(from: string, agent: string, ip: string, released: IpReleased, hops: number): void {
    const now = this.deps.clock.now();
    if (this.keeps(ip, now)) {
      this.release(agent, ip, released);
      return;
    }
    if (this.releasedToFormer(agent, ip, released, now)) return;
    const pending = this.leaving.get(from)?.get(ip);
    const count = released.slotIds.length + released.leaseSlots;
    if (pending) {
      // Its hand-over is still coming in: taken off it there.
      const held = new Map(pending.held);
      const left = (held.get(agent) ?? 0) - count;
      if (left > 0) held.set(agent, left);
      else held.delete(agent);
      this.leaving.get(from)?.set(ip, { ...pending, held });
      return;
    }
    if (this.handOvers.releasedSinceHandOff(from, ip, agent, count)) return;
    this.sendOn(agent, ip, released, hops, from, now);
  }

  /** Releases at `ip`'s ledger kept for its next authority, within the grace: false when there is none. */
  private releasedToFormer(agent: string, ip: string, released: IpReleased, now: number): boolean {
    const former = this.former.get(ip);
    if (!former || now >= former.untilMs) return false;
    // Its authority no more: counted in what is handed over to the next.
    former.ledger.release(agent, released, now);
    return true;
  }

  /**
   * Sends a release at `ip` that this agent keeps no account of on (`hops` times sent on already, the
   * last by `from`) to the agent that does: the next authority it handed the address to as it left or
   * within the grace, else the authority its view names. There its slot and lease end exactly (by id),
   * or it is taken off what was handed over (see `IpLedger.release`); taken off a count by agent here
   * instead, it could end another request of the same agent's (a lease granted again, a slot expired).
   * Lost, it is counted until it expires: slower, never faster.
   */
  private sendOn(
    agent: string,
    ip: string,
    released: IpReleased,
    hops: number,
    from: string | undefined,
    now: number,
  ): void {
    if (hops >= MAX_RELEASE_HOPS) return;
    const to = this.left
      ? this.handedTo.get(ip)
      : (this.handOvers.handedOffTo(ip, now) ??
        (this.deps.owns(ip) ? undefined : this.deps.authorityOf?.(ip)));
    // Back to its sender only when this agent handed the address to it meanwhile.
    if (to === undefined || (to === from && this.handOvers.handedOffTo(ip, now) !== to)) return;
    this.deps.forwardRelease?.(to, agent, ip, released, hops + 1);
  }

  /**
   * Agent `agent` was refused by `ip`'s server (429, 503) asking to wait `retryAfterMs` (undefined:
   * unsaid): no grant for the address until the back-off ends, whose time is returned (0: not the
   * authority).
   */
  refused(agent: string, ip: string, retryAfterMs: number | undefined): number {
    const now = this.deps.clock.now();
    if (!this.keeps(ip, now)) return 0;
    const blockedUntilMs = this.ledger(ip, now).refused(agent, retryAfterMs, now);
    const blockedForMs = blockedUntilMs - now;
    this.deps.logger?.info(
      { event: "ip-blocked", ip, refused: agent, blockedForMs },
      `${ip} blocked for every agent for ${blockedForMs} ms: its server pushed back on ${agent}'s request`,
    );
    this.serve(ip); // those waiting there hear of the block now
    return blockedUntilMs;
  }

  /**
   * A host at `ip` asks for a robots.txt Crawl-delay of `delayMs`, reported by agent `agent`: every
   * agent's requests there are spaced by it (the longest reported), for {@link IP_CRAWL_DELAY_MEMORY_MS}.
   */
  crawlDelay(agent: string, ip: string, delayMs: number): void {
    const now = this.deps.clock.now();
    if (!this.keeps(ip, now)) return;
    this.ledger(ip, now).crawlDelay(agent, delayMs, now);
  }

  /** True while this agent is `ip`'s authority: it owns it, has not handed it over, and has not left. */
  private keeps(ip: string, now: number): boolean {
    return !this.left && this.deps.owns(ip) && !this.handOvers.isHandedOff(ip, now);
  }

  /** Addresses with state here. */
  get size(): number {
    return this.ledgers.size;
  }

  /** Requests `ip` may have in flight by this authority's count (slots, leases' remainders, a lease's limit). */
  inFlight(ip: string): number {
    return this.ledgers.get(ip)?.inFlight(this.deps.clock.now()) ?? 0;
  }

  /**
   * What this authority keeps at `ip`: its line's length, the server's block and the gap between starts
   * in force; undefined when it keeps nothing there (not its authority, or nothing to remember).
   */
  politenessAt(ip: string): IpPoliteness | undefined {
    const ledger = this.ledgers.get(ip);
    if (!ledger) return undefined;
    return { line: this.waiters.waiting(ip), ...ledger.backOffAt(this.deps.clock.now()) };
  }

  /** `ip`'s ledger, made when fresh: taken over from its previous authority, or held for a crashed one's grace. */
  private ledger(ip: string, now: number): IpLedger {
    const existing = this.ledgers.get(ip);
    if (existing) return existing;
    // Its authority again within the grace: what it granted before still counts.
    const ledger =
      this.takeFormer(ip, now) ??
      new IpLedger(this.options, () => this.nextSlotId++, this.deps.random ?? Math.random);
    if (this.ledgers.size >= this.sweepAt) this.sweep(now);
    this.ledgers.set(ip, ledger);
    const { askFrom, askAlso, holdUntilMs, handedOver, crashed } = this.handOvers.takeOverOf(ip, now);
    // Releases kept for the address count only against a crash's reports.
    const early = this.early.take(ip, now);
    if (!crashed && holdUntilMs > Number.NEGATIVE_INFINITY) ledger.holdUntil(holdUntilMs);
    if (handedOver) ledger.tookOverFromLeaver(handedOver, now);
    if (askFrom !== undefined) this.askHandOver(ip, ledger, askFrom);
    for (const from of askAlso) this.learnGrants(ip, ledger, from);
    // One authority crashed: the others say what they hold there, or the grace is waited out.
    if (crashed) this.crashReports.awaitReports(ip, ledger, crashed, now, early);
    const previous = this.previousLifeCrash(now);
    // This agent's previous life granted there too: its reports, or, besides another crash, its end.
    if (previous && crashed) ledger.holdUntil(previous.untilMs);
    else if (previous) this.crashReports.awaitReports(ip, ledger, previous, now);
    return ledger;
  }

  /** The ledger kept for `ip` since this agent stopped owning it, within the grace; forgotten here. */
  private takeFormer(ip: string, now: number): IpLedger | undefined {
    const former = this.former.get(ip);
    this.former.delete(ip);
    return former && now < former.untilMs ? former.ledger : undefined;
  }

  /**
   * Asks agent `from`, `ip`'s previous authority, to hand the address over to this one; nothing is
   * granted there meanwhile. Unanswered (the call failed: `takeOver` rejects or resolves undefined), it
   * is asked again while it stays in the view (a process killed
   * and not yet suspected, or restarted on an address not yet known here), within the grace; found gone
   * meanwhile, the address is taken over from the others' reports of the crash as if it was gone when
   * asked, or else held for the grace.
   */
  private askHandOver(ip: string, ledger: IpLedger, from: string): void {
    ledger.awaitHandOver();
    const giveUpAtMs = this.deps.clock.now() + this.options.graceMs;
    const done = (handOver: IpHandOver | undefined) => {
      ledger.handedOver(handOver, this.deps.clock.now());
      if (handOver && this.ledgers.get(ip) === ledger) this.serve(ip);
    };
    const unanswered = () => {
      const now = this.deps.clock.now();
      if (this.closed || this.ledgers.get(ip) !== ledger || now >= giveUpAtMs) return done(undefined);
      if (this.deps.isAlive(from)) {
        this.deps.clock.setTimeout(ask, HAND_OVER_RETRY_MS);
        return;
      }
      const { crashed } = this.handOvers.takeOverOf(ip, now);
      // Releases taken off its answer may be of requests the reports do not count (sent before them).
      ledger.forgetReleasesBefore();
      if (crashed?.gone !== from) return done(undefined);
      this.crashReports.awaitReports(ip, ledger, crashed, now);
      // The reports stand for its answer: what it granted that may still run.
      done({ held: new Map(), untilMs: 0, blockedForMs: 0, spacedForMs: 0 });
    };
    const ask = () => {
      // Stopped or left meanwhile: nothing is granted here any more.
      if (this.closed || this.left) return done(undefined);
      void this.deps
        .takeOver(from, ip)
        .then((handOver) => (handOver === undefined ? unanswered() : done(handOver)), unanswered);
    };
    ask();
  }

  /**
   * Asks agent `from`, `ip`'s authority on the other side of a partition that healed, what it granted
   * there (it grants nothing there from its answer on), without holding the address meanwhile: those
   * grants ran beside this agent's all through the partition, and count here from the answer on — the
   * requests, the server's block and the spacing, not the waits the answer names for its own doubts (a
   * crash's reports it awaited: this agent's own grants, known here). What it counts twice (this agent's
   * grants that its side took over from reports) is over-counted until it expires: slower, never faster.
   * Unanswered, it is asked again while alive, within the grace.
   */
  private learnGrants(ip: string, ledger: IpLedger, from: string): void {
    const giveUpAtMs = this.deps.clock.now() + this.options.graceMs;
    const again = () => {
      if (!this.closed && this.deps.clock.now() < giveUpAtMs && this.deps.isAlive(from))
        this.deps.clock.setTimeout(ask, HAND_OVER_RETRY_MS);
    };
    const ask = () => {
      if (this.closed || this.left || this.ledgers.get(ip) !== ledger) return;
      void this.deps.takeOver(from, ip).then((handOver) => {
        if (handOver === undefined) return again();
        const now = this.deps.clock.now();
        if (this.learn(ip, from, now)) ledger.tookOverFromLeaver({ ...handOver, holdForMs: 0 }, now);
      }, again);
    };
    ask();
  }

  /** True the first time within the grace that what `from` granted at `ip` is counted here. */
  private learn(ip: string, from: string, now: number): boolean {
    const key = `${ip} ${from}`;
    const atMs = this.learnt.get(key);
    if (atMs !== undefined && now < atMs + this.options.graceMs) return false;
    this.learnt.set(key, now);
    return true;
  }

  /** Forgets the hand-overs answered longer than the grace ago. */
  private forgetAnswers(now: number): void {
    for (const [ip, { atMs }] of this.answered)
      if (now >= atMs + this.options.graceMs) this.answered.delete(ip);
  }

  /** Drops the addresses with nothing left to remember, so memory follows the addresses in use. */
  private sweep(now: number): void {
    for (const [ip, ledger] of this.ledgers) {
      const forgettable = ledger.forgettable(now);
      if (forgettable && this.waiters.waiting(ip) === 0) this.ledgers.delete(ip);
    }
    for (const [key, atMs] of this.learnt) if (now >= atMs + this.options.graceMs) this.learnt.delete(key);
    this.handOvers.sweep(now);
    this.crashReports.sweep(now);
    this.early.sweep(now);
    this.forgetAnswers(now);
    for (const [ip, { untilMs }] of this.former) if (now >= untilMs) this.former.delete(ip);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.ledgers.size);
  }
}
