import type { Clock } from "../clock.js";
import type { WaitingHosts, WaitReason } from "../frontier/index.js";
import type { LogFields, Logger } from "../logging/index.js";
import type { RevisitFigures } from "../recrawl/index.js";
import type { CrawlStats } from "./crawl-stats.js";

/** What the progress output reads from an agent. */
export interface ProgressSource {
  readonly options: { readonly id: string };
  readonly stats: CrawlStats;
  readonly frontier: {
    readonly waitingUrls: number;
    readonly inFlightUrls: number;
    readonly seen: { readonly size: number; readonly memoryBytes: number };
  };
  readonly scheduler: {
    readonly activeHosts: number;
    readonly readyHosts: number;
    readonly longestReadyQueue: number;
    waiting(): readonly WaitingHosts[];
  };
  readonly clock: Clock;
  /** True while fetching is paused (by an operator, or a full disk). */
  readonly isPaused: boolean;
  /** Continuous crawling's revisits (`--recrawl`); undefined when off. */
  readonly recrawler?: { figures(): RevisitFigures };
}

/** Progress modes: a live line on a terminal, periodic log records otherwise, or nothing. */
export const PROGRESS_MODES = ["auto", "line", "log", "off"] as const;
/** One of {@link PROGRESS_MODES}. */
export type ProgressMode = (typeof PROGRESS_MODES)[number];

const LINE_INTERVAL_MS = 500;
const LOG_INTERVAL_MS = 5_000;

/**
 * Shows an agent's progress: one rewritten line on a terminal (`out`), or a `progress` log record
 * every few seconds, with the figures as fields.
 */
export class ProgressReporter {
  private timer: NodeJS.Timeout | undefined;
  private readonly live: boolean;

  constructor(
    private readonly source: ProgressSource,
    private readonly out: { write(text: string): unknown; readonly isTTY?: boolean },
    private readonly mode: ProgressMode,
    private readonly logger: Logger,
  ) {
    this.live = mode === "line" || (mode === "auto" && out.isTTY === true);
  }

  /** Starts printing. */
  start(): void {
    if (this.mode === "off") return;
    this.timer = setInterval(() => this.print(), this.live ? LINE_INTERVAL_MS : LOG_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops printing (and ends the live line). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.live) this.out.write("\n");
  }

  private print(): void {
    const text = progressText(this.source);
    if (this.live) {
      this.out.write(`\r\x1b[K${text}`);
      return;
    }
    const { stats, frontier, scheduler } = this.source;
    this.logger.info(
      {
        event: "progress",
        pagesFetched: stats.pagesFetched,
        pagesPerSecond: Number(stats.pagesPerSecond().toFixed(2)),
        bytesFetched: stats.bytesFetched,
        queuedUrls: frontier.waitingUrls,
        activeHosts: scheduler.activeHosts,
        // Hosts waiting for a slot; the longest queues (at least this many URLs) are served first.
        readyHosts: scheduler.readyHosts,
        longestReadyQueue: scheduler.longestReadyQueue,
        errors: stats.errorCount,
        paused: this.source.isPaused,
        waiting: scheduler.waiting().map(({ reason, hosts }) => ({ reason, hosts })),
        ...recrawlFields(this.source),
      },
      text,
    );
  }
}

/** One line: pages, rate, queue, active hosts, errors, and what waiting hosts wait for. */
export function progressText(source: ProgressSource): string {
  const { stats, frontier, scheduler } = source;
  const waiting = describeWaiting(scheduler.waiting(), source.clock.now());
  return (
    `[${source.options.id}] ${source.isPaused ? "PAUSED, " : ""}${stats.pagesFetched} pages, ${stats.pagesPerSecond().toFixed(0)} pages/s, ` +
    `${formatBytes(stats.bytesFetched)}, ${frontier.waitingUrls} queued, ${scheduler.activeHosts} active hosts, ` +
    `${plural(stats.errorCount, "error")}${waiting === "" ? "" : `; waiting: ${waiting}`}` +
    recrawlText(source)
  );
}

const WAIT_REASONS: Record<WaitReason, string> = {
  robots: "for robots.txt, unavailable",
  retry: "to retry a fetch that failed",
  throttled: "backing off: the server answered 429 or 503",
  "crawl-delay": "paced by their robots.txt's Crawl-delay",
  polite: "paced by --delay-ms or --delay-factor",
  held: "held for a crashed agent (takeover grace)",
  "hand-over": "being handed over by their previous owner",
  error: "after a visit that failed",
};

