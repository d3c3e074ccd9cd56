// Over 400 lines on purpose: a host's visit loop and what each request's answer does to its URL
// (fetched, failed for good, retried later, pushed back by the server, its slot lapsed), which must each
// put the URL back, complete it or park the host exactly once; the checks before a request are in
// url-checks.ts, its wait in request-wait.ts, and a page kept in page-finisher.ts.
import type { Clock } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { FetchResult } from "../fetching/index.js";
import { classifyFetchError, failureReason, responseHeader } from "../fetching/index.js";
import type { Frontier, IpLimiter, PageTurns, VisitOutcome } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import { conditionalHeaders, type PageRevisits } from "../recrawl/index.js";
import type { RobotsRules } from "../robots/index.js";
import type { StoredQueueEntry } from "../storage/index.js";
import { originOf } from "../url/index.js";
import type { CrawlDelayBound } from "./crawl-delay-bound.js";
import { failureLogEntry, pageLogEntry } from "./crawl-log-entries.js";
import type { Admission } from "./crawl-rights.js";
import type { CrawlStats } from "./crawl-stats.js";
import { countsAgainstPageLimit, isTransient, retryAtMs } from "./fetch-retry.js";
import type { HandsChanges } from "./hands-changes.js";
import { type HostRuntime, HostRuntimes, markTlsFailed } from "./host-runtime.js";
import type { LinkRouter } from "./link-router.js";
import type { PageArchive } from "./page-archive.js";
import { PageFinisher } from "./page-finisher.js";
import { type RequestWaitDeps, waitForRequest } from "./request-wait.js";
import { PUSH_BACK_STATUSES, retryAfterMs } from "./server-push-back.js";
import type { SitemapReader } from "./sitemap-reader.js";
import { UnsyncedPages } from "./unsynced-pages.js";
import { checkTakenUrl, type Stop, type TakenUrl, type UrlCheckDeps } from "./url-checks.js";

/** Politeness and trap limits of host visits. */
export interface HostVisitOptions {
  /** Minimum time between the end of one request to a host and the start of the next. */
  readonly delayMs: number;
  /** The next request waits this many times the last one's duration, when that is longer (0: never). */
  readonly delayFactor: number;
  /** Fetches per host at most (robots.txt excluded). */
  readonly maxPagesPerHost: number;
  /** Fetches in one visit before the host yields its slot to waiting hosts. */
  readonly quantumPages: number;
  /**
   * Pages of one host fetched and not yet durable at most, the one being fetched included: the host's
   * next fetch does not wait for its last page's commit, and a crash fetches at most this many of the
   * host's pages again (see unsynced-pages.ts).
   */
  readonly maxUnsyncedPages: number;
  /** Links read from one page at most. */
  readonly maxLinksPerPage: number;
  /** Attempts to get a host's robots.txt before its URLs are given up. */
  readonly maxRobotsAttempts: number;
  /** Attempts at a URL whose fetch failed transiently (see fetch-retry.ts). */
  readonly maxFetchAttempts: number;
  /** Wait before the first retry of a transient failure; doubled at each further one. */
  readonly fetchRetryMs: number;
  /** Product token matched against meta robots names (besides `robots`); undefined when it has none. */
  readonly userAgentToken: string | undefined;
}

