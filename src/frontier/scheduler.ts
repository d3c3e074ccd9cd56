import { setMaxListeners } from "node:events";
import { type Clock, systemClock, type TimerHandle } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { ReadyHosts } from "./ready-hosts.js";

/** How a host visit ended. */
export type VisitOutcome =
  /** The host's queue is empty. */
  | { readonly kind: "drained" }
  /** The visit used its quantum; the host goes to the back of the line if it still has work. */
  | { readonly kind: "yielded" }
  /** The host cannot be crawled before `untilMs`, for `reason`. */
  | { readonly kind: "parked"; readonly untilMs: number; readonly reason: WaitReason };

/**
 * Why a host with queued URLs waits: its robots.txt is unavailable and asked for again later, a fetch
 * that may pass is retried later, its server answered 429 or 503, its robots.txt's Crawl-delay or this
 * agent's own delay spaces its requests by more than a moment, it is held for a crashed previous owner
 * (the takeover grace), it is being handed over by the agent that crawled it before, or its visit
 * failed unexpectedly.
 */
export type WaitReason =
  | "robots"
  | "retry"
  | "throttled"
  | "crawl-delay"
  | "polite"
  | "held"
  | "hand-over"
  | "error";

/** Hosts waiting for one reason, and the soonest one's time. */
export interface WaitingHosts {
  readonly reason: WaitReason;
  readonly hosts: number;
  /** When the first of them is visited again (clock ms). */
  readonly nextAtMs: number;
}

/** Options of a {@link HostScheduler}. */
export interface HostSchedulerOptions {
  /**
   * Hosts visited at once (one worker each).
   * @default 256
   */
  maxActiveHosts?: number;
  /**
   * The queue length a host not visited yet counts as when slots are handed out (see ready-hosts.ts):
   * the agent passes its visit quantum.
   * @default 64
   */
  unvisitedRank?: number;
  /**
   * Hosts marked ready wait for {@link HostScheduler.beginVisits} before any is visited (an agent
   * begins once its state is read back and, in a cluster, it has joined: no fetch before it knows its
   * view and the cluster's blacklist).
   * @default false
   */
  deferVisits?: boolean;
}

/** What a {@link HostScheduler} needs. */
export interface HostSchedulerDeps {
  /** Visits one host: fetches its queued URLs one at a time, politely. */
  readonly visit: (host: string, signal: AbortSignal) => Promise<VisitOutcome>;
  /** True when `host` has URLs waiting. */
  readonly hasWork: (host: string) => boolean;
  /**
   * How many URLs `host` has waiting: hosts with longer queues are visited first (see ready-hosts.ts).
   * Absent: first come, first served.
   */
  readonly queueLength?: (host: string) => number;
  /**
   * True while nothing of `host` was fetched yet: such hosts get a slot first, since their first pages
   * tell how much they hold (with {@link queueLength} only).
   */
  readonly unvisited?: (host: string) => boolean;
  /** Called when a visit fails unexpectedly (a bug or a storage failure). */
  readonly onVisitError: (host: string, error: unknown) => void;
  readonly clock?: Clock;
}

/** @default of {@link HostSchedulerOptions.unvisitedRank}. */
export const DEFAULT_UNVISITED_RANK = 64;

/** @default of {@link HostSchedulerOptions.maxActiveHosts}. */
export const DEFAULT_MAX_ACTIVE_HOSTS = 256;

/**
 * Decides which hosts are visited now. A host has at most one visit at a time, so it never sees two
 * requests at once; up to `maxActiveHosts` hosts are visited in parallel; hosts waiting for a slot are
 * served longest queue first (first come, first served among queues of about the same length; hosts not
 * visited yet before all but the hosts known to be long), and a visit that used its quantum waits again with its queue's new length.
 */
export class HostScheduler {
  private maxActiveHosts: number;
  private readonly clock: Clock;
  private readonly ready: ReadyHosts;
  private readonly active = new Map<string, Promise<void>>();
  private readonly parked = new Map<string, { timer: TimerHandle; reason: WaitReason; untilMs: number }>();
  private readonly abort = new AbortController();
  /** Aborted at a pause; a new one at the resume (see {@link pausedSignal}). */
  private pauseAbort = new AbortController();
  private paused = false;
  private stopped = false;
  /** True until {@link beginVisits}, for a scheduler made with `deferVisits`. */
  private deferred: boolean;

