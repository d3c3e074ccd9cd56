import type { Clock, TimerHandle } from "../clock.js";
import { IP_START_SLACK_MS } from "./ip-grant.js";

/** How many asks an {@link IpWaitQueue} holds. */
export interface IpWaitQueueOptions {
  /** Asks held at one address at most: beyond it an ask is answered at once. */
  readonly maxHeldPerIp: number;
  /** Asks held at all addresses together at most. */
  readonly maxTotal: number;
}

/** What an {@link IpWaitQueue} needs. */
export interface IpWaitQueueDeps<T> {
  readonly clock: Clock;
  /**
   * Time to look at `ip`'s waiters again (a waiter's deadline came, or a wake-up asked for by
   * {@link IpWaitQueue.wakeAt}): the owner serves what it can with {@link IpWaitQueue.serve}.
   */
  readonly wake: (ip: string) => void;
  /** The answer of a waiter still waiting at its deadline. */
  readonly timedOut: (ip: string, agent: string) => T;
}

/** How the owner answers the first waiter at an address: with this, or not yet (it stays first). */
export type WaitDecision<T> = { readonly answer: T } | { readonly notBeforeMs: number } | undefined;

interface Waiter<T> {
  readonly agent: string;
  /** The start slack its ask asked for, ms (see `grantedStartSlack`). */
  readonly startSlackMs: number;
  readonly sinceMs: number;
  readonly untilMs: number;
  readonly deadline: TimerHandle;
  readonly resolve: (answer: T) => void;
}

interface Line<T> {
  readonly waiters: Waiter<T>[];
  wake?: TimerHandle;
}

/**
 * Asks held until they can be answered: one line per address, first come first served whoever asks,
 * each ask with a deadline on the injected clock, bounded per address and in all (beyond a bound, an ask
 * is not held: the caller answers it at once). It decides nothing itself: its owner says, for the first
 * waiter of a line, what the answer is now ({@link IpWaitQueue.serve}), and answers whole lines when it
 * stops being able to ({@link IpWaitQueue.drop}, {@link IpWaitQueue.close}). Nothing is held after
 * `close()`.
 */
export class IpWaitQueue<T> {
  private readonly lines = new Map<string, Line<T>>();
  private held = 0;
  private closed = false;

  constructor(
    private readonly options: IpWaitQueueOptions,
    private readonly deps: IpWaitQueueDeps<T>,
  ) {}

  /** Asks held now, at all addresses. */
  get size(): number {
    return this.held;
  }

  /** Asks held at `ip`. */
  waiting(ip: string): number {
    return this.lines.get(ip)?.waiters.length ?? 0;
  }

  /**
   * Holds `agent`'s ask at `ip` (for a slot whose request starts within `startSlackMs` of its grant) at
   * the end of its line, for `holdMs` at most: resolved by the owner through {@link serve}, or by
   * {@link IpWaitQueueDeps.timedOut} at the deadline. Undefined (not held) when a bound is reached or
   * the queue is closed.
   */
  wait(ip: string, agent: string, holdMs: number, startSlackMs = IP_START_SLACK_MS): Promise<T> | undefined {
    const line = this.lines.get(ip);
    if (this.closed || this.held >= this.options.maxTotal) return undefined;
    if ((line?.waiters.length ?? 0) >= this.options.maxHeldPerIp) return undefined;
    return new Promise<T>((resolve) => {
      const waiters = line?.waiters ?? this.open(ip).waiters;
      const deadline = this.deps.clock.setTimeout(() => this.deadlineOf(ip, waiter), holdMs);
      const now = this.deps.clock.now();
      const waiter: Waiter<T> = {
        agent,
        startSlackMs,
        sinceMs: now,
        untilMs: now + holdMs,
        deadline,
        resolve,
      };
      waiters.push(waiter);
      this.held++;
    });
  }

  /**
   * Answers `ip`'s waiters in order, as long as `decide` gives the first one an answer (given how long
   * it waited and may wait still, ms, and the start slack it asked for). `{ notBeforeMs }`: it stays
   * first, and the line wakes at that time; undefined: it stays first until the next call.
   */
  serve(
    ip: string,
    decide: (agent: string, waitedMs: number, leftMs: number, startSlackMs: number) => WaitDecision<T>,
  ): void {
    const line = this.lines.get(ip);
    if (!line) return;
    if (line.wake) this.deps.clock.clearTimeout(line.wake);
    line.wake = undefined;
    const now = this.deps.clock.now();
    for (let first = line.waiters[0]; first; first = line.waiters[0]) {
      const decision = decide(first.agent, now - first.sinceMs, first.untilMs - now, first.startSlackMs);
      if (decision === undefined) break;
      if ("notBeforeMs" in decision) {
        this.wakeAt(ip, decision.notBeforeMs);
        break;
      }
      this.remove(ip, line, first);
      first.resolve(decision.answer);
    }
  }

  /** Wakes `ip`'s line at `atMs` (see {@link IpWaitQueueDeps.wake}), unless served before. */
  wakeAt(ip: string, atMs: number): void {
    const line = this.lines.get(ip);
    if (!line) return;
    if (line.wake) this.deps.clock.clearTimeout(line.wake);
    line.wake = this.deps.clock.setTimeout(
      () => {
        line.wake = undefined;
        this.deps.wake(ip);
      },
      Math.max(0, atMs - this.deps.clock.now()),
    );
  }

  /** Answers every waiter at `ip` (only `agent`'s, when given) with `answer`, in order. */
  drop(ip: string, answer: T, agent?: string): void {
    const line = this.lines.get(ip);
    if (!line) return;
    for (const waiter of [...line.waiters]) {
      if (agent !== undefined && waiter.agent !== agent) continue;
      this.remove(ip, line, waiter);
      waiter.resolve(answer);
    }
  }

  /** Answers every waiter of `agent`, at every address, with `answer`. */
  dropAgent(agent: string, answer: T): void {
    for (const ip of [...this.lines.keys()]) this.drop(ip, answer, agent);
  }

  /** Answers every waiter with `answer`, and holds nothing from now on. */
  close(answer: T): void {
    this.closed = true;
    for (const ip of [...this.lines.keys()]) this.drop(ip, answer);
  }

  private open(ip: string): Line<T> {
    const line: Line<T> = { waiters: [] };
    this.lines.set(ip, line);
    return line;
  }

  /** A waiter's deadline: its owner serves the line first (a slot may have lapsed meanwhile). */
  private deadlineOf(ip: string, waiter: Waiter<T>): void {
    this.deps.wake(ip);
    const line = this.lines.get(ip);
    if (!line?.waiters.includes(waiter)) return;
    this.remove(ip, line, waiter);
    waiter.resolve(this.deps.timedOut(ip, waiter.agent));
  }

  private remove(ip: string, line: Line<T>, waiter: Waiter<T>): void {
    const at = line.waiters.indexOf(waiter);
    if (at < 0) return;
    line.waiters.splice(at, 1);
    this.held--;
    this.deps.clock.clearTimeout(waiter.deadline);
    if (line.waiters.length > 0) return;
    if (line.wake) this.deps.clock.clearTimeout(line.wake);
    this.lines.delete(ip);
  }
}