/** What a {@link HostVisitor} needs. */
export interface HostVisitorDeps {
  readonly frontier: Frontier;
  /** The agent's resolver: a host name's (first) address, asked again for each request. */
  readonly resolve: (hostname: string, signal: AbortSignal) => Promise<string>;
  /** The rules of `origin`: at once when cached and fresh, else once robots.txt is fetched. */
  readonly robots: (origin: string) => RobotsRules | Promise<RobotsRules>;
  /** Keeps freshly fetched robots.txt rules durably, so a restart does not fetch them again. */
  readonly saveRobots: (rules: RobotsRules) => void;
  /**
   * GETs `url` from address `ip` (the one its request was counted at), with `headers` (a revisit's
   * conditional ones) after the fetcher's own; `onSent` is told when the request is written (its start,
   * from which the address's spacing counts).
   */
  readonly fetch: (
    url: string,
    ip: string,
    signal: AbortSignal,
    headers?: readonly (readonly [string, string])[],
    onSent?: () => boolean,
  ) => Promise<FetchResult>;
  /** Requests at once and push-backs per IP address: this agent's, or the cluster's. */
  readonly ipGate: IpLimiter;
  /** Turns to fetch and process a page, the longest queues served first (see page-turns.ts). */
  readonly turns: Pick<PageTurns, "acquire">;
  readonly archive: PageArchive;
  readonly router: LinkRouter;
  /** Queues the sitemaps robots.txt lists, and reads the fetched ones. */
  readonly sitemaps: SitemapReader;
  readonly stats: CrawlStats;
  readonly clock: Clock;
  /** True when visits should hand back their slot now (pause, stop). */
  readonly mustYield: () => boolean;
  /**
   * A signal aborted while visits are paused: a URL waiting for its address's slot or for its host's
   * robots.txt answer goes back to its queue at the pause (a leave hands it over) rather than wait on.
   * Absent: those waits end at the stop only.
   */
  readonly pausedSignal?: () => AbortSignal | undefined;
  /** True while this agent may hold URLs of `host`: it owns it in its current view (always, alone; by URL, any host). */
  readonly owns: (host: string) => boolean;
  /**
   * When this agent may crawl `host`, which it owns: 0 for now, or a later time (held for a crashed
   * previous owner, or still being handed over). A promise while the hand-over is being asked for.
   * Absent: always now (a lone agent).
   */
  readonly admit?: (host: string) => Admission | Promise<Admission>;
  /**
   * Asked right before each request: true while this agent may send `host` one (it owns it and holds
   * its crawl). A host handed over meanwhile gets no further request from here. @default owns
   */
  readonly mayFetch?: (host: string) => boolean;
  /**
   * Told when who may fetch which host changes: a URL whose host is handed to another agent stops
   * waiting for its address's slot, as at a pause. Absent: that wait ends when it ends (a lone agent
   * keeps its hosts).
   */
  readonly hands?: HandsChanges;
  /** A visit ended with URLs waiting in the queue of a host this agent no longer owns. */
  readonly stranded?: () => void;
  /** True when `host` is on the runtime blacklist. */
  readonly blacklisted: (host: string) => boolean;
  /** Whether a host's pages are dropped for the Crawl-delay its robots.txt asks for (--max-crawl-delay). */
  readonly crawlDelayBound: Pick<CrawlDelayBound, "skips">;
  readonly logger: Logger;
  /** Continuous crawling (`--recrawl`): each page's history kept and its next visit planned. Absent: off. */
  readonly revisits?: PageRevisits;
}

/** A visit that ends with its host waiting. */
type ParkedOutcome = Extract<VisitOutcome, { kind: "parked" }>;

/**
 * One worker's visit of one host, breadth-first: takes the host's queued URLs in order, checks
 * robots.txt, waits the politeness delay, fetches (never two requests at once to the host, at most
 * the IP gate's limit to its address), archives, and routes the page's links.
 */
export class HostVisitor {
  private readonly runtimes = new HostRuntimes();
  /** What the checks before each request read and tell. */
  private readonly checkDeps: UrlCheckDeps;
  /** What the wait before each page's request reads and holds. */
  private readonly requestWaitDeps: RequestWaitDeps;
  /** Where each fetched page is archived, its links followed and its URL completed. */
  private readonly pages: PageFinisher;
  /** The politeness delay, ms: `options.delayMs` until an operator changes it ({@link setDelayMs}). */
  private delayMs: number;

  constructor(
    private readonly options: HostVisitOptions,
    private readonly deps: HostVisitorDeps,
  ) {
    this.delayMs = options.delayMs;
    const handedOver = (host: string) => deps.hands?.watch(() => this.mayFetch(host));
    this.checkDeps = {
      ...deps,
      mayFetch: (host) => this.mayFetch(host),
      paced: (state, rules, startedAtMs) => this.paceAfter(state, rules, startedAtMs),
      log: (line) => deps.archive.log(line),
    };
    this.requestWaitDeps = {
      ...deps,
      handedOver,
      waitingOf: (host) => deps.frontier.waitingOf(host),
      waitCut: (host) => deps.mustYield() || !this.mayFetch(host),
    };
    this.pages = new PageFinisher(options, deps);
  }

  /**
   * Changes the politeness delay from the next request on (`ubicrawl ctl set delay-ms=N`); a host's
   * Crawl-delay still applies when longer.
   */
  setDelayMs(delayMs: number): void {
    this.delayMs = delayMs;
  }

  /**
   * Visits `host` until its queue is empty, its quantum is used, or it must wait; returns once every
   * page it fetched is durable (or back in its queue).
   */
  async visit(host: string, signal: AbortSignal): Promise<VisitOutcome> {
    const unsynced = new UnsyncedPages(this.options.maxUnsyncedPages);
    let outcome: VisitOutcome;
    try {
      outcome = await this.visitQueue(host, unsynced, signal);
    } catch (error) {
      await unsynced.drain().catch(() => {});
      throw error;
    }
    await unsynced.drain();
    // Drops (robots, limits, abandoned hosts) add ops without a commit of their own: make them durable
    // now, or the frontier never looks empty and --exit-when-done waits forever.
    await this.deps.frontier.commit();
    // URLs put back after their host was handed over (they stopped waiting): to its owner at once, as
    // this agent alone may know them.
    if (!this.deps.owns(host) && this.deps.frontier.waitingOf(host) > 0) this.deps.stranded?.();
    return outcome;
  }

