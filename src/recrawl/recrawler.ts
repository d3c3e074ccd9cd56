import type { Clock, TimerHandle } from "../clock.js";
import type { FetchResult } from "../fetching/index.js";
import type { Logger } from "../logging/index.js";
import type { QueuedUrl, StateOp, StateReader } from "../storage/index.js";
import { pageOp, pageValue, pageValues, pageValuesOf } from "../storage/index.js";
import {
  afterVisit,
  decodeHistory,
  encodeHistory,
  laterHistory,
  type PageChange,
  type PageHistory,
  type StoredCapture,
} from "./page-history.js";
import { type RecrawlOptions, revisitsEndAt } from "./recrawl-options.js";
import { type BudgetSharing, FOLLOW_BUDGET_EVERY_MS, type RevisitPolicy } from "./revisit-policy.js";
import { type PlannedRevisit, RevisitTimetable } from "./revisit-timetable.js";
import { ShareFreshness } from "./share-freshness.js";

/** What a host visit tells the recrawl of each page it fetches (the host visitor's narrow interface). */
export interface PageRevisits {
  /** The history of a page queued again as a revisit (undefined when none is kept). */
  history(host: string, url: string): Promise<PageHistory | undefined>;
  /**
   * A page's fetch got an answer and was archived (`change` and `capture` as the archive found them,
   * `previous` its history before): its history is written at the next commit, its next visit planned.
   * Returns the new history.
   */
  visited(
    host: string,
    entry: QueuedUrl,
    result: FetchResult,
    archived: { readonly change?: PageChange; readonly capture?: StoredCapture },
    previous: PageHistory | undefined,
  ): PageHistory;
  /**
   * A revisit of the page `history` records failed for good at `nowMs` (its server unreachable through
   * every attempt): the page keeps its history and is planned again from now, at the next commit.
   */
  missed(host: string, history: PageHistory, nowMs: number): void;
}

/** What a {@link Recrawler} needs. */
export interface RecrawlerDeps {
  /** The state, whose page histories the recrawler reads (`src/storage/state/page-records.ts`). */
  readonly store: StateReader;
  /** The agent's group commit: histories ride in the same batches as the fetches they record. */
  readonly committer: { add(op: StateOp): void; commit(): Promise<void> };
  readonly fingerprint: (url: string) => bigint;
  /** Queues a due page again in its host's queue, as a revisit (durable at the next commit). */
  readonly queue: (url: string, depth: number, host: string) => void;
  /** True while this agent owns `host`. */
  readonly owns: (host: string) => boolean;
  readonly policy: RevisitPolicy;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Counters of a {@link Recrawler} since it started. */
export interface RecrawlCounts {
  /** Due pages queued again. */
  queued: number;
  /** Revisits answered (those of pages with no payload to compare, error pages, included). */
  revisited: number;
  /** Revisits answered `304 Not Modified`. */
  notModified: number;
  /** Revisits answered 200 with the same payload as last time. */
  unchanged: number;
  /** Revisits that found the page changed. */
  changed: number;
  /** Revisits that failed for good (planned again). */
  missed: number;
  /** Page histories taken in with hosts handed over (kept, or this agent's later one kept instead). */
  received: number;
}

/** {@link RecrawlCounts} with the plans pending: what stats, metrics and progress lines report. */
export interface RevisitFigures extends Readonly<RecrawlCounts> {
  /** Revisits planned (pages with a next fetch time). */
  readonly planned: number;
  /** How late the earliest planned revisit is, ms (0: none is due yet). */
  readonly overdueMs: number;
  /**
   * The estimated freshness of this agent's share now (see share-freshness.ts): the expected share of
   * its pages still current, 0 … 1 (0 while {@link freshnessPages} is 0: no estimate yet).
   */
  readonly estimatedFreshness: number;
  /** The sampled pages {@link estimatedFreshness} is computed over: those with a change-rate estimate or hint. */
  readonly freshnessPages: number;
  /** The revisits a second spent now: its own budget, or its part of the cluster's (0: `fixed`). */
  readonly budget: number;
  /** The pages {@link budget} is spent on (0: `fixed`). */
  readonly budgetPages: number;
}

/** The page histories of one host handed over (see {@link Recrawler.adopt}). */
export interface HandedHistories {
  readonly host: string;
  readonly histories: readonly PageHistory[];
}

/**
 * A plan due while its host is another agent's stays in the store: it is looked at again after this
 * long, then twice as long each time, up to {@link NOT_OWNED_MAX_WAIT_MS}, until it is queued (the host
 * is this agent's again: a hand-over that never happened, a new owner gone) or found superseded (the
 * host was handed over, its plans cleared here).
 */
const NOT_OWNED_FIRST_WAIT_MS = 1000;
/** The longest wait of {@link NOT_OWNED_FIRST_WAIT_MS}. */
const NOT_OWNED_MAX_WAIT_MS = 5 * 60_000;

/**
 * Continuous crawling: keeps each fetched page's history durably (with its done record, in the same
 * commit), plans its next visit with the policy, and when it is due queues it again in its host's
 * queue, where the usual politeness, robots.txt, blacklist and limits apply. Plans past the horizon are
 * not made, and at the horizon the plans not yet queued are dropped (a plan the budget's moves pushed
 * past it, or one waiting for its host), so a crawl with a horizon ends there.
 */
export class Recrawler implements PageRevisits {
  private readonly planned: RevisitTimetable;
  /** The timer that asks the policy every {@link FOLLOW_BUDGET_EVERY_MS} whether its budget moved. */
  private budgetTimer: TimerHandle | undefined;
  /** The timer that drops the plans left at the horizon. */
  private horizonTimer: TimerHandle | undefined;
  /** Due pages being read back and queued. */
  private moving = 0;
  /** The last of the store reads and writes that must not interleave (queuing, adopting, releasing). */
  private serial: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** No visit is planned after this time, ms since the epoch. */
  private readonly horizonAtMs: number;
  /** A sample of the pages kept here, for the estimated freshness of the share. */
  private readonly freshness = new ShareFreshness();
  readonly counts: RecrawlCounts = {
    queued: 0,
    revisited: 0,
    notModified: 0,
    unchanged: 0,
    changed: 0,
    missed: 0,
    received: 0,
  };

