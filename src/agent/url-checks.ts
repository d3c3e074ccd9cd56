import { watchAbort } from "../abort-watch.js";
import type { Clock } from "../clock.js";
import { ErrorCode } from "../errors.js";
import type { Frontier, VisitOutcome } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import type { PageRevisits } from "../recrawl/index.js";
import type { RobotsRules } from "../robots/index.js";
import type { CrawlLogInput, StoredQueueEntry } from "../storage/index.js";
import { originOf } from "../url/index.js";
import type { CrawlDelayBound } from "./crawl-delay-bound.js";
import { crawlDelaySkipLogEntry } from "./crawl-log-entries.js";
import type { CrawlStats, DropReason } from "./crawl-stats.js";
import { currentAddress } from "./host-address.js";
import { type HostRuntime, markTlsFailed } from "./host-runtime.js";
import type { SitemapReader } from "./sitemap-reader.js";
import type { UnsyncedPages } from "./unsynced-pages.js";

/**
 * The checks a URL taken from its host's queue passes before a request goes out for it, in order:
 * still this agent's to fetch, not blacklisted, not fetched before, its host not abandoned, under the
 * host's page limit, its host's address known, its origin's TLS usable, robots.txt answered, its
 * Crawl-delay within the operator's bound, allowed by robots.txt. Each check is a unit that answers a
 * {@link UrlVerdict} or passes; what becomes of the URL is settled in one place, by the visitor.
 */

/** A URL taken from its host's queue, on its way to a request. */
export interface TakenUrl {
  /** The host key of its queue. */
  readonly host: string;
  /** The queue entry taken: the URL, its depth and traits. */
  readonly entry: StoredQueueEntry;
  /** The host's facts of this run. */
  readonly state: HostRuntime;
  /** The host's pages fetched and not durable yet (the page limit and the done check wait for them). */
  readonly unsynced: UnsyncedPages;
  /** Aborted when the visit is stopped: a check waiting (a DNS lookup) throws. */
  readonly signal: AbortSignal;
}

/** What the checks decide for a taken URL. */
export type UrlVerdict =
  /** It passed every check: fetched under `rules`. */
  | { readonly kind: "fetch"; readonly rules: RobotsRules }
  /** Back to the head of its queue, untouched; the visit ends with `outcome`, or goes on without one. */
  | { readonly kind: "put-back"; readonly outcome?: VisitOutcome }
  /** Kept aside until its host comes off the blacklist. */
  | { readonly kind: "set-aside" }
  /** Not fetched, and counted as dropped for `reason`. */
  | { readonly kind: "drop"; readonly reason: DropReason }
  /** A revisit that gives way to its page's newer plan: completed, not counted. */
  | { readonly kind: "superseded" }
  /** Failed for good with no request sent: logged and counted as `code`. */
  | { readonly kind: "fail"; readonly code: ErrorCode; readonly reason?: string };

/** A verdict other than "fetch": the URL goes no further. */
export type Stop = Exclude<UrlVerdict, { kind: "fetch" }>;

/** The limits the checks apply. */
export interface UrlCheckOptions {
  /** Fetches per host at most (robots.txt excluded). */
  readonly maxPagesPerHost: number;
  /** Attempts to get a host's robots.txt before its URLs are given up. */
  readonly maxRobotsAttempts: number;
}

