import type { Clock } from "../clock.js";
import type { CrawlLogInput } from "../storage/index.js";
import { hostKey } from "../url/index.js";

/** One fetch as the console lists it. */
export interface RecentFetch {
  /** When it ended, ms since the epoch. */
  readonly atMs: number;
  readonly url: string;
  /** HTTP status, 0 when the fetch failed. */
  readonly status: number;
  readonly bytes: number;
  readonly durationMs: number;
  /** The error class of a failure (or of a truncated body). */
  readonly error?: string;
  /** True for a failed attempt that will be tried again. */
  readonly willRetry?: boolean;
}

/** A host's share of the last fetches. */
export interface HostActivity {
  readonly host: string;
  readonly fetches: number;
  readonly meanDurationMs: number;
  readonly errors: number;
}

/** Options of a {@link FetchActivity}. */
export interface FetchActivityOptions {
  /** Fetches listed by {@link recent}. @default 50 */
  readonly recentSize?: number;
  /** Fetches the busiest and slowest hosts are ranked over. @default 2000 */
  readonly windowSize?: number;
  /** Seconds of per-second page counts kept for the rate chart. @default 600 */
  readonly historySeconds?: number;
}

interface HostTally {
  fetches: number;
  totalDurationMs: number;
  errors: number;
}

/**
 * What an agent fetched lately, for its console: the last fetches, pages fetched per second over the
 * last minutes, and which hosts took the most fetches and the most time among the last few thousand.
 * Fed with crawl-log lines ({@link record}); memory is bounded by the options, whatever the crawl's size.
 */
export class FetchActivity {
  private readonly recentSize: number;
  private readonly windowSize: number;
  private readonly historySeconds: number;
  /** The last `windowSize` fetches, oldest first (a ring once full). */
  private readonly window: RecentFetch[] = [];
  private next = 0;
  private readonly hosts = new Map<string, HostTally>();
  /** Pages fetched in each second, keyed by second since the epoch. */
  private readonly perSecond = new Map<number, number>();
  /** The cluster's pages per second in each second sampled over, keyed by second since the epoch. */
  private readonly clusterPerSecond = new Map<number, number>();
  /** The last sample of the cluster's pages fetched: its second and the count. */
  private lastClusterSample: { readonly second: number; readonly pages: number } | undefined;

  constructor(
    options: FetchActivityOptions,
    private readonly clock: Clock,
  ) {
    this.recentSize = options.recentSize ?? 50;
    this.windowSize = options.windowSize ?? 2000;
    this.historySeconds = options.historySeconds ?? 600;
  }

  /** Takes in one crawl-log line: a fetch, a failed attempt or a failure. */
  record(entry: CrawlLogInput): void {
    const atMs = this.clock.now();
    const fetch: RecentFetch = {
      atMs,
      url: entry.url,
      status: entry.status,
      bytes: entry.bytes,
      durationMs: entry.durationMs,
      ...(entry.error === undefined ? {} : { error: entry.error }),
      ...(entry.willRetry ? { willRetry: true } : {}),
    };
    if (this.window.length < this.windowSize) {
      this.window.push(fetch);
    } else {
      this.tally(this.window[this.next] as RecentFetch, -1);
      this.window[this.next] = fetch;
      this.next = (this.next + 1) % this.windowSize;
    }
    this.tally(fetch, 1);
    if (entry.status > 0 && entry.willRetry !== true) {
      const second = Math.floor(atMs / 1000);
      this.perSecond.set(second, (this.perSecond.get(second) ?? 0) + 1);
      for (const old of this.perSecond.keys()) {
        if (old > second - this.historySeconds) break;
        this.perSecond.delete(old);
      }
    }
  }

  /**
   * Takes in the pages the whole cluster has fetched so far (sampled about once a second, from the
   * agent's start, whether or not anyone watches): the growth since the last sample, spread over the
   * seconds between them, is the cluster's rate in those seconds.
   */
  noteClusterPages(pages: number): void {
    const second = Math.floor(this.clock.now() / 1000);
    const last = this.lastClusterSample;
    if (last !== undefined && second <= last.second) return;
    if (last !== undefined) {
      // A member dropped from the view takes its pages out of the sum: no negative rate.
      const rate = Math.max(0, pages - last.pages) / (second - last.second);
      for (let each = last.second; each < second; each++) this.clusterPerSecond.set(each, rate);
      for (const old of this.clusterPerSecond.keys()) {
        if (old > second - this.historySeconds) break;
        this.clusterPerSecond.delete(old);
      }
    }
    this.lastClusterSample = { second, pages };
  }

  /**
   * The cluster's pages per second in each of the last `seconds` whole seconds, oldest first, aligned
   * with {@link history}: null for a second no two samples span (before the console sampled).
   */
  clusterHistory(seconds = 120): { readonly atMs: number; readonly pages: number | null }[] {
    return this.history(seconds).map(({ atMs }) => ({
      atMs,
      pages: this.clusterPerSecond.get(atMs / 1000) ?? null,
    }));
  }

  /** The last fetches, newest first. */
  recent(): RecentFetch[] {
    const ordered = [...this.window.slice(this.next), ...this.window.slice(0, this.next)];
    return ordered.slice(-this.recentSize).reverse();
  }

  /** Pages fetched in each of the last `seconds` whole seconds, oldest first (zeros included). */
  history(seconds = 120): { readonly atMs: number; readonly pages: number }[] {
    const now = Math.floor(this.clock.now() / 1000);
    const span = Math.min(seconds, this.historySeconds);
    const points: { atMs: number; pages: number }[] = [];
    for (let second = now - span; second < now; second++) {
      points.push({ atMs: second * 1000, pages: this.perSecond.get(second) ?? 0 });
    }
    return points;
  }

  /** The `limit` hosts with the most fetches among the last ones. */
  busiestHosts(limit = 10): HostActivity[] {
    return this.ranked((a, b) => b.fetches - a.fetches || b.meanDurationMs - a.meanDurationMs, limit);
  }

  /** The `limit` hosts whose fetches took longest on average among the last ones. */
  slowestHosts(limit = 10): HostActivity[] {
    return this.ranked((a, b) => b.meanDurationMs - a.meanDurationMs || b.fetches - a.fetches, limit);
  }

  private ranked(order: (a: HostActivity, b: HostActivity) => number, limit: number): HostActivity[] {
    const rows: HostActivity[] = [];
    for (const [host, tally] of this.hosts) {
      rows.push({
        host,
        fetches: tally.fetches,
        meanDurationMs: tally.totalDurationMs / tally.fetches,
        errors: tally.errors,
      });
    }
    return rows.sort(order).slice(0, limit);
  }

  private tally(fetch: RecentFetch, sign: 1 | -1): void {
    const host = hostKey(fetch.url);
    const tally = this.hosts.get(host) ?? { fetches: 0, totalDurationMs: 0, errors: 0 };
    tally.fetches += sign;
    tally.totalDurationMs += sign * fetch.durationMs;
    if (fetch.status === 0 || fetch.status >= 400) tally.errors += sign;
    if (tally.fetches === 0) this.hosts.delete(host);
    else this.hosts.set(host, tally);
  }
}