  constructor(
    options: Pick<RecrawlOptions, "horizonMs" | "untilMs">,
    private readonly deps: RecrawlerDeps,
  ) {
    this.horizonAtMs = revisitsEndAt(options, deps.clock.now());
    this.planned = new RevisitTimetable(deps.clock, () => {
      this.exclusive(() => this.queueDue()).catch((error: unknown) => {
        deps.logger.error({ event: "recrawl-failed", err: error }, "queuing due revisits failed");
      });
    });
  }

  /** Reads the planned revisits from the store (at startup) and arms the timer. */
  async load(): Promise<void> {
    for await (const { host, fingerprint, value } of pageValues(this.deps.store)) {
      const history = decodeHistory(value);
      if (history.nextAtMs === undefined) continue;
      this.planned.add(history.nextAtMs, host, fingerprint);
      // Only planned pages: a host handed away keeps its histories here, without plans (its pages are
      // another agent's share); a page queued for its revisit is noted again once fetched.
      this.deps.policy.note(policyKey(host, fingerprint), history);
      this.freshness.note(host, fingerprint, history);
    }
    this.planned.arm();
    // A policy with a budget (not `fixed`): its plans follow the budget's moves.
    if (this.deps.policy.sharing().budget > 0) this.followBudget();
    if (Number.isFinite(this.horizonAtMs)) {
      this.horizonTimer = this.deps.clock.setTimeout(
        () => {
          this.horizonTimer = undefined;
          this.exclusive(() => this.queueDue()).catch((error: unknown) => {
            this.deps.logger.error({ event: "recrawl-failed", err: error }, "ending revisits failed");
          });
        },
        // Past it by a millisecond: a plan made for the horizon itself is queued, not dropped.
        Math.max(0, this.horizonAtMs - this.deps.clock.now()) + 1,
      );
    }
  }

  /** Asks the policy, every {@link FOLLOW_BUDGET_EVERY_MS} until stopped, whether its budget moved. */
  private followBudget(): void {
    this.budgetTimer = this.deps.clock.setTimeout(() => {
      this.budgetTimer = undefined;
      if (this.stopped) return;
      const ratios = this.deps.policy.followBudget();
      if (ratios !== undefined)
        this.planned.rescale((plan) => ratios.get(policyKey(plan.host, plan.fingerprint)));
      this.followBudget();
    }, FOLLOW_BUDGET_EVERY_MS);
  }

  /** Revisits planned and not yet queued (each due page is one until it is queued). */
  get plannedRevisits(): number {
    return this.planned.length + this.moving;
  }

  /** The counts since this start, the plans pending, how late the earliest is, and the share's freshness. */
  figures(): RevisitFigures {
    const estimate = this.freshness.estimate(this.deps.clock.now());
    return {
      ...this.counts,
      planned: this.plannedRevisits,
      overdueMs: this.overdueMs(),
      estimatedFreshness: estimate?.freshness ?? 0,
      freshnessPages: estimate?.pages ?? 0,
      budget: this.deps.policy.spending(),
      budgetPages: this.deps.policy.sharing().pages,
    };
  }

  /**
   * What its policy shares its revisit budget among (cheap: read at every heartbeat); nothing past the
   * horizon, where no revisit is planned: its pages take no share of a cluster's budgets, and its
   * budget is not counted in them.
   */
  sharing(): BudgetSharing {
    if (this.deps.clock.now() > this.horizonAtMs) return { pages: 0, budget: 0 };
    return this.deps.policy.sharing();
  }

