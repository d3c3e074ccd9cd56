import { type Clock, sleep } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { waitInLine } from "./abortable-wait.js";

/** Addresses remembered at which a sweep first drops those whose last start is older than their delay. */
const FIRST_SWEEP_AT = 1024;

/**
 * The least time between the starts of two requests to one IP address (`--ip-delay-ms`), raised for an
 * address whose host asked for a longer robots.txt Crawl-delay. A start is marked when it happens, not
 * reserved ahead: a wait that runs late never brings two starts closer. A request's start is when it is
 * written to the server (`sent`), which a new connection's set-up, a busy event loop or the bandwidth
 * bound may put well after its turn: until then the next request at the address waits, and the delay
 * counts from then. (Counted from the turn, a request held up on its way — 13–17 ms for a first request
 * on a new connection, more on a loaded machine — reached the server that much closer to the next one,
 * which went out on a connection kept alive at once.)
 */
export class IpSpacing {
  private readonly lastStartMs = new Map<string, number>();
  /** Requests whose turn came and that were not written yet, by address. */
  private readonly unsent = new Map<string, number>();
  /** Called when a request at the address is written (or given up unwritten). */
  private readonly sentWaiters = new Map<string, Array<() => void>>();
  /** Longer delays of some addresses (a Crawl-delay of one of their hosts), ms. */
  private readonly raised = new Map<string, number>();
  private sweepAt = FIRST_SWEEP_AT;

  /** @param delayMs the least gap between two starts at one address, ms (0: none). */
  constructor(
    readonly delayMs: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(delayMs) || delayMs < 0) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `the IP delay must be a non-negative integer (ms), got ${delayMs}`,
      );
    }
  }

  /** The least gap between two starts at `ip` now, ms. */
  delayOf(ip: string): number {
    return Math.max(this.delayMs, this.raised.get(ip) ?? 0);
  }

  /** Raises `ip`'s delay to `delayMs` if it is longer (a host there asked for that Crawl-delay). */
  raise(ip: string, delayMs: number): void {
    if (delayMs > (this.raised.get(ip) ?? 0)) this.raised.set(ip, delayMs);
  }

  /**
   * How long a request to `ip` must wait before it may start, ms (0: now); while a request there was
   * given its turn and not written yet, at least the whole delay (see {@link unsentAt}).
   */
  waitMs(ip: string): number {
    const last = this.lastStartMs.get(ip);
    const wait = last === undefined ? 0 : Math.max(0, last + this.delayOf(ip) - this.clock.now());
    return this.unsentAt(ip) > 0 ? Math.max(wait, this.delayOf(ip)) : wait;
  }

  /** Requests to `ip` given their turn and not written yet: no other starts there until they are. */
  unsentAt(ip: string): number {
    return this.unsent.get(ip) ?? 0;
  }

  /**
   * A request to `ip` takes its turn now: the next one waits until it is written, and the delay after
   * that. Returns `sent`, to call once when it is written to the server (its start, counted from then),
   * or given up unwritten (when it ends with nothing sent; idempotent).
   */
  started(ip: string): () => void {
    if (this.delayOf(ip) === 0) return () => {};
    this.mark(ip);
    this.unsent.set(ip, this.unsentAt(ip) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.mark(ip);
      const left = this.unsentAt(ip) - 1;
      if (left > 0) this.unsent.set(ip, left);
      else this.unsent.delete(ip);
      const waiters = this.sentWaiters.get(ip);
      this.sentWaiters.delete(ip);
      for (const wake of waiters ?? []) wake();
    };
  }

  /**
   * Waits until a request to `ip` may start, and marks its turn; returns `sent` (see {@link started}).
   */
  async turn(ip: string, signal?: AbortSignal): Promise<() => void> {
    for (;;) {
      if (this.unsentAt(ip) > 0) await this.whenSent(ip, signal);
      else {
        const wait = this.waitMs(ip);
        if (wait <= 0) return this.started(ip);
        await sleep(this.clock, wait, signal);
      }
    }
  }

  /** Resolves when a request to `ip` not written yet is written (or given up); rejects when `signal` aborts. */
  whenSent(ip: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    return waitInLine(this.sentWaiters, ip, signal);
  }

  /** A request to `ip` takes its turn or is written now: the next start counts from now. */
  private mark(ip: string): void {
    if (this.lastStartMs.size >= this.sweepAt) this.sweep();
    this.lastStartMs.set(ip, this.clock.now());
  }

  /** Drops the starts too old to delay anything, so memory follows the addresses in use. */
  private sweep(): void {
    for (const ip of this.lastStartMs.keys()) if (this.waitMs(ip) === 0) this.lastStartMs.delete(ip);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.lastStartMs.size);
  }
}