  constructor(
    options: HostSchedulerOptions,
    private readonly deps: HostSchedulerDeps,
  ) {
    this.maxActiveHosts = options.maxActiveHosts ?? DEFAULT_MAX_ACTIVE_HOSTS;
    if (!Number.isInteger(this.maxActiveHosts) || this.maxActiveHosts < 1) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `maxActiveHosts must be a positive integer, got ${this.maxActiveHosts}`,
      );
    }
    this.deferred = options.deferVisits ?? false;
    this.ready = new ReadyHosts(options.unvisitedRank ?? DEFAULT_UNVISITED_RANK);
    this.clock = deps.clock ?? systemClock;
    // Every active visit listens on this signal.
    setMaxListeners(0, this.abort.signal);
  }

  /** Tells the scheduler `host` has work; it is visited when a slot is free. */
  markReady(host: string): void {
    if (this.stopped || this.active.has(host) || this.ready.has(host) || this.parked.has(host)) return;
    if (this.deps.queueLength && this.deps.unvisited?.(host)) this.ready.addUnvisited(host);
    else this.ready.set(host, this.queueLength(host));
    this.pump();
  }

  /** Tells the scheduler `host`'s queue grew: a host waiting for a slot moves up when it is longer. */
  queueGrew(host: string): void {
    if (this.ready.has(host)) this.ready.set(host, this.queueLength(host));
  }

  /**
   * Wakes now the hosts parked for one of `reasons`, because what they waited for may have changed (a
   * view change ends holds and hand-overs): each is visited again if it has work (and parks again if it
   * must still wait), and is forgotten if not.
   */
  wakeParked(reasons: ReadonlySet<WaitReason>): void {
    for (const [host, parked] of this.parked) {
      if (!reasons.has(parked.reason)) continue;
      this.clock.clearTimeout(parked.timer);
      this.parked.delete(host);
      if (this.deps.hasWork(host)) this.markReady(host);
    }
  }

  /** Hosts being visited now. */
  get activeHosts(): number {
    return this.active.size;
  }

  /** Hosts waiting for a slot. */
  get readyHosts(): number {
    return this.ready.size;
  }

  /** Visit slots no host holds or waits for: hosts that could start now if there were any. */
  get spareSlots(): number {
    return Math.max(0, this.maxActiveHosts - this.active.size - this.ready.size);
  }

  /**
   * The queue length the next host to get a slot has at least (a power of two; 0 when none waits): the
   * scheduler serves the longest queues first.
   */
  get longestReadyQueue(): number {
    return this.ready.longestClassFloor;
  }

  /** Hosts waiting for a time (e.g. robots.txt retry). */
  get parkedHosts(): number {
    return this.parked.size;
  }

  /** Parked hosts by reason, with the soonest one's time, most hosts first. */
  waiting(): WaitingHosts[] {
    const byReason = new Map<WaitReason, { hosts: number; nextAtMs: number }>();
    for (const { reason, untilMs } of this.parked.values()) {
      const seen = byReason.get(reason);
      if (seen) {
        seen.hosts++;
        seen.nextAtMs = Math.min(seen.nextAtMs, untilMs);
      } else byReason.set(reason, { hosts: 1, nextAtMs: untilMs });
    }
    return [...byReason]
      .map(([reason, figures]) => ({ reason, ...figures }))
      .sort((a, b) => b.hosts - a.hosts);
  }

  /** True when no host is active, ready or parked. */
  get isIdle(): boolean {
    return this.active.size === 0 && this.ready.size === 0 && this.parked.size === 0;
  }

  /** Stops starting new visits (running ones finish their current fetch and yield). */
  pause(): void {
    this.paused = true;
    this.pauseAbort.abort(new UbiError(ErrorCode.Stopped, "paused"));
  }

  /** Begins visiting the hosts marked ready (see {@link HostSchedulerOptions.deferVisits}). */
  beginVisits(): void {
    this.deferred = false;
    this.pump();
  }

  /** Starts visits again after {@link pause}; not after {@link stop}. */
  resume(): void {
    if (this.stopped) return;
    if (this.paused) this.pauseAbort = new AbortController();
    this.paused = false;
    this.pump();
  }

  /**
   * A signal aborted once visits are paused (aborted already while they are; a new one after the
   * resume): the waits a pause ends — for an address's slot, for a robots.txt answer — listen on it.
   */
  get pausedSignal(): AbortSignal {
    return this.pauseAbort.signal;
  }

  /**
   * A signal aborted once {@link stop} ends the visits (at its grace's end, at once without one): the
   * waits a pause holds — never resumed after a stop — listen on it.
   */
  get stoppedSignal(): AbortSignal {
    return this.abort.signal;
  }

  /**
   * Changes how many hosts are visited at once: more start now; with fewer, running visits end as
   * they do and no new one starts until the count is under the new limit.
   */
  setMaxActiveHosts(maxActiveHosts: number): void {
    if (!Number.isInteger(maxActiveHosts) || maxActiveHosts < 1) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `maxActiveHosts must be a positive integer, got ${maxActiveHosts}`,
      );
    }
    this.maxActiveHosts = maxActiveHosts;
    this.pump();
  }

  /** True while paused. */
  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Starts no more visits and waits for the running ones: they end after their current fetch, or are
   * aborted after `graceMs` (at once when 0). Idempotent.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopped = true;
    // Visits see the pause and end after their current fetch; past the grace period they are aborted.
    // The waits a pause ends end too: a robots.txt answer waited for listens to the pause alone, and its
    // address's slot may never come once the cluster is stopping (a stop hung on it for good).
    this.pause();
    const abort = () => this.abort.abort(new UbiError(ErrorCode.Stopped, "scheduler stopped"));
    const graceTimer = graceMs > 0 ? this.clock.setTimeout(abort, graceMs) : undefined;
    if (graceTimer === undefined) abort();
    for (const { timer } of this.parked.values()) this.clock.clearTimeout(timer);
    this.parked.clear();
    // Hosts waiting for a slot will never get one: drop them, so isIdle holds after stop.
    this.ready.clear();
    await Promise.allSettled([...this.active.values()]);
    if (graceTimer !== undefined) this.clock.clearTimeout(graceTimer);
    abort();
  }

  private pump(): void {
    while (!this.paused && !this.stopped && !this.deferred && this.active.size < this.maxActiveHosts) {
      const host = this.ready.shift();
      if (host === undefined) return;
      this.start(host);
    }
  }

  /**
   * Marks `host` active before its visit starts: a visit that throws synchronously then cannot leave
   * it stuck as active, and a markReady(host) from inside visit() is ignored.
   */
  private start(host: string): void {
    let settle!: () => void;
    this.active.set(
      host,
      new Promise<void>((resolve) => {
        settle = resolve;
      }),
    );
    void this.run(host).finally(settle);
  }

  private queueLength(host: string): number {
    return this.deps.queueLength?.(host) ?? 0;
  }

  private async run(host: string): Promise<void> {
    let outcome: VisitOutcome = { kind: "drained" };
    try {
      outcome = await this.deps.visit(host, this.abort.signal);
    } catch (error) {
      if (!this.stopped) this.deps.onVisitError(host, error);
      outcome = { kind: "parked", untilMs: this.clock.now() + 5_000, reason: "error" };
    } finally {
      this.active.delete(host);
    }
    if (this.stopped) return;
    if (outcome.kind === "parked") {
      const timer = this.clock.setTimeout(
        () => {
          this.parked.delete(host);
          if (this.deps.hasWork(host)) this.markReady(host);
        },
        Math.max(0, outcome.untilMs - this.clock.now()),
      );
      this.parked.set(host, { timer, reason: outcome.reason, untilMs: outcome.untilMs });
    } else if (this.deps.hasWork(host)) {
      this.markReady(host);
    }
    this.pump();
  }
}