  /** How late the earliest planned revisit is, ms: 0 when none is due yet (cheap: the heap's head). */
  overdueMs(): number {
    return this.planned.overdueMs();
  }

  /** See {@link PageRevisits.history}. */
  history(host: string, url: string): Promise<PageHistory | undefined> {
    return this.readHistory(host, this.deps.fingerprint(url));
  }

  /** See {@link PageRevisits.visited}. */
  visited(
    host: string,
    entry: QueuedUrl,
    result: FetchResult,
    archived: { readonly change?: PageChange; readonly capture?: StoredCapture },
    previous: PageHistory | undefined,
  ): PageHistory {
    const fingerprint = this.deps.fingerprint(entry.url);
    const history = afterVisit(previous, {
      url: entry.url,
      depth: entry.depth,
      result,
      ...(archived.change === undefined ? {} : { change: archived.change }),
      ...(archived.capture === undefined ? {} : { capture: archived.capture }),
      ...(entry.lastmod === undefined ? {} : { sitemapLastmod: entry.lastmod }),
      ...(entry.changefreq === undefined ? {} : { sitemapChangefreq: entry.changefreq }),
    });
    if (previous !== undefined) this.counts.revisited++;
    if (archived.change === "not-modified") this.counts.notModified++;
    else if (archived.change === "unchanged") this.counts.unchanged++;
    else if (archived.change === "changed") this.counts.changed++;
    return this.plan(host, fingerprint, history, result.startedAtMs);
  }

  /** See {@link PageRevisits.missed}. */
  missed(host: string, history: PageHistory, nowMs: number): void {
    this.counts.missed++;
    const { nextAtMs: _nextAtMs, ...kept } = history;
    this.plan(host, this.deps.fingerprint(history.url), kept, nowMs);
  }

  /** Plans the next visit of a page from `fromMs` (none past the horizon), and writes its history. */
  private plan(host: string, fingerprint: bigint, history: PageHistory, fromMs: number): PageHistory {
    const planned = this.withPlan(policyKey(host, fingerprint), history, fromMs);
    this.freshness.note(host, fingerprint, planned);
    if (planned.nextAtMs !== undefined) {
      this.planned.add(planned.nextAtMs, host, fingerprint);
      this.planned.arm();
    }
    this.deps.committer.add(pageOp(host, fingerprint, encodeHistory(planned)));
    return planned;
  }

  /** `history` with its next visit planned by the policy from `fromMs`, or as it is past the horizon. */
  private withPlan(key: string, history: PageHistory, fromMs: number): PageHistory {
    const atMs = fromMs + this.deps.policy.nextIntervalMs(key, history);
    return atMs <= this.horizonAtMs && !this.stopped ? { ...history, nextAtMs: atMs } : history;
  }

  private async readHistory(host: string, fingerprint: bigint): Promise<PageHistory | undefined> {
    const value = await pageValue(this.deps.store, host, fingerprint);
    return value === undefined ? undefined : decodeHistory(value);
  }

  /** Runs `work` after every read-and-write of the store begun before it (they would overwrite each other). */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.serial.then(work);
    this.serial = result.catch(() => {});
    return result;
  }

  /**
   * The histories of `host`'s pages kept here, after the first `skip`, in a stable order: what a
   * hand-over of the host sends, plans included (their `nextAtMs`).
   */
  async *historiesOf(host: string, skip: number): AsyncGenerator<PageHistory> {
    for await (const { value } of pageValuesOf(this.deps.store, host, skip)) yield decodeHistory(value);
  }

  /**
   * Takes in the page histories of hosts handed to this agent: of each page's history here and the
   * one handed over, the later visit's is kept ({@link laterHistory}), with its plan; one without a
   * plan (queued for its revisit at the sender, or released there) is planned from its last visit, so
   * a page handed over is never left unplanned (a revisit queued here meanwhile gives way to the plan:
   * see the host visitor). Written in one commit, with whatever the caller added before (the hosts'
   * done URLs), then planned. Returns the histories received.
   */
  adopt(handed: readonly HandedHistories[]): Promise<number> {
    return this.exclusive(async () => {
      const chosen = new Map<string, { host: string; fingerprint: bigint; history: PageHistory }>();
      for (const { host, histories } of handed) {
        for (const history of histories) {
          const fingerprint = this.deps.fingerprint(history.url);
          const key = policyKey(host, fingerprint);
          const kept = chosen.get(key)?.history ?? (await this.readHistory(host, fingerprint));
          let winner = laterHistory(kept, history);
          if (winner.nextAtMs === undefined) winner = this.withPlan(key, winner, winner.lastAtMs);
          else if (winner.nextAtMs > this.horizonAtMs || this.stopped) {
            const { nextAtMs: _beyond, ...unplanned } = winner;
            winner = unplanned;
          }
          chosen.set(key, { host, fingerprint, history: winner });
        }
      }
      for (const { host, fingerprint, history } of chosen.values()) {
        this.deps.committer.add(pageOp(host, fingerprint, encodeHistory(history)));
      }
      await this.deps.committer.commit();
      // Planned once durable: a plan read back before would not find its time in the store.
      for (const { host, fingerprint, history } of chosen.values()) {
        if (history.nextAtMs !== undefined) this.planned.add(history.nextAtMs, host, fingerprint);
        this.deps.policy.note(policyKey(host, fingerprint), history);
        this.freshness.note(host, fingerprint, history);
      }
      this.planned.arm();
      const received = handed.reduce((sum, { histories }) => sum + histories.length, 0);
      this.counts.received += received;
      return received;
    });
  }