/** What the checks read and tell. */
export interface UrlCheckDeps {
  /** The done set and the hosts' durable records. */
  readonly frontier: Pick<Frontier, "needsFetchedCheck" | "wasFetched" | "record" | "touch" | "commit">;
  /** Where robots.txt answers, unresolved hosts and given-up hosts are counted. */
  readonly stats: Pick<
    CrawlStats,
    "recordRobots" | "recordError" | "unresolvedHostsThisRun" | "addressChangesThisRun"
  >;
  readonly clock: Clock;
  /** Where a TLS failure is told, once per origin, and a host's move to another address. */
  readonly logger: Logger;
  /** True when visits should hand back their slot now (pause, stop). */
  readonly mustYield: () => boolean;
  /** Aborted while visits are paused: the wait for a robots.txt answer ends there (see `HostVisitorDeps`). */
  readonly pausedSignal?: () => AbortSignal | undefined;
  /** True while this agent may send `host` a request (it owns it and holds its crawl). */
  readonly mayFetch: (host: string) => boolean;
  /** True when `host` is on the runtime blacklist. */
  readonly blacklisted: (host: string) => boolean;
  /** The address of a host name (the agent's resolver: its first address). */
  readonly resolve: (hostname: string, signal: AbortSignal) => Promise<string>;
  /** An origin's robots.txt rules: cached, or fetched now. */
  /** The rules of `origin`: at once when cached and fresh, else once robots.txt is fetched. */
  readonly robots: (origin: string) => RobotsRules | Promise<RobotsRules>;
  /** Keeps freshly fetched robots.txt rules durably, so a restart does not fetch them again. */
  readonly saveRobots: (rules: RobotsRules) => void;
  /** Queues the sitemaps a fresh robots.txt lists. */
  readonly sitemaps: Pick<SitemapReader, "queueListed">;
  /** The operator's bound on Crawl-delay (--max-crawl-delay, --crawl-delay-policy). */
  readonly crawlDelayBound: Pick<CrawlDelayBound, "skips">;
  /** A request to the host (here robots.txt) that started at `startedAtMs` just ended: its pace counts it. */
  readonly paced: (state: HostRuntime, rules: RobotsRules, startedAtMs: number) => void;
  /** Writes a line to the crawl log. */
  readonly log: (line: CrawlLogInput) => void;
  /** Continuous crawling's page histories. Absent: off. */
  readonly revisits?: Pick<PageRevisits, "history">;
}

/** A check that passes (undefined) or stops the URL. */
type Check = (
  url: TakenUrl,
  deps: UrlCheckDeps,
  options: UrlCheckOptions,
) => Stop | undefined | Promise<Stop | undefined>;

/** The checks before robots.txt is asked, in order. */
const BEFORE_ROBOTS: readonly Check[] = [
  stillMayFetch,
  notBlacklisted,
  notFetchedBefore,
  hostNotAbandoned,
  underPageLimit,
  addressKnown,
  originTlsUsable,
];

/** Runs the checks in order: the first that stops the URL decides; else it is fetched under its robots.txt. */
export async function checkTakenUrl(
  url: TakenUrl,
  deps: UrlCheckDeps,
  options: UrlCheckOptions,
): Promise<UrlVerdict> {
  for (const check of BEFORE_ROBOTS) {
    const stop = await check(url, deps, options);
    if (stop !== undefined) return stop;
  }
  const rules = await robotsAnswered(url, deps, options);
  if (!("isAllowed" in rules)) return rules;
  return crawlDelayWithinBound(url, rules, deps) ?? allowedByRobots(url, rules) ?? { kind: "fetch", rules };
}

/** Paused, or the host handed over while its URL was being taken: not even robots.txt is asked. */
export function stillMayFetch(url: TakenUrl, deps: UrlCheckDeps): Stop | undefined {
  return deps.mustYield() || !deps.mayFetch(url.host)
    ? { kind: "put-back", outcome: { kind: "yielded" } }
    : undefined;
}

/** A blacklisted host's URL is not fetched, but not forgotten either: kept aside until it comes off. */
export function notBlacklisted(url: TakenUrl, deps: UrlCheckDeps): Stop | undefined {
  return deps.blacklisted(url.host) ? { kind: "set-aside" } : undefined;
}

/**
 * Skips a URL done before: here (queued again after a peer died), or by a previous owner of the host
 * (its done set came with the hand-over). The check reads the durable record, so the host's pages
 * still being committed are waited for first: one of them may be this URL's other copy.
 */