/** What waiting hosts wait for, e.g. "14 hosts for robots.txt, unavailable (next in 42 s)"; "" for none. */
export function describeWaiting(waiting: readonly WaitingHosts[], nowMs: number): string {
  return waiting
    .map(({ reason, hosts, nextAtMs }) => {
      const seconds = Math.max(0, Math.ceil((nextAtMs - nowMs) / 1000));
      return `${hosts} host${hosts === 1 ? "" : "s"} ${WAIT_REASONS[reason]} (next in ${seconds} s)`;
    })
    .join(", ");
}

/**
 * The record of an agent's stop: a one-line message and the crawl's figures as fields (this run's
 * pages, those since the crawl began in the data dir, errors and drops by class, the URL exchange).
 */
export function crawlSummary(source: ProgressSource, reason: string): { message: string; fields: LogFields } {
  const { stats } = source;
  const seconds = stats.uptimeMs / 1000;
  const pagesPerSecond = stats.pagesFetchedThisRun / Math.max(seconds, 0.001);
  const errors = [...stats.errors].map(([name, count]) => `${name}=${count}`).join(" ") || "none";
  const traffic = stats.traffic;
  return {
    message:
      `stopped (${reason}) after ${seconds.toFixed(1)} s: ${stats.pagesFetchedThisRun} pages ` +
      `(${pagesPerSecond.toFixed(0)} pages/s), ${stats.pagesFetched} since the crawl began in this data dir, ` +
      `${formatBytes(stats.bytesFetched)}; ${source.frontier.waitingUrls} queued; errors: ${errors}${recrawlText(source)}`,
    fields: {
      event: "stopped",
      reason,
      seconds: Number(seconds.toFixed(3)),
      // This process's CPU (user + system), for a crawl's CPU a page.
      cpuSeconds: Number((cpuMicroseconds() / 1e6).toFixed(3)),
      pagesFetchedThisRun: stats.pagesFetchedThisRun,
      pagesFetched: stats.pagesFetched,
      bytesFetched: stats.bytesFetched,
      linksFound: stats.linksFound,
      queuedUrls: source.frontier.waitingUrls,
      seenUrls: source.frontier.seen.size,
      seenSetBytes: source.frontier.seen.memoryBytes,
      errors: Object.fromEntries(stats.errors),
      fetchRetries: stats.fetchRetries,
      duplicates: stats.duplicates,
      duplicateBytes: stats.duplicateBytes,
      ...(stats.digestMessages === 0 ? {} : { digestMessages: stats.digestMessages }),
      ...(stats.payloadCopies === 0 ? {} : { payloadCopies: stats.payloadCopies }),
      ...(stats.payloadsUnchecked === 0 ? {} : { payloadsUnchecked: stats.payloadsUnchecked }),
      ...(stats.ipMessagesThisRun === 0 ? {} : { ipMessages: stats.ipMessagesThisRun }),
      ...(stats.addressChangesThisRun === 0 ? {} : { addressChanges: stats.addressChangesThisRun }),
      dropped: Object.fromEntries(stats.dropped),
      ...recrawlFields(source),
      ...(stats.peers.size === 0
        ? {}
        : {
            exchange: { ...traffic },
            // A URL handed away once is not sent again: fewer URLs are sent than links found to them.
            linksToOtherAgents: stats.linksToOtherAgents,
          }),
    },
  };
}

function cpuMicroseconds(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Bytes in B/KB/MB/GB. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** `count` and `noun`, plural when count is not 1: "1 error", "3 errors". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * `--recrawl`'s figures since the agent started, as log fields (`recrawl`: revisits queued and answered,
 * 304s, unchanged and changed pages, revisits failed and planned again, plans pending, and how late
 * the earliest is).
 */
function recrawlFields(source: ProgressSource): LogFields {
  const { recrawler } = source;
  if (recrawler === undefined) return {};
  return { recrawl: recrawler.figures() };
}

/** `--recrawl`'s figures for people ("" when off): revisits, what they found, plans pending. */
function recrawlText(source: ProgressSource): string {
  const { recrawler } = source;
  if (recrawler === undefined) return "";
  const { revisited, notModified, unchanged, changed, planned, overdueMs } = recrawler.figures();
  return (
    `; ${plural(revisited, "revisit")} (${notModified} not modified, ${unchanged} unchanged, ${changed} changed), ` +
    `${planned} planned${overdue(overdueMs)}`
  );
}

/** ", the earliest 3 s overdue" for a lateness of 3,000 ms; "" under a second. */
function overdue(ms: number): string {
  return ms < 1000 ? "" : `, the earliest ${Math.round(ms / 1000)} s overdue`;
}
