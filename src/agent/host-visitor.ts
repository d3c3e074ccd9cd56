import { type Clock, sleep } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { FetchResult } from "../fetching/index.js";
import { classifyFetchError, failureReason, responseHeader } from "../fetching/index.js";
import type { Frontier, IpLimiter, PageTurns, VisitOutcome, WaitReason } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import { conditionalHeaders, type PageHistory, type PageRevisits } from "../recrawl/index.js";
import type { RobotsRules } from "../robots/index.js";
import type { PayloadOriginal, StoredQueueEntry } from "../storage/index.js";
import { hostnameOf, originOf } from "../url/index.js";
import type { CrawlDelayBound } from "./crawl-delay-bound.js";
import { crawlDelaySkipLogEntry, failureLogEntry, pageLogEntry } from "./crawl-log-entries.js";
import type { Admission } from "./crawl-rights.js";
import type { CrawlStats, DropReason } from "./crawl-stats.js";
import { countsAgainstPageLimit, isTransient, retryAtMs } from "./fetch-retry.js";
import { HostPace, PARK_LONGER_WAITS_MS } from "./host-pace.js";
import type { LinkRouter } from "./link-router.js";
import type { ArchivedPage, PageArchive } from "./page-archive.js";
import { followLinks, sameLinkBase } from "./page-links.js";
import { PUSH_BACK_STATUSES, retryAfterMs } from "./server-push-back.js";
import type { SitemapReader } from "./sitemap-reader.js";
import { UnsyncedPages } from "./unsynced-pages.js";

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
  readonly resolve: (hostname: string, signal: AbortSignal) => Promise<string>;
  readonly robots: (origin: string) => Promise<RobotsRules>;
  /** Keeps freshly fetched robots.txt rules durably, so a restart does not fetch them again. */
  readonly saveRobots: (rules: RobotsRules) => void;
  /** GETs `url`, with `headers` (a revisit's conditional ones) after the fetcher's own. */
  readonly fetch: (
    url: string,
    signal: AbortSignal,
    headers?: readonly (readonly [string, string])[],
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
  /** True when `host` is on the runtime blacklist. */
  readonly blacklisted: (host: string) => boolean;
  /** Whether a host's pages are dropped for the Crawl-delay its robots.txt asks for (--max-crawl-delay). */
  readonly crawlDelayBound: Pick<CrawlDelayBound, "skips">;
  readonly logger: Logger;
  /** Continuous crawling (`--recrawl`): each page's history kept and its next visit planned. Absent: off. */
  readonly revisits?: PageRevisits;
}

/** In-memory, per-host facts of the current run. */
interface HostRuntime {
  ip?: string;
  /** Why the host cannot be reached this run: a DNS miss, or an address --allow-net refuses. */
  dnsError?: ErrorCode;
  /**
   * Origins (`https://host[:port]`) whose TLS handshake failed this run: their URLs fail at once as
   * `TlsFailed`, and are never fetched over plain HTTP instead. Per origin, since the host's `http:` URLs
   * are not concerned.
   */
  tlsFailed?: Set<string>;
  /** When the next request may start, and why (this agent's delay, Crawl-delay, a server's push-back). */
  readonly pace: HostPace;
  robotsAttempts: number;
  /** URLs given up in a row after transient failures: a host that keeps failing gets no more retries. */
  failedInARow: number;
}

/** The turn of a page that has none yet: ending it does nothing. */
const NO_TURN = (): void => {};

/** The politeness wait is slept in slices of this many ms at most, checking between them for a pause. */
const POLITENESS_SLICE_MS = 250;

/**
 * One worker's visit of one host, breadth-first: takes the host's queued URLs in order, checks
 * robots.txt, waits the politeness delay, fetches (never two requests at once to the host, at most
 * the IP gate's limit to its address), archives, and routes the page's links.
 */
export class HostVisitor {
  private readonly runtime = new Map<string, HostRuntime>();
  /** The politeness delay, ms: `options.delayMs` until an operator changes it ({@link setDelayMs}). */
  private delayMs: number;

  constructor(
    private readonly options: HostVisitOptions,
    private readonly deps: HostVisitorDeps,
  ) {
    this.delayMs = options.delayMs;
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
    return outcome;
  }

