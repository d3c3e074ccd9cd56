import type { EarlyRelease } from "./ip-early-releases.js";
import type { IpHandOver } from "./ip-grant.js";
import { aged, type CrashedAuthority, type CrashHolding } from "./ip-hand-over.js";
import type { IpLedger } from "./ip-ledger.js";

/** What one agent said it holds at the addresses of an authority gone from its view. */
interface Report {
  readonly atMs: number;
  readonly view: ReadonlySet<string>;
  /** By address: what it may still have in flight there, whoever granted it. */
  readonly holdings: Map<string, CrashHolding>;
  /** True once its last message came (a report may come in several). */
  complete: boolean;
}

/** The limits a crashed authority's own requests are counted by (see {@link IpCrashReports.takeOverAt}). */
export interface CrashLimits {
  readonly maxPerIp: number;
  readonly leaseTtlMs: number;
  /** How long a slot lasts when its release never comes: a request's longest time and a margin, ms. */
  readonly slotTtlMs: number;
  readonly ipDelayMs: number;
}

/** A hand-over of nothing that may still run. */
const NOTHING_HANDED_OVER: IpHandOver = { held: new Map(), untilMs: 0, blockedForMs: 0, spacedForMs: 0 };

/** Reports about this many gone agents at most are kept (a crash is reported by every agent of the view). */
const MAX_GONE = 256;

/** Reports of one reporter about one gone agent kept at most, each of its own view (the newest kept). */
const MAX_VIEWS_A_REPORTER = 4;

/** Addresses one report holds at most (a reporter's addresses in use; more is a hostile peer's). */
const MAX_REPORT_ADDRESSES = 16_384;

/**
 * The reports of a crash, as one authority gathers them. When an agent finds another gone from its
 * view, it tells every agent of its new view what it holds at that one's addresses: the requests still
 * in flight under its slots, and under the gone authority's leases, which end as it reports (see
 * `ClusterIpGate.holdings`; a running lease of another authority counts the whole `--max-per-ip`), with
 * the block and spacing it knows of. The address's new authority, once every agent of
 * the view before has reported in the same view after, knows what may still run there of what the gone
 * authority granted to others; the gone agent's own requests ended with it (a killed process's
 * connections close), but are counted as `--max-per-ip` less the others' for a lease's time, the time
 * an agent suspected wrongly takes to stop — the precedent of `IpLedger.agentGone`. So an address
 * leased to a live agent by an authority that crashed goes on at once, instead of after the grace
 * (a lease, a fetch's time and the suspicion). Fail-safe: a report missing, late or made in another
 * view leaves the address held until the grace's end. Releases that came before this agent was the
 * address's authority, sent after their senders' reports, are taken off them (see ip-early-releases.ts).
 */
export class IpCrashReports {
  /**
   * By gone agent, by reporter, by the view it was made in ({@link viewKey}): two reports of one
   * reporter in flight at once (its view changed again while it sent the first) never mix.
   */
  private readonly reports = new Map<string, Map<string, Map<string, Report>>>();
  /**
   * By gone agent, by reporter: when an agent this one's view does not hold reported it gone. Its view
   * is behind (a newcomer the gone agent knew, which may hold its grants): no address of the gone agent
   * goes on before the grace.
   */
  private readonly strangers = new Map<string, Map<string, number>>();
  /** This agent's id once its previous life may have granted what still runs (see {@link awaitPreviousLife}). */
  private previousLife: string | undefined;
  /** Addresses taken over from a crashed authority, and their ledgers, awaiting the reports. */
  private readonly awaiting = new Map<
    string,
    {
      crashed: CrashedAuthority;
      readonly ledger: IpLedger;
      /** Releases there that came before this agent was the authority (see ip-early-releases.ts). */
      readonly released: readonly EarlyRelease[];
    }
  >();

  /**
   * @param graceMs how long a report counts.
   * @param isAlive true while agent `id` is alive in this agent's view.
   */
  constructor(
    private readonly graceMs: number,
    private readonly limits: CrashLimits,
    private readonly isAlive: (id: string) => boolean,
  ) {}

  /**
   * `ledger`, fresh at `ip`, is taken over from `crashed.gone`: it grants nothing until the reports are
   * all in, or the grace is over (see {@link settle}). `released`: releases that came before this agent
   * was the authority, sent after their senders reported, taken off the reports.
   */
  awaitReports(
    ip: string,
    ledger: IpLedger,
    crashed: CrashedAuthority,
    now: number,
    released: readonly EarlyRelease[] = [],
  ): void {
    // Two crashes at one address at once (rare): the first's reports are no longer awaited, and what it
    // granted is held for a grace instead (slower, never faster).
    this.awaiting.get(ip)?.ledger.handedOver(undefined, now);
    ledger.awaitHandOver();
    this.awaiting.set(ip, { crashed, ledger, released });
    this.settle(ip, now);
  }