  private async visitQueue(
    host: string,
    unsynced: UnsyncedPages,
    signal: AbortSignal,
  ): Promise<VisitOutcome> {
    const { frontier } = this.deps;
    const state = this.runtimes.of(host);
    for (let fetched = 0; fetched < this.options.quantumPages; ) {
      if (this.deps.mustYield() || signal.aborted) return { kind: "yielded" };
      await unsynced.waitForRoom();
      if (!this.deps.owns(host)) return { kind: "drained" };
      const pending = this.deps.admit?.(host) ?? 0;
      const admission = pending === 0 || !("then" in pending) ? pending : await pending;
      if (admission !== 0 && admission.untilMs > this.deps.clock.now()) {
        return { kind: "parked", untilMs: admission.untilMs, reason: admission.reason };
      }
      if (!this.mayFetch(host)) return { kind: "drained" };
      const entry = await frontier.take(host);
      if (!entry) return { kind: "drained" };
      try {
        const url: TakenUrl = { host, entry, state, unsynced, signal };
        const verdict = await checkTakenUrl(url, this.checkDeps, this.options);
        const next = verdict.kind === "fetch" ? await this.fetchOne(url, verdict.rules) : verdict;
        if (next === undefined) fetched++;
        else if (next.kind === "parked") return next;
        else {
          const outcome = await this.settle(host, entry, next);
          if (outcome !== undefined) return outcome;
        }
      } catch (error) {
        // Whatever failed, the URL is not lost: back to the head of its queue, if still taken.
        if (frontier.isTaken(host, entry)) frontier.putBack(host, entry);
        throw error;
      }
    }
    return { kind: "yielded" };
  }

  /**
   * What becomes of a URL that goes no further with no request sent: the one place a check's verdict is
   * carried out. Returns how the visit ends, when it does.
   */
  private async settle(host: string, entry: StoredQueueEntry, stop: Stop): Promise<VisitOutcome | undefined> {
    const { frontier, stats } = this.deps;
    switch (stop.kind) {
      case "put-back":
        frontier.putBack(host, entry);
        return stop.outcome;
      case "set-aside":
        stats.recordDrop("blacklisted");
        frontier.setAside(host, entry);
        return undefined;
      case "drop":
        stats.recordDrop(stop.reason);
        frontier.complete(host, entry, { done: false, counted: false });
        return undefined;
      case "superseded":
        frontier.complete(host, entry, { done: false, counted: false });
        return undefined;
      case "fail":
        this.fail(host, entry, stop.code, 0, stop.reason);
        await frontier.commit();
        return undefined;
    }
  }

  private mayFetch(host: string): boolean {
    return this.deps.mayFetch ? this.deps.mayFetch(host) : this.deps.owns(host);
  }

