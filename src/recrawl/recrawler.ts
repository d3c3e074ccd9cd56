import { Heap } from "heap-js";
import type { Clock, TimerHandle } from "../clock.js";
import type { FetchResult } from "../fetching/index.js";
import type { Logger } from "../logging/index.js";
import type { QueuedUrl, StateOp, StateStore } from "../storage/index.js";
import {
  afterVisit,
  decodeHistory,
  encodeHistory,
  type PageChange,
  type PageHistory,
  type StoredCapture,
} from "./page-history.js";
import type { RevisitPolicy } from "./revisit-policy.js";

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
  readonly store: Pick<StateStore, "pageValue" | "pageValues">;
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
}

/** {@link RecrawlCounts} with the plans pending: what stats, metrics and progress lines report. */
export interface RevisitFigures extends Readonly<RecrawlCounts> {
  /** Revisits planned (pages with a next fetch time). */
  readonly planned: number;
  /** How late the earliest planned revisit is, ms (0: none is due yet). */
  readonly overdueMs: number;
}

/** A planned revisit: only its page's key (the history is read back from the store when it is due). */
interface Planned {
  readonly atMs: number;
  readonly host: string;
  readonly fingerprint: bigint;
}

/**
 * Continuous crawling: keeps each fetched page's history durably (with its done record, in the same
 * commit), plans its next visit with the policy, and when it is due queues it again in its host's
 * queue, where the usual politeness, robots.txt, blacklist and limits apply. Plans past the horizon are
 * not made, so a crawl with a horizon ends.
 */
export class Recrawler implements PageRevisits {
  private readonly planned = new Heap<Planned>((a, b) => a.atMs - b.atMs);
  private timer: TimerHandle | undefined;
  private timerAtMs = Number.POSITIVE_INFINITY;
  /** Due pages being read back and queued. */
  private moving = 0;
  private stopped = false;
  /** No visit is planned after this time, ms since the epoch. */
  private readonly horizonAtMs: number;
  readonly counts: RecrawlCounts = {
    queued: 0,
    revisited: 0,
    notModified: 0,
    unchanged: 0,
    changed: 0,
    missed: 0,
  };

  constructor(
    options: { readonly horizonMs?: number },
    private readonly deps: RecrawlerDeps,
  ) {
    this.horizonAtMs =
      options.horizonMs === undefined ? Number.POSITIVE_INFINITY : deps.clock.now() + options.horizonMs;
  }

  /** Reads the planned revisits from the store (at startup) and arms the timer. */
  async load(): Promise<void> {
    for await (const { host, fingerprint, value } of this.deps.store.pageValues()) {
      const { nextAtMs } = decodeHistory(value);
      if (nextAtMs !== undefined) this.planned.push({ atMs: nextAtMs, host, fingerprint });
    }
    this.arm();
  }

  /** Revisits planned and not yet queued (each due page is one until it is queued). */
  get plannedRevisits(): number {
    return this.planned.length + this.moving;
  }

  /** The counts since this start, the plans pending and how late the earliest is. */
  figures(): RevisitFigures {
    return { ...this.counts, planned: this.plannedRevisits, overdueMs: this.overdueMs() };
  }

  /** How late the earliest planned revisit is, ms: 0 when none is due yet (cheap: the heap's head). */
  overdueMs(): number {
    const next = this.planned.peek();
    return next === undefined ? 0 : Math.max(0, this.deps.clock.now() - next.atMs);
  }

  /** See {@link PageRevisits.history}. */
  async history(host: string, url: string): Promise<PageHistory | undefined> {
    const value = await this.deps.store.pageValue(host, this.deps.fingerprint(url));
    return value === undefined ? undefined : decodeHistory(value);
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
    let planned = history;
    const atMs = fromMs + this.deps.policy.nextIntervalMs(`${host} ${fingerprint}`, history);
    if (atMs <= this.horizonAtMs && !this.stopped) {
      planned = { ...history, nextAtMs: atMs };
      this.planned.push({ atMs, host, fingerprint });
      this.arm();
    }
    this.deps.committer.add({ kind: "page", host, fingerprint, value: encodeHistory(planned) });
    return planned;
  }

  /** Stops planning and queuing revisits. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sets the timer for the earliest plan, unless one is set for then or earlier. */
  private arm(): void {
    const next = this.planned.peek();
    if (this.stopped || next === undefined || next.atMs >= this.timerAtMs) return;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timerAtMs = next.atMs;
    this.timer = this.deps.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAtMs = Number.POSITIVE_INFINITY;
        this.queueDue().catch((error: unknown) => {
          this.deps.logger.error({ event: "recrawl-failed", err: error }, "queuing due revisits failed");
        });
      },
      Math.max(0, next.atMs - this.deps.clock.now()),
    );
  }

  /**
   * Queues every page due by now again, its plan cleared in the same commit as its queue entry (so a
   * crash neither loses nor doubles it). A plan superseded since (the page visited meanwhile) is skipped.
   */
  private async queueDue(): Promise<void> {
    const now = this.deps.clock.now();
    const due: Planned[] = [];
    for (let next = this.planned.peek(); next !== undefined && next.atMs <= now; next = this.planned.peek()) {
      due.push(this.planned.pop() as Planned);
    }
    this.moving += due.length;
    let left = due.length;
    let queued = 0;
    try {
      for (const plan of due) {
        const value = await this.deps.store.pageValue(plan.host, plan.fingerprint);
        this.moving--;
        left--;
        if (this.stopped || value === undefined) continue;
        const { nextAtMs, ...history } = decodeHistory(value);
        // Visited since it was planned, or its host has another owner now (its plan stays in the store).
        if (nextAtMs !== plan.atMs || !this.deps.owns(plan.host)) continue;
        this.deps.committer.add({
          kind: "page",
          host: plan.host,
          fingerprint: plan.fingerprint,
          value: encodeHistory(history),
        });
        this.deps.queue(history.url, history.depth, plan.host);
        queued++;
      }
    } finally {
      this.moving -= left;
    }
    this.counts.queued += queued;
    if (queued > 0) {
      await this.deps.committer.commit();
      this.deps.logger.debug({ event: "revisits-queued", urls: queued }, `${queued} pages due again, queued`);
    }
    this.arm();
  }
}