  /**
   * This agent's own previous life, `self`, may have granted what still runs (see
   * `IpAuthority.previousLifeMayRun`): reports about it are kept from agents not yet in this agent's
   * view too (the others learn of this life one by one, as it learns of them).
   */
  awaitPreviousLife(self: string): void {
    this.previousLife = self;
    this.strangers.delete(self);
  }

  /**
   * This agent's view is now `view`, this agent and `reporters`: the addresses awaiting its previous
   * life's reports await them in it. Returns the addresses that go on now.
   */
  previousLifeView(reporters: readonly string[], view: ReadonlySet<string>, now: number): string[] {
    const settled: string[] = [];
    for (const [ip, entry] of this.awaiting) {
      if (!entry.crashed.previousLife) continue;
      entry.crashed = { ...entry.crashed, reporters, view };
      if (this.settle(ip, now)) settled.push(ip);
    }
    return settled;
  }

  /**
   * `ip`, awaiting reports, goes on if every report is in ({@link takeOverAt}), or once the grace is
   * over, when nothing granted before may run. Returns true when it was settled now.
   */
  settle(ip: string, now: number): boolean {
    const entry = this.awaiting.get(ip);
    if (!entry) return false;
    const { crashed, ledger, released } = entry;
    if (now >= crashed.untilMs) {
      this.awaiting.delete(ip);
      ledger.handedOver(NOTHING_HANDED_OVER, now);
      return true;
    }
    const settled = this.takeOverAt(ip, crashed, now);
    if (!settled) return false;
    this.awaiting.delete(ip);
    // A release that came before its sender's report is of requests the report does not count.
    for (const { agent, count, atMs } of released) {
      const reportedAtMs = settled.reportedAtMs.get(agent);
      if (reportedAtMs !== undefined && atMs >= reportedAtMs) ledger.releasedUngranted(agent, count);
    }
    ledger.handedOver(settled.reported, now);
    ledger.tookOverFromLeaver(settled.gone, now);
    return true;
  }

  /**
   * `ip` is no longer this agent's: nothing awaits there. Its ledger, kept for the grace in case the
   * address comes back, holds what the crashed authority granted for a grace instead of the reports.
   */
  forget(ip: string, now: number): void {
    this.awaiting.get(ip)?.ledger.handedOver(undefined, now);
    this.awaiting.delete(ip);
  }

  /**
   * Agent `reporter`, whose view became `view` without agent `gone`, holds `holdings` at `gone`'s
   * addresses (only what it says of its own requests counts); `last`: its last message about `gone`.
   * Returns the addresses that go on now.
   */
  reported(
    reporter: string,
    gone: string,
    holdings: ReadonlyMap<string, CrashHolding>,
    view: readonly string[],
    last: boolean,
    now: number,
  ): string[] {
    if (reporter === gone) return [];
    // Only an agent of this view reports. One not yet known here (it joined through the gone agent,
    // whose grants it may hold) is no reporter this agent knew to wait for: its report holds the gone
    // agent's addresses until the grace — unless the gone agent is this agent's own previous life,
    // whose reports come from agents this life learns of one by one.
    // Kept all the same: it counts if `gone` turns out to be this agent's own previous life (see
    // awaitPreviousLife), told by another message that may come after this one.
    if (!this.isAlive(reporter) && gone !== this.previousLife) this.heardFromStranger(reporter, gone, now);
    if (!this.reports.has(gone) && this.reports.size >= MAX_GONE) this.sweep(now);
    if (!this.reports.has(gone) && this.reports.size >= MAX_GONE) return [];
    const byReporter = this.reports.get(gone) ?? new Map<string, Map<string, Report>>();
    this.reports.set(gone, byReporter);
    const byView = byReporter.get(reporter) ?? new Map<string, Report>();
    byReporter.set(reporter, byView);
    const key = viewKey(view);
    let report = byView.get(key);
    if (!report || report.complete || now >= report.atMs + this.graceMs) {
      report = { atMs: now, view: new Set(view), holdings: new Map(), complete: false };
      byView.delete(key);
      byView.set(key, report);
      // The oldest first: a Map keeps the order of insertion.
      for (const old of byView.keys()) {
        if (byView.size <= MAX_VIEWS_A_REPORTER) break;
        byView.delete(old);
      }
    }
    for (const [ip, { state, leasedByGone }] of holdings) {
      if (report.holdings.size >= MAX_REPORT_ADDRESSES) break;
      const own = state.held.get(reporter);
      if (own !== undefined)
        report.holdings.set(ip, { state: { ...state, held: new Map([[reporter, own]]) }, leasedByGone });
    }
    report.complete = last;
    if (!last) return [];
    const settled: string[] = [];
    for (const [ip, { crashed }] of this.awaiting)
      if (crashed.gone === gone && this.settle(ip, now)) settled.push(ip);
    return settled;
  }