  /**
   * `host` was handed to another agent, its histories with it: its pages' plans here are cleared (at
   * the caller's next commit), so this agent never queues them, now or once the host comes back (it
   * comes back with the later histories), and the policy forgets them. Returns the plans cleared.
   */
  release(host: string): Promise<number> {
    return this.exclusive(async () => {
      // In turn with adoptions: one of this host queued before must not put its pages back after.
      this.freshness.forget(host);
      let cleared = 0;
      for await (const { fingerprint, value } of pageValuesOf(this.deps.store, host)) {
        this.deps.policy.forget(policyKey(host, fingerprint));
        const { nextAtMs, ...history } = decodeHistory(value);
        if (nextAtMs === undefined) continue;
        this.deps.committer.add(pageOp(host, fingerprint, encodeHistory(history)));
        cleared++;
      }
      return cleared;
    });
  }

  /** Stops planning and queuing revisits. */
  stop(): void {
    this.stopped = true;
    this.planned.stop();
    if (this.budgetTimer !== undefined) this.deps.clock.clearTimeout(this.budgetTimer);
    this.budgetTimer = undefined;
    if (this.horizonTimer !== undefined) this.deps.clock.clearTimeout(this.horizonTimer);
    this.horizonTimer = undefined;
  }

  /**
   * Queues every page due by now again, its plan cleared in the same commit as its queue entry (so a
   * crash neither loses nor doubles it). A plan superseded since (the page visited meanwhile, or a
   * history handed over) is skipped, and so is a plan made twice (adopted again with its host). Past
   * the horizon every plan is taken, due or not, and cleared without queuing its page.
   */
  private async queueDue(): Promise<void> {
    const ended = this.deps.clock.now() > this.horizonAtMs;
    const due = new Map<string, PlannedRevisit>();
    for (const plan of this.planned.takeDue(ended ? Number.POSITIVE_INFINITY : undefined))
      due.set(`${plan.host} ${plan.fingerprint} ${plan.atMs}`, plan);
    this.moving += due.size;
    let left = due.size;
    let queued = 0;
    let dropped = 0;
    try {
      for (const plan of due.values()) {
        const value = await pageValue(this.deps.store, plan.host, plan.fingerprint);
        this.moving--;
        left--;
        if (this.stopped || value === undefined) continue;
        const { nextAtMs, ...history } = decodeHistory(value);
        // Visited since it was planned, or handed over with its host.
        if (nextAtMs !== plan.atMs) continue;
        if (ended) {
          this.deps.committer.add(pageOp(plan.host, plan.fingerprint, encodeHistory(history)));
          dropped++;
          continue;
        }
        if (!this.deps.owns(plan.host)) {
          // Another agent's host now: its plan stays in the store, looked at again later.
          const waitMs = Math.min(NOT_OWNED_MAX_WAIT_MS, Math.max(NOT_OWNED_FIRST_WAIT_MS, plan.waitMs * 2));
          this.planned.postpone(plan, waitMs);
          continue;
        }
        this.deps.committer.add(pageOp(plan.host, plan.fingerprint, encodeHistory(history)));
        this.deps.queue(history.url, history.depth, plan.host);
        queued++;
      }
    } finally {
      this.moving -= left;
    }
    this.counts.queued += queued;
    if (queued > 0 || dropped > 0) await this.deps.committer.commit();
    if (queued > 0)
      this.deps.logger.debug({ event: "revisits-queued", urls: queued }, `${queued} pages due again, queued`);
    if (dropped > 0) {
      this.deps.logger.info(
        { event: "revisits-ended", urls: dropped },
        `past the horizon: ${dropped} planned revisits dropped`,
      );
    }
    this.planned.arm();
  }
}

/** The policy's key of a page: its host and its URL's fingerprint. */
function policyKey(host: string, fingerprint: bigint): string {
  return `${host} ${fingerprint}`;
}