export async function notFetchedBefore(url: TakenUrl, deps: UrlCheckDeps): Promise<Stop | undefined> {
  // A revisit is a done URL by design: its plan was cleared when it was queued, so it is queued once.
  if (url.entry.revisit) return (await revisitSuperseded(url, deps)) ? { kind: "superseded" } : undefined;
  if (!deps.frontier.needsFetchedCheck(url.host)) return undefined;
  await url.unsynced.drain();
  return (await deps.frontier.wasFetched([url.entry.url]))[0]
    ? { kind: "drop", reason: "fetched-before" }
    : undefined;
}

/**
 * A queued revisit whose page has a plan again gives way to it: the plan came with a later history
 * handed over with the host (or planned on its adoption), so fetching now would visit the page twice
 * for one due time. The plan queues it again when due.
 */
async function revisitSuperseded(url: TakenUrl, deps: UrlCheckDeps): Promise<boolean> {
  const { frontier, revisits } = deps;
  if ((await revisits?.history(url.host, url.entry.url))?.nextAtMs === undefined) return false;
  // The commit that queued it clears its plan, and may not be written yet: wait for it, look again.
  await frontier.commit();
  return (await revisits?.history(url.host, url.entry.url))?.nextAtMs !== undefined;
}

/** A host given up (its robots.txt never answered) has its URLs dropped as they come. */
export function hostNotAbandoned(url: TakenUrl, deps: UrlCheckDeps): Stop | undefined {
  return deps.frontier.record(url.host).abandoned === undefined
    ? undefined
    : { kind: "drop", reason: "abandoned" };
}

/**
 * The host's page limit: pages still being committed count once they are, so they are waited for near
 * the limit. A revisit counted at its first fetch.
 */
export async function underPageLimit(
  url: TakenUrl,
  deps: UrlCheckDeps,
  options: UrlCheckOptions,
): Promise<Stop | undefined> {
  if (url.entry.revisit) return undefined;
  const record = deps.frontier.record(url.host);
  if (record.fetched + url.unsynced.size >= options.maxPagesPerHost) await url.unsynced.drain();
  return record.fetched >= options.maxPagesPerHost ? { kind: "drop", reason: "page-limit" } : undefined;
}

/**
 * Resolves the host's address now (see {@link currentAddress}: a moved host is told); a host that cannot
 * be resolved or reached fails its URLs.
 */
export async function addressKnown(url: TakenUrl, deps: UrlCheckDeps): Promise<Stop | undefined> {
  const { host, state, signal } = url;
  return (await currentAddress(host, state, signal, deps)) === undefined
    ? { kind: "fail", code: state.dnsError ?? ErrorCode.DnsNotFound }
    : undefined;
}

/** An origin whose TLS handshake failed this run fails its URLs at once (never fetched over plain HTTP). */
export function originTlsUsable(url: TakenUrl): Stop | undefined {
  return url.state.tlsFailed?.has(originOf(url.entry.url))
    ? { kind: "fail", code: ErrorCode.TlsFailed }
    : undefined;
}

/**
 * The rules of the URL's origin, asked of robots.txt (cached, or fetched now: that request is counted,
 * kept, paced like a page and its sitemaps queued). An unavailable robots.txt puts the URL back and parks
 * the host until it may be asked again, or abandons the host after `maxRobotsAttempts`; a TLS failure or
 * an address --allow-net refuses fails the URL, as retrying cannot help.
 */