  /**
   * What may still run at `ip` of what `crashed.gone` granted, once every reporter alive reported in
   * `crashed.view` (undefined: not yet, or never — a reporter gone, or of another view): the others'
   * requests, by agent, with the waits they know of; and the gone agent's own, `maxPerIp` less theirs,
   * for `leaseTtlMs`; both counted from `now`.
   */
  takeOverAt(
    ip: string,
    crashed: CrashedAuthority,
    now: number,
  ):
    | {
        readonly reported: IpHandOver;
        readonly gone: IpHandOver;
        /** When each reporter's report used came. */
        readonly reportedAtMs: ReadonlyMap<string, number>;
      }
    | undefined {
    if (this.strangerReported(crashed.gone, now)) return undefined;
    // Told of its previous life by another agent, this one waits for that one at least.
    if (crashed.previousLife && crashed.reporters.length === 0) return undefined;
    const byReporter = this.reports.get(crashed.gone);
    const key = viewKey(crashed.view);
    const states: IpHandOver[] = [];
    const reportedAtMs = new Map<string, number>();
    let goneHadNothing = false;
    for (const reporter of crashed.reporters) {
      const report = byReporter?.get(reporter)?.get(key);
      // Made in another view, it is under another key: missing here.
      if (!report?.complete || !this.isAlive(reporter)) return undefined;
      reportedAtMs.set(reporter, report.atMs);
      const holding = report.holdings.get(ip);
      if (!holding) continue;
      states.push(aged(holding.state, now - report.atMs));
      goneHadNothing ||= holding.leasedByGone;
    }
    const held = new Map<string, number>();
    const startsFor = new Map<string, number>();
    let [untilMs, blockedForMs, spacedForMs] = [0, 0, 0];
    for (const state of states) {
      for (const [agent, count] of state.held) {
        held.set(agent, count);
        startsFor.set(agent, state.startsFor?.get(agent) ?? state.untilMs);
      }
      untilMs = Math.max(untilMs, state.untilMs);
      blockedForMs = Math.max(blockedForMs, state.blockedForMs);
      spacedForMs = Math.max(spacedForMs, state.spacedForMs);
    }
    // Its own, unless a live agent held its lease there: the limit (its grants to others, and theirs
    // from others, are counted above), for a lease and a slot's life — a gone agent only stalled (a long
    // pause, suspected wrongly) may still start requests there until its view learns it is gone.
    const { limits } = this;
    const own = goneHadNothing || crashed.previousLife ? 0 : limits.maxPerIp;
    // Counted from when this agent found it gone; its last start may have been just before.
    const sinceMs = now - crashed.atMs;
    return {
      reported: { held, untilMs, startsFor, blockedForMs, spacedForMs },
      gone: {
        held: own > 0 ? new Map([[crashed.gone, own]]) : new Map(),
        untilMs: Math.max(0, limits.leaseTtlMs + limits.slotTtlMs - sinceMs),
        startsFor: new Map([[crashed.gone, 0]]),
        blockedForMs: 0,
        spacedForMs: Math.max(0, limits.ipDelayMs - sinceMs),
      },
      reportedAtMs,
    };
  }

  /** Agent `reporter`, not in this agent's view, reported `gone` gone (see {@link strangers}). */
  private heardFromStranger(reporter: string, gone: string, now: number): void {
    let byReporter = this.strangers.get(gone);
    if (byReporter === undefined) {
      if (this.strangers.size >= MAX_GONE) this.sweep(now);
      if (this.strangers.size >= MAX_GONE) return;
      byReporter = new Map();
      this.strangers.set(gone, byReporter);
    }
    if (byReporter.size < MAX_GONE || byReporter.has(reporter)) byReporter.set(reporter, now);
  }

  /** True when an agent not in this agent's view reported `gone` gone within the grace. */
  private strangerReported(gone: string, now: number): boolean {
    for (const atMs of this.strangers.get(gone)?.values() ?? []) if (now < atMs + this.graceMs) return true;
    return false;
  }

  /** True when agent `agent` reported an agent gone within the grace. */
  reportedLately(agent: string, now: number): boolean {
    for (const byReporter of this.reports.values()) {
      for (const report of byReporter.get(agent)?.values() ?? [])
        if (now < report.atMs + this.graceMs) return true;
    }
    return false;
  }

  /**
   * The view changed to one where `aliveAgain` are alive though they were not before: what was
   * reported of them going is forgotten (they may go again).
   */
  cameBack(aliveAgain: Iterable<string>): void {
    for (const id of aliveAgain) {
      this.reports.delete(id);
      this.strangers.delete(id);
    }
  }

  /** Forgets the reports older than the grace. */
  sweep(now: number): void {
    for (const [gone, byReporter] of this.reports) {
      for (const [reporter, byView] of byReporter) {
        for (const [key, report] of byView) if (now >= report.atMs + this.graceMs) byView.delete(key);
        if (byView.size === 0) byReporter.delete(reporter);
      }
      if (byReporter.size === 0) this.reports.delete(gone);
    }
    for (const [gone, byReporter] of this.strangers) {
      for (const [reporter, atMs] of byReporter) if (now >= atMs + this.graceMs) byReporter.delete(reporter);
      if (byReporter.size === 0) this.strangers.delete(gone);
    }
  }
}

/** One key for the views holding the same agents, whatever their order. */
function viewKey(view: Iterable<string>): string {
  return [...view].sort().join("\n");
}