  /**
   * Waits for the URL's request to be due (politeness, its page turn, its address's slot), sends it and
   * deals with the answer: undefined when the page was fetched (or failed for good), the host's wait
   * when it must wait before it is tried again, or what becomes of the URL when no request went out.
   */
  private async fetchOne(url: TakenUrl, rules: RobotsRules): Promise<Stop | ParkedOutcome | undefined> {
    const { host, entry, state, unsynced, signal } = url;
    const { clock, frontier } = this.deps;
    const longWait = state.pace.longWait(clock.now());
    if (longWait !== undefined) {
      // A long wait (a Crawl-delay of minutes, a server's Retry-After): the host parks, freeing its slot.
      return { kind: "put-back", outcome: { kind: "parked", ...longWait } };
    }
    const previous = entry.revisit ? await this.deps.revisits?.history(host, entry.url) : undefined;
    const cleared = await waitForRequest(host, state, rules, signal, this.requestWaitDeps);
    if (cleared.kind !== "cleared") return cleared;
    const { ip, release, endTurn } = cleared;
    if (this.deps.mustYield() || !this.mayFetch(host) || this.deps.blacklisted(host)) {
      // Paused or stopping while waiting for politeness, or the host changed hands meanwhile (its new
      // owner may be fetching it already), or was blacklisted: no new request; the URL waits at the
      // head of its queue, which goes to the new owner with the rest (or is dropped as blacklisted).
      release();
      endTurn();
      return { kind: "put-back" };
    }
    let result: FetchResult | undefined;
    let failure: ErrorCode | undefined;
    let reason: string | undefined;
    let lapsed = false;
    const startedAtMs = clock.now();
    try {
      result = await this.deps.fetch(entry.url, ip, signal, conditionalHeaders(previous), release.sent);
    } catch (error) {
      if (signal.aborted) {
        endTurn();
        throw error;
      }
      lapsed = isUbiError(error, ErrorCode.StartLapsed);
      failure = classifyFetchError(error);
      reason = failureReason(error);
    } finally {
      release();
      if (!lapsed) this.paceAfter(state, rules, startedAtMs);
    }
    if (lapsed) {
      // Its address's slot lapsed on its way (nothing was sent): the URL asks for another at once.
      endTurn();
      return { kind: "put-back" };
    }
    if (!result) {
      endTurn();
      const code = failure ?? ErrorCode.ProtocolError;
      const attempts = (entry.attempts ?? 0) + 1;
      const { failedInARow, pace } = state;
      const retryAt = retryAtMs(
        { code, attempts, failedInARow, nowMs: clock.now(), nextFetchAtMs: pace.nextFetchAtMs },
        this.options,
      );
      if (retryAt !== undefined) {
        // Logged as an attempt, not counted as a failure: the URL waits at the head of its queue, its
        // attempts kept with it (a restart or the host's next owner go on counting).
        this.deps.archive.log({
          ...failureLogEntry(entry, code, clock.now(), clock.now() - startedAtMs),
          willRetry: true,
        });
        this.deps.stats.fetchRetries++;
        frontier.retryLater(host, entry, attempts);
        await frontier.commit();
        return { kind: "parked", untilMs: retryAt, reason: "retry" };
      }
      if (isTransient(code)) state.failedInARow++;
      if (code === ErrorCode.TlsFailed)
        markTlsFailed(state, { host, origin: originOf(entry.url) }, reason, this.deps.logger);
      this.fail(host, entry, code, clock.now() - startedAtMs, reason);
      // A page revisited is not given up for an outage: it is planned again.
      if (previous !== undefined) this.deps.revisits?.missed(host, previous, clock.now());
      await frontier.commit();
      return undefined;
    }
    state.failedInARow = 0;
    if (PUSH_BACK_STATUSES.has(result.status)) {
      // The server's push-back holds every request to its address (the whole cluster's, in a cluster).
      const retryAfter = retryAfterMs(responseHeader(result, "retry-after"), clock.now());
      this.deps.ipGate.refused(ip, retryAfter);
      const attempts = (entry.attempts ?? 0) + 1;
      // Out of attempts, the answer is kept as the page's (archived, counted as a 4xx/5xx).
      if (attempts < this.options.maxFetchAttempts) {
        endTurn();
        return this.pushedBack(host, entry, result, state, attempts);
      }
    } else {
      state.pace.answered();
    }
    // Archived and committed in the background: the host's next fetch need not wait for the disk.
    unsynced.add(this.pages.finish(host, entry, result, signal, previous, endTurn));
    return undefined;
  }

  /** A request to the host (robots.txt or a page) that started at `startedAtMs` just ended. */
  private paceAfter(state: HostRuntime, rules: RobotsRules, startedAtMs: number): void {
    const now = this.deps.clock.now();
    state.pace.afterRequest(now, now - startedAtMs, {
      delayMs: this.delayMs,
      delayFactor: this.options.delayFactor,
      crawlDelayMs: rules.crawlDelayMs,
    });
  }

  /**
   * A 429 or 503 answer with attempts left: the host backs off (twice its delay, see
   * server-push-back.ts) and waits out the server's `Retry-After` if it gave one; the URL waits at the
   * head of its queue, its attempt logged (with the status, `willRetry`) and counted, not archived.
   */
  private async pushedBack(
    host: string,
    entry: StoredQueueEntry,
    result: FetchResult,
    state: HostRuntime,
    attempts: number,
  ): Promise<ParkedOutcome> {
    const { clock, frontier } = this.deps;
    const retryAfter = responseHeader(result, "retry-after");
    const untilMs = state.pace.pushedBack(clock.now(), this.delayMs, retryAfter);
    this.deps.archive.log({ ...pageLogEntry(entry, result, 0), willRetry: true });
    this.deps.stats.fetchRetries++;
    frontier.retryLater(host, entry, attempts);
    await frontier.commit();
    return { kind: "parked", untilMs, reason: "throttled" };
  }

  private fail(
    host: string,
    entry: StoredQueueEntry,
    code: ErrorCode,
    durationMs: number,
    reason?: string,
  ): void {
    this.deps.stats.recordError(code);
    this.deps.archive.log(failureLogEntry(entry, code, this.deps.clock.now(), durationMs, reason));
    // Failed for good: done, so no later owner of the host (nor a copy queued again) tries it again.
    // A URL no request went out for does not count against the host's page limit.
    this.deps.frontier.complete(host, entry, { done: true, counted: countsAgainstPageLimit(code) });
  }
}