  private async visitQueue(
    host: string,
    unsynced: UnsyncedPages,
    signal: AbortSignal,
  ): Promise<VisitOutcome> {
    const { frontier } = this.deps;
    const state = this.runtimeOf(host);
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
        // Paused, or the host handed over while its URL was being taken: not even robots.txt is asked.
        if (this.deps.mustYield() || !this.mayFetch(host)) {
          frontier.putBack(host, entry);
          return { kind: "yielded" };
        }
        if (this.deps.blacklisted(host)) {
          // Not fetched, but not forgotten either: kept aside until the host comes off the blacklist.
          this.deps.stats.recordDrop("blacklisted");
          this.deps.frontier.setAside(host, entry);
          continue;
        }
        if (await this.alreadyFetched(host, entry, unsynced)) continue;
        const record = frontier.record(host);
        if (record.abandoned !== undefined) {
          this.drop(host, entry, "abandoned");
          continue;
        }
        // Pages still being committed count once they are: wait for them near the limit. A revisit
        // counted at its first fetch.
        const limited = !entry.revisit;
        if (limited && record.fetched + unsynced.size >= this.options.maxPagesPerHost) await unsynced.drain();
        if (limited && record.fetched >= this.options.maxPagesPerHost) {
          this.drop(host, entry, "page-limit");
          continue;
        }
        if (!(await this.ensureAddress(host, state, signal))) {
          this.fail(host, entry, state.dnsError ?? ErrorCode.DnsNotFound, 0);
          await frontier.commit();
          continue;
        }
        const origin = originOf(entry.url);
        if (state.tlsFailed?.has(origin)) {
          this.fail(host, entry, ErrorCode.TlsFailed, 0);
          await frontier.commit();
          continue;
        }
        const askedAtMs = this.deps.clock.now();
        const rules = await this.deps.robots(origin);
        if (rules.fetchedAtMs >= askedAtMs) {
          this.deps.stats.recordRobots(rules.status);
          this.deps.saveRobots(rules);
          // robots.txt was just requested from this host: that request counts for politeness too.
          this.paceAfter(state, rules, askedAtMs);
          this.deps.sitemaps.queueListed(host, rules);
        }
        if (rules.status === "unavailable" && rules.error === ErrorCode.TlsFailed) {
          this.tlsFailedAt(host, state, origin, rules.reason);
          this.fail(host, entry, ErrorCode.TlsFailed, 0, rules.reason);
          await frontier.commit();
          continue;
        }
        if (rules.status === "unavailable" && rules.error === ErrorCode.AddressForbidden) {
          // Refused by --allow-net, not an outage: retrying cannot help, so fail like a missing name.
          state.dnsError = rules.error;
          this.fail(host, entry, rules.error, 0);
          await frontier.commit();
          continue;
        }
        if (rules.status === "unavailable") {
          frontier.putBack(host, entry);
          // Only a fresh answer is an attempt: a timer may wake the host a hair before the cached
          // failure expires, and that must not count as asking again.
          if (rules.fetchedAtMs < askedAtMs) return this.waitForRobotsRetry(state, rules);
          return this.robotsUnavailable(host, state, rules);
        }
        state.robotsAttempts = 0;
        if (this.deps.crawlDelayBound.skips(host, rules)) {
          this.skipForCrawlDelay(host, entry, rules.askedCrawlDelayMs ?? 0);
          continue;
        }
        if (!rules.isAllowed(entry.url)) {
          this.drop(host, entry, "robots");
          continue;
        }
        const wait = await this.fetchOne(host, entry, state, rules, unsynced, signal);
        if (wait !== undefined) return { kind: "parked", ...wait };
        fetched++;
      } catch (error) {
        // Whatever failed, the URL is not lost: back to the head of its queue, if still taken.
        if (frontier.isTaken(host, entry)) frontier.putBack(host, entry);
        throw error;
      }
    }
    return { kind: "yielded" };
  }

  /**
   * Skips a URL done before: here (queued again after a peer died), or by a previous owner of the host
   * (its done set came with the hand-over). The check reads the durable record, so the host's pages
   * still being committed are waited for first: one of them may be this URL's other copy.
   */
  private async alreadyFetched(
    host: string,
    entry: StoredQueueEntry,
    unsynced: UnsyncedPages,
  ): Promise<boolean> {
    const { frontier, stats } = this.deps;
    // A revisit is a done URL by design: its plan was cleared when it was queued, so it is queued once.
    if (entry.revisit) return this.revisitSuperseded(host, entry);
    if (!frontier.needsFetchedCheck(host)) return false;
    await unsynced.drain();
    if ((await frontier.wasFetched([entry.url]))[0]) {
      frontier.complete(host, entry, { done: false, counted: false });
      stats.recordDrop("fetched-before");
      return true;
    }
    return false;
  }

  /**
   * A queued revisit whose page has a plan again gives way to it: the plan came with a later history
   * handed over with the host (or planned on its adoption), so fetching now would visit the page twice
   * for one due time. The plan queues it again when due.
   */
  private async revisitSuperseded(host: string, entry: StoredQueueEntry): Promise<boolean> {
    const { frontier, revisits } = this.deps;
    if ((await revisits?.history(host, entry.url))?.nextAtMs === undefined) return false;
    // The commit that queued it clears its plan, and may not be written yet: wait for it, look again.
    await frontier.commit();
    if ((await revisits?.history(host, entry.url))?.nextAtMs === undefined) return false;
    frontier.complete(host, entry, { done: false, counted: false });
    return true;
  }

  private mayFetch(host: string): boolean {
    return this.deps.mayFetch ? this.deps.mayFetch(host) : this.deps.owns(host);
  }

  private async fetchOne(
    host: string,
    entry: StoredQueueEntry,
    state: HostRuntime,
    rules: RobotsRules,
    unsynced: UnsyncedPages,
    signal: AbortSignal,
  ): Promise<{ untilMs: number; reason: WaitReason } | undefined> {
    const { clock, frontier } = this.deps;
    const longWait = state.pace.longWait(clock.now());
    if (longWait !== undefined) {
      // A long wait (a Crawl-delay of minutes, a server's Retry-After): the host parks, freeing its slot.
      frontier.putBack(host, entry);
      return longWait;
    }
    let previous: PageHistory | undefined;
    let release: () => void;
    // The page's turn: held until it is processed (or its fetch failed).
    let endTurn = NO_TURN;
    try {
      if (entry.revisit) previous = await this.deps.revisits?.history(host, entry.url);
      // In slices, so a pause or a hand-over ends the wait early (a leave waits for requests in flight).
      const { pace } = state;
      for (let wait = pace.nextFetchAtMs - clock.now(); wait > 0; wait = pace.nextFetchAtMs - clock.now()) {
        await sleep(clock, Math.min(wait, POLITENESS_SLICE_MS), signal);
        if (this.deps.mustYield() || !this.mayFetch(host)) break;
      }
      // The site's Crawl-delay spaces every request to its server, whichever host they are for; a host
      // whose server is spaced that long parks, as for its own long waits, rather than hold a worker.
      if (rules.crawlDelayMs) this.deps.ipGate.crawlDelay(state.ip as string, rules.crawlDelayMs);
      const spacedMs = this.deps.ipGate.spacingWaitMs(state.ip as string);
      if (spacedMs > PARK_LONGER_WAITS_MS) {
        frontier.putBack(host, entry);
        return { untilMs: clock.now() + spacedMs, reason: "crawl-delay" };
      }
      endTurn = await this.deps.turns.acquire(frontier.waitingOf(host), signal);
      release = await this.deps.ipGate.acquire(state.ip as string, signal);
    } catch (error) {
      // Stopped while waiting: the URL goes back to the head of its queue, untouched.
      endTurn();
      frontier.putBack(host, entry);
      throw error;
    }
    if (this.deps.mustYield() || !this.mayFetch(host) || this.deps.blacklisted(host)) {
      // Paused or stopping while waiting for politeness, or the host changed hands meanwhile (its new
      // owner may be fetching it already), or was blacklisted: no new request; the URL waits at the
      // head of its queue, which goes to the new owner with the rest (or is dropped as blacklisted).
      release();
      endTurn();
      frontier.putBack(host, entry);
      return undefined;
    }
    let result: FetchResult | undefined;
    let failure: ErrorCode | undefined;
    let reason: string | undefined;
    const startedAtMs = clock.now();
    try {
      result = await this.deps.fetch(entry.url, signal, conditionalHeaders(previous));
    } catch (error) {
      if (signal.aborted) {
        endTurn();
        frontier.putBack(host, entry);
        throw error;
      }
      failure = classifyFetchError(error);
      reason = failureReason(error);
    } finally {
      release();
      this.paceAfter(state, rules, startedAtMs);
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
        return { untilMs: retryAt, reason: "retry" };
      }
      if (isTransient(code)) state.failedInARow++;
      if (code === ErrorCode.TlsFailed) this.tlsFailedAt(host, state, originOf(entry.url), reason);
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
      this.deps.ipGate.refused(state.ip as string, retryAfter);
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
    unsynced.add(this.finishPage(host, entry, result, signal, previous, endTurn));
    return undefined;
  }

  /**
   * Archives a fetched page, follows its links, logs it and completes its URL, durably; a failure puts
   * the URL back at the head of its queue (not archived, so not done) and is thrown. With `--recrawl`,
   * the page's history (`previous`, for a revisit) is updated in the same commit. The page's turn ends
   * once it is processed, before its commit.
   */
  private async finishPage(
    host: string,
    entry: StoredQueueEntry,
    result: FetchResult,
    signal: AbortSignal,
    previous: PageHistory | undefined,
    endTurn: () => void,
  ): Promise<void> {
    const { frontier, revisits } = this.deps;
    let archived: ArchivedPage;
    try {
      archived = await this.deps.archive.store(result, signal, previous?.capture);
      const { revisitOf, change } = archived;
      const links = entry.sitemap
        ? await this.deps.sitemaps.read(host, entry, result)
        : change === "unchanged" ||
            change === "not-modified" ||
            (await this.followedBefore(revisitOf, entry.url))
          ? 0
          : followLinks(result, { url: entry.url, depth: entry.depth, host }, this.options, this.deps);
      this.deps.stats.recordFetch(result.wireBytes, result.status);
      if (revisitOf !== undefined) this.deps.stats.recordDuplicate(result.rawBody.byteLength);
      if (result.status >= 400) this.deps.stats.recordError(`http_${Math.floor(result.status / 100)}xx`);
      // Archived, but only a prefix: an endless, huge or bomb body is a failure worth counting.
      if (result.truncated) this.deps.stats.recordError(ErrorCode.BodyTooLarge);
      const history = entry.sitemap ? undefined : revisits?.visited(host, entry, result, archived, previous);
      this.deps.archive.log({
        ...pageLogEntry(entry, result, links, revisitOf?.url),
        ...(history === undefined ? {} : recrawlLogFields(history, change)),
      });
      frontier.complete(host, entry, { done: true, counted: !entry.revisit });
    } catch (error) {
      // Whatever failed, the URL is not lost: back to the head of its queue, if still taken.
      if (frontier.isTaken(host, entry)) frontier.putBack(host, entry);
      throw error;
    } finally {
      endTurn();
    }
    await frontier.commit();
    // Synced: the payload's owner may now point later copies at this response.
    void archived.settle();
  }

  /**
   * Whether the links of a page at `url` whose payload `original` stored first were followed already:
   * the same bytes under the same base have the same links, and when this agent's durable state has
   * the original as done, its links were queued or handed on in that same batch. Another agent's
   * original (or this URL's own, fetched again after its agent died) may have taken its links down
   * with it: they are followed again (the seen sets drop what is known).
   */
  private async followedBefore(original: PayloadOriginal | undefined, url: string): Promise<boolean> {
    if (original === undefined || original.url === url || !sameLinkBase(original.url, url)) return false;
    return (await this.deps.frontier.wasFetched([original.url]))[0] === true;
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
  ): Promise<{ untilMs: number; reason: "throttled" }> {
    const { clock, frontier } = this.deps;
    const retryAfter = responseHeader(result, "retry-after");
    const untilMs = state.pace.pushedBack(clock.now(), this.delayMs, retryAfter);
    this.deps.archive.log({ ...pageLogEntry(entry, result, 0), willRetry: true });
    this.deps.stats.fetchRetries++;
    frontier.retryLater(host, entry, attempts);
    await frontier.commit();
    return { untilMs, reason: "throttled" };
  }

  /** Resolves the host's address once per run; false when it cannot be resolved or reached. */
  private async ensureAddress(host: string, state: HostRuntime, signal: AbortSignal): Promise<boolean> {
    if (state.ip !== undefined) return true;
    if (state.dnsError !== undefined) return false;
    try {
      state.ip = await this.deps.resolve(hostnameOf(host), signal);
      return true;
    } catch (error) {
      if (signal.aborted) throw error;
      state.dnsError = isUbiError(error) ? error.code : ErrorCode.DnsNotFound;
      if (state.dnsError === ErrorCode.DnsNotFound) this.deps.stats.unresolvedHostsThisRun++;
      return false;
    }
  }

  private robotsUnavailable(host: string, state: HostRuntime, rules: RobotsRules): VisitOutcome {
    state.robotsAttempts++;
    if (state.robotsAttempts < this.options.maxRobotsAttempts) return this.waitForRobotsRetry(state, rules);
    // Given up: its URLs are dropped as they come (see visit), and the reason is kept.
    this.deps.frontier.record(host).abandoned = "robots-unavailable";
    this.deps.frontier.touch(host);
    this.deps.stats.recordError("robots_unavailable");
    return { kind: "yielded" };
  }

  /** Parks the host until robots.txt may be asked again (a request to the host: politeness applies). */
  private waitForRobotsRetry(state: HostRuntime, rules: RobotsRules): VisitOutcome {
    const now = this.deps.clock.now();
    const retryAtMs = rules.retryAtMs ?? now + 60_000;
    return {
      kind: "parked",
      untilMs: Math.max(retryAtMs, state.pace.nextFetchAtMs, now + 1),
      reason: "robots",
    };
  }

  /** Drops a URL of a host whose Crawl-delay is over the operator's bound, saying so in the crawl log. */
  private skipForCrawlDelay(host: string, entry: StoredQueueEntry, crawlDelayMs: number): void {
    this.deps.archive.log(crawlDelaySkipLogEntry(entry, this.deps.clock.now(), crawlDelayMs));
    this.drop(host, entry, "crawl-delay-too-long");
  }

  private drop(host: string, entry: StoredQueueEntry, reason: DropReason): void {
    this.deps.stats.recordDrop(reason);
    this.deps.frontier.complete(host, entry, { done: false, counted: false });
  }

  /**
   * `origin`'s TLS handshake failed (its certificate could not be verified, or TLS itself failed): its
   * queued URLs fail at once from now on, and the operator is told why, once per origin.
   */
  private tlsFailedAt(host: string, state: HostRuntime, origin: string, reason: string | undefined): void {
    state.tlsFailed ??= new Set();
    if (state.tlsFailed.has(origin)) return;
    state.tlsFailed.add(origin);
    this.deps.logger.warn(
      { event: "tls-failed", host, origin, reason },
      `${origin}: TLS failed (${reason ?? "no reason given"}); its URLs fail as ${ErrorCode.TlsFailed}, never fetched over plain HTTP`,
    );
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

  private runtimeOf(host: string): HostRuntime {
    let state = this.runtime.get(host);
    if (!state) {
      state = { pace: new HostPace(), robotsAttempts: 0, failedInARow: 0 };
      this.runtime.set(host, state);
    }
    return state;
  }
}

/**
 * What a recrawled page's crawl log line adds: its visits so far, what a revisit found (`recrawl`:
 * not-modified, unchanged or changed) and when the page is due again (`nextFetch`, absent past the
 * horizon).
 */
function recrawlLogFields(history: PageHistory, change: string | undefined): Record<string, unknown> {
  return {
    visits: history.visits,
    ...(change === undefined ? {} : { recrawl: change }),
    ...(history.nextAtMs === undefined ? {} : { nextFetch: new Date(history.nextAtMs).toISOString() }),
  };
}
