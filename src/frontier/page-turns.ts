import { watchAbort } from "../abort-watch.js";
import { ErrorCode, UbiError } from "../errors.js";
import { queueClass } from "./ready-hosts.js";

/** A {@link PageTurns}' figures, for stats and metrics. */
export interface PageTurnCounts {
  /** Pages that may be fetched and processed at once. */
  readonly limit: number;
  /** Turns held now. */
  readonly inUse: number;
  /** Hosts waiting for a turn. */
  readonly waiting: number;
}

/** One host waiting for a turn. */
interface Waiter {
  readonly grant: () => void;
}

/**
 * Turns to fetch and process a page. At most {@link limit} pages of this agent's hosts are being fetched
 * and processed at once (a host holds a turn from its request's start until the page is archived and
 * its links followed), and a turn that frees goes to the waiting host with the longest queue (by the
 * power of two of its length, first come, first served within one).
 *
 * Why: while the agent is CPU-bound, every active host waits its turn in the one event loop, so with
 * 256 hosts active each gets 1/256 of the pages, the biggest host's included, and a crawl ends with
 * its biggest host crawled alone, one request at a time. Handing turns to the longest queues first
 * lets the biggest hosts (still one request at a time each) go at nearly their own pace all through
 * the crawl — the end of a polite crawl is set by them. While the agent has CPU to spare, the limit is
 * above what its hosts use and turns cost one counter (see turn-governor.ts).
 */
export class PageTurns {
  private held = 0;
  private peak = 0;
  /** Index k: waiters whose queue had 2^k to 2^(k+1) − 1 URLs (k = 0 for 0 or 1), in arrival order. */
  private readonly classes: Waiter[][] = [];
  private waiters = 0;
  private currentLimit: number;

  /** @param limit pages fetched and processed at once at most */
  constructor(limit: number) {
    this.currentLimit = checkedLimit(limit);
  }

  /**
   * Waits for a turn for a host with `queued` URLs waiting; call the returned function exactly once
   * (later calls do nothing) when the page is processed, or its fetch failed.
   */
  async acquire(queued: number, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.held < this.currentLimit && this.waiters === 0) {
      this.take();
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const k = queueClass(queued);
      for (let i = this.classes.length; i <= k; i++) this.classes.push([]);
      const queue = this.classes[k] as Waiter[];
      const unwatch =
        signal &&
        watchAbort(signal, () => {
          const index = queue.indexOf(waiter);
          if (index >= 0) {
            queue.splice(index, 1);
            this.waiters--;
          }
          reject(signal.reason);
        });
      const waiter: Waiter = {
        grant: () => {
          unwatch?.();
          resolve();
        },
      };
      queue.push(waiter);
      this.waiters++;
    });
    return this.releaser();
  }

  /** Pages fetched and processed at once at most. */
  get limit(): number {
    return this.currentLimit;
  }

  /** Changes the limit: a higher one grants waiting hosts turns now, a lower one lets held turns end. */
  setLimit(limit: number): void {
    this.currentLimit = checkedLimit(limit);
    this.grantWaiting();
  }

  /** Turns held now. */
  get inUse(): number {
    return this.held;
  }

  /** Hosts waiting for a turn. */
  get waiting(): number {
    return this.waiters;
  }

  /** The most turns held at once since the last call (then the number held now). */
  takePeak(): number {
    const peak = this.peak;
    this.peak = this.held;
    return peak;
  }

  private take(): void {
    this.held++;
    if (this.held > this.peak) this.peak = this.held;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    for (let k = this.classes.length - 1; k >= 0 && this.held < this.currentLimit; ) {
      const waiter = (this.classes[k] as Waiter[]).shift();
      if (waiter === undefined) {
        k--;
        continue;
      }
      this.waiters--;
      this.take();
      waiter.grant();
    }
  }
}

function checkedLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new UbiError(ErrorCode.InvalidArgument, `page turns must be a positive integer, got ${limit}`);
  }
  return limit;
}
