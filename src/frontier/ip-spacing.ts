import { type Clock, sleep } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";

/** Addresses remembered at which a sweep first drops those whose last start is older than their delay. */
const FIRST_SWEEP_AT = 1024;

/**
 * The least time between the starts of two requests to one IP address (`--ip-delay-ms`), raised for an
 * address whose host asked for a longer robots.txt Crawl-delay. A start is marked when it happens, not
 * reserved ahead: a wait that runs late never brings two starts closer.
 */
export class IpSpacing {
  private readonly lastStartMs = new Map<string, number>();
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

  /** How long a request to `ip` must wait before it may start, ms (0: now). */
  waitMs(ip: string): number {
    const last = this.lastStartMs.get(ip);
    return last === undefined ? 0 : Math.max(0, last + this.delayOf(ip) - this.clock.now());
  }

  /** A request to `ip` starts now. */
  started(ip: string): void {
    if (this.delayOf(ip) === 0) return;
    if (this.lastStartMs.size >= this.sweepAt) this.sweep();
    this.lastStartMs.set(ip, this.clock.now());
  }

  /** Waits until a request to `ip` may start, and marks its start. */
  async turn(ip: string, signal?: AbortSignal): Promise<void> {
    for (let wait = this.waitMs(ip); wait > 0; wait = this.waitMs(ip)) await sleep(this.clock, wait, signal);
    this.started(ip);
  }

  /** Drops the starts too old to delay anything, so memory follows the addresses in use. */
  private sweep(): void {
    for (const ip of this.lastStartMs.keys()) if (this.waitMs(ip) === 0) this.lastStartMs.delete(ip);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.lastStartMs.size);
  }
}