export async function robotsAnswered(
  url: TakenUrl,
  deps: UrlCheckDeps,
  options: UrlCheckOptions,
): Promise<RobotsRules | Stop> {
  const { host, state } = url;
  const origin = originOf(url.entry.url);
  const askedAtMs = deps.clock.now();
  /**
   * A robots.txt fetched for this ask: counted, kept, and its request paces the host (not one the
   * agent's stop cut before it was sent: nothing was asked of the server).
   */
  const took = (rules: RobotsRules) => {
    if (rules.fetchedAtMs < askedAtMs || rules.error === ErrorCode.Stopped) return;
    deps.stats.recordRobots(rules.status);
    deps.saveRobots(rules);
    deps.paced(state, rules, askedAtMs);
    deps.sitemaps.queueListed(host, rules);
  };
  // A robots.txt request waits for its address's slot like any (shared by every URL of the origin, so
  // not cut itself): a pause puts the URL back at once instead, and the answer is taken when it comes.
  const answer = deps.robots(origin);
  const paused = deps.pausedSignal?.();
  const rules =
    answer instanceof Promise ? await unlessPaused(answer, paused) : paused?.aborted ? undefined : answer;
  if (rules === undefined) {
    if (answer instanceof Promise) answer.then(took, () => {});
    return { kind: "put-back", outcome: { kind: "yielded" } };
  }
  took(rules);
  const fresh = rules.fetchedAtMs >= askedAtMs;
  if (rules.status !== "unavailable") {
    state.robotsAttempts = 0;
    return rules;
  }
  if (rules.error === ErrorCode.TlsFailed) {
    markTlsFailed(state, { host, origin }, rules.reason, deps.logger);
    return {
      kind: "fail",
      code: ErrorCode.TlsFailed,
      ...(rules.reason === undefined ? {} : { reason: rules.reason }),
    };
  }
  if (rules.error === ErrorCode.AddressForbidden) {
    // Refused by --allow-net, not an outage: retrying cannot help, so fail like a missing name.
    state.dnsError = rules.error;
    return { kind: "fail", code: rules.error };
  }
  // Only a fresh answer is an attempt: a timer may wake the host a hair before the cached failure
  // expires, and that must not count as asking again.
  if (fresh) state.robotsAttempts++;
  if (!fresh || state.robotsAttempts < options.maxRobotsAttempts) {
    return { kind: "put-back", outcome: robotsRetryWait(state, rules, deps.clock.now()) };
  }
  // Given up: its URLs are dropped as they come (hostNotAbandoned), and the reason is kept.
  deps.frontier.record(host).abandoned = "robots-unavailable";
  deps.frontier.touch(host);
  deps.stats.recordError("robots_unavailable");
  return { kind: "put-back", outcome: { kind: "yielded" } };
}

/** Parks the host until robots.txt may be asked again (a request to the host: politeness applies). */
function robotsRetryWait(state: HostRuntime, rules: RobotsRules, nowMs: number): VisitOutcome {
  return {
    kind: "parked",
    untilMs: Math.max(rules.retryAtMs ?? nowMs + 60_000, state.pace.nextFetchAtMs, nowMs + 1),
    reason: "robots",
  };
}

/** A host whose Crawl-delay is over the operator's bound (--crawl-delay-policy skip) has its URLs dropped, said in the crawl log. */
export function crawlDelayWithinBound(
  url: TakenUrl,
  rules: RobotsRules,
  deps: UrlCheckDeps,
): Stop | undefined {
  if (!deps.crawlDelayBound.skips(url.host, rules)) return undefined;
  deps.log(crawlDelaySkipLogEntry(url.entry, deps.clock.now(), rules.askedCrawlDelayMs ?? 0));
  return { kind: "drop", reason: "crawl-delay-too-long" };
}

/** A URL robots.txt disallows is dropped. */
export function allowedByRobots(url: TakenUrl, rules: RobotsRules): Stop | undefined {
  return rules.isAllowed(url.entry.url) ? undefined : { kind: "drop", reason: "robots" };
}

/** `answer`, or undefined as soon as `paused` aborts (the answer still settles for whoever else waits). */
export async function unlessPaused<T>(
  answer: Promise<T>,
  paused: AbortSignal | undefined,
): Promise<T | undefined> {
  if (paused === undefined) return answer;
  if (paused.aborted) {
    answer.catch(() => {});
    return undefined;
  }
  let unwatch = () => {};
  const cut = new Promise<undefined>((resolve) => {
    unwatch = watchAbort(paused, () => resolve(undefined));
  });
  try {
    return await Promise.race([answer, cut]);
  } finally {
    unwatch();
    answer.catch(() => {});
  }
}
