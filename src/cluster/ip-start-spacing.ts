import { IP_START_SLACK_MS } from "./ip-grant.js";

/** What a slot granted under a delay set in an {@link IpStartSpacing}, to be undone in part at its release. */
export interface SlotSpacing {
  /** The latest its request may start: its grant and its start slack ({@link IP_START_SLACK_MS} at least). */
  readonly startsByMs: number;
  /** The latest start that may have happened before it was granted. */
  readonly before: number;
}

/**
 * When the next request may start at one address, as its authority sees it: the least gap between two
 * starts is the IP delay, or a longer Crawl-delay reported there lately; it counts from the latest start
 * that may have happened. An authority cannot see starts, only bound them: a slot's request starts
 * within its start slack ({@link IP_START_SLACK_MS} at least) of its grant, or sooner when its release
 * comes sooner; a lease's
 * starts run until the lease's end (the caller passes those in, see {@link nextStartAtMs}).
 */
export class IpStartSpacing {
  /** The latest time a request granted here may have started (-Infinity: none). */
  private lastStartMs = Number.NEGATIVE_INFINITY;
  /** The longest Crawl-delay reported for a host there, ms (0: none), applied until `crawlDelayUntilMs`. */
  private crawlDelayMs = 0;
  private crawlDelayUntilMs = 0;

  /**
   * @param ipDelayMs the IP delay (`--ip-delay-ms`), ms.
   * @param crawlDelayMemoryMs how long a reported Crawl-delay is applied after its last report, ms.
   */
  constructor(
    private readonly ipDelayMs: number,
    private readonly crawlDelayMemoryMs: number,
  ) {}

  /** The least gap between two starts at the address now: the IP delay, or a longer Crawl-delay reported. */
  delayMs(now: number): number {
    return Math.max(this.ipDelayMs, now < this.crawlDelayUntilMs ? this.crawlDelayMs : 0);
  }

  /** A host there asks for a Crawl-delay of `delayMs`: the longest reported applies, until it is not reported. */
  reportCrawlDelay(delayMs: number, now: number): void {
    if (now >= this.crawlDelayUntilMs) this.crawlDelayMs = 0;
    this.crawlDelayMs = Math.max(this.crawlDelayMs, delayMs);
    this.crawlDelayUntilMs = now + this.crawlDelayMemoryMs;
  }

  /**
   * When the next request may start (0: no delay applies): the delay after the latest start known here,
   * or `othersStartUntilMs` (starts this spacing does not track, such as leases') when that is later.
   */
  nextStartAtMs(now: number, othersStartUntilMs = Number.NEGATIVE_INFINITY): number {
    const delayMs = this.delayMs(now);
    if (delayMs === 0) return 0;
    return Math.max(this.lastStartMs, othersStartUntilMs) + delayMs;
  }

  /** A request may have started as late as `atMs`: the next ones are spaced from it. */
  startedBy(atMs: number): void {
    this.lastStartMs = Math.max(this.lastStartMs, atMs);
  }

  /**
   * A slot is granted now: under a delay, its request starts by `startSlackMs` from now, returned to be
   * given to {@link slotReleased} (undefined: no delay, nothing to undo).
   */
  slotGranted(now: number, startSlackMs = IP_START_SLACK_MS): SlotSpacing | undefined {
    if (this.delayMs(now) === 0) return undefined;
    const spacing = { startsByMs: now + startSlackMs, before: this.lastStartMs };
    this.lastStartMs = spacing.startsByMs;
    return spacing;
  }

  /**
   * A slot's release came at `now`: its request started by then, so the latest start it set is known
   * sooner (unless a later grant set one since).
   */
  slotReleased(spacing: SlotSpacing, now: number): void {
    if (this.lastStartMs === spacing.startsByMs)
      this.lastStartMs = Math.max(spacing.before, Math.min(now, spacing.startsByMs));
  }

  /** True when nothing here need be remembered but the starts, which the IP delay alone bounds then. */
  forgettable(now: number): boolean {
    return now >= this.crawlDelayUntilMs;
  }
}
