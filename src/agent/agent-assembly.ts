import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Clock, systemClock } from "../clock.js";
import { HostsFileResolver, NetPolicy, type Resolver, SystemResolver } from "../fetching/index.js";
import {
  HostScheduler,
  type LoopLoad,
  PageTurns,
  TURN_GOVERNOR_DEFAULTS,
  TurnGovernor,
} from "../frontier/index.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import { Recrawler, revisitPolicy } from "../recrawl/index.js";
import { prepareDataDir, recordWarcDir } from "../storage/data-dir.js";
import { robotsSnapshotOp } from "../storage/index.js";
import { AGENT_DEFAULTS, type AgentOptions, productToken } from "./agent-options.js";
import type { ClusterHooks } from "./cluster-hooks.js";
import { CrawlDelayBound } from "./crawl-delay-bound.js";
import type { CrawlRights } from "./crawl-rights.js";
import type { CrawlStats } from "./crawl-stats.js";
import { CrossOver } from "./cross-over.js";
import { type Closable, type DurableState, openDurableState } from "./durable-state.js";
import type { HostBlacklist } from "./host-blacklist.js";
import { HostVisitor } from "./host-visitor.js";
import { DEFAULT_MAX_FOUND_LINKS, LinkOrigins } from "./link-origins.js";
import { LinkRouter, type UrlOwnership } from "./link-router.js";
import { PageArchive } from "./page-archive.js";
import { openPayloadDedup, type PayloadDedup } from "./payload-dedup.js";
import { keptAsideSince, loadBlacklist, restoredStats } from "./saved-state.js";
import { DEFAULT_MAX_SITEMAPS_PER_HOST, SitemapReader } from "./sitemap-reader.js";
import { StorageGuard } from "./storage-guard.js";
import { WarcScrub } from "./warc-scrub.js";
import { openWebAccess, type WebAccess } from "./web-access.js";

/** Fetches in one host visit before the host gives its slot to waiting hosts. */
export const QUANTUM_PAGES = 64;
/**
 * Pages of one host fetched and not yet durable at most (the one being fetched included): the host's next
 * fetches overlap its last pages' archiving and commit, and a crash fetches at most this many pages of a
 * host again. With 2, a host's requests came one group commit apart while the agent was busy (the
 * biggest host of bench/scaling.mjs crawled alone for ~20 s at the end of the crawl); with 8, hardly at
 * all (bench/README, "Page turns").
 */
export const UNSYNCED_PAGES_PER_HOST = 8;
/** How often the event loop's delay is sampled for the turn governor, ms. */
const LOOP_DELAY_RESOLUTION_MS = 1;
/** Links read from one page at most. */
const MAX_LINKS_PER_PAGE = 10_000;

/** An agent's machinery, wired: what {@link assembleAgent} builds and the agent runs. */
export interface AssembledAgent
  extends Omit<DurableState, "warcDir" | "fingerprinter">,
    Pick<WebAccess, "fetcher" | "ipActivity" | "bandwidth">,
    PayloadDedup {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stats: CrawlStats;
  readonly archive: PageArchive;
  readonly router: LinkRouter;
  readonly visitor: HostVisitor;
  readonly scheduler: HostScheduler;
  /** Turns to fetch and process a page, the longest queues first. */
  readonly turns: PageTurns;
  /** Sets how many pages are fetched and processed at once from how busy the event loop is. */
  readonly turnGovernor: TurnGovernor;
  /** The cross-over mode's held links and crossed hosts (`--mode cross` in a cluster only). */
  readonly crossOver: CrossOver | undefined;
  /** Links queued here from other hosts' pages, by the host they were found on (in a cluster only). */
  readonly linkOrigins: LinkOrigins | undefined;
  /** Hosts never fetched, changed at runtime (`ubicrawl ctl`) and kept in the state. */
  readonly blacklist: HostBlacklist;
  /** Since when this state keeps the URLs dropped for blacklisted hosts aside (ms since the epoch). */
  readonly keptAsideSinceMs: number;
  /** Stops fetching while the disk refuses writes, and resumes when it takes them again. */
  readonly guard: StorageGuard;
  /** Continuous crawling's histories and plans (`--recrawl`); undefined when off. */
  readonly recrawler: Recrawler | undefined;
  /** The finished WARC files read back against their indexes while the agent runs. */
  readonly scrub: WarcScrub;
}

/** What {@link assembleAgent} is given besides the options. */
export interface AssemblyDeps {
  readonly clock?: Clock;
  readonly cluster?: ClusterHooks;
  readonly logger?: Logger;
}

/**
 * Opens the agent's state under `options.dataDir` (validated options) and wires its parts: the store,
 * frontier, fetcher, robots cache, WARC writer and crawl log under one group commit, the visitor and
 * scheduler, the link router, and what a cluster adds (`deps.cluster`). Starts nothing.
 */
export async function assembleAgent(options: AgentOptions, deps: AssemblyDeps = {}): Promise<AssembledAgent> {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? defaultLogger();
  // Bad flags (CIDRs, a missing hosts file) fail before any state is opened.
  const resolver: Resolver = options.hostsFile
    ? await HostsFileResolver.fromFile(options.hostsFile, {}, { clock, logger })
    : new SystemResolver({}, { clock });
  const netPolicy = new NetPolicy({ allow: options.allowNet });
  // A file, an unwritable folder or another agent's folder fail here, before LevelDB says it its way.
  await prepareDataDir(options.dataDir, options.id);
  // So `ubicrawl report` and `ubicrawl export`, given the data dir, find the WARC files elsewhere.
  await recordWarcDir(options.dataDir, options.warcDir);
  const opened: Closable[] = [];
  try {
    return await openParts(options, { clock, logger, resolver, netPolicy, cluster: deps.cluster }, opened);
  } catch (error) {
    // A failed open (a corrupt saved record, a full disk) leaves no LevelDB lock or open file behind:
    // the same process can open the folder again.
    for (const part of opened.reverse()) await part.close().catch(() => {});
    throw error;
  }
}

/** The agent's parts, opened and wired; each part holding a resource is pushed on `opened` first. */
async function openParts(
  options: AgentOptions,
  deps: {
    readonly clock: Clock;
    readonly logger: Logger;
    readonly resolver: Resolver;
    readonly netPolicy: NetPolicy;
    readonly cluster: ClusterHooks | undefined;
  },
  opened: Closable[],
): Promise<AssembledAgent> {
  const { clock, logger } = deps;
  let scheduler: HostScheduler | undefined;
  // In a cluster whose hosts are handed over: the links found on a host's pages that wait here, given to
  // another agent to keep when the host is handed over (see link-origins.ts).
  const linkOrigins =
    deps.cluster !== undefined && deps.cluster.handsOverHosts !== false
      ? new LinkOrigins(DEFAULT_MAX_FOUND_LINKS, (maxLinks) =>
          logger.warn(
            { event: "link-origins-full", maxLinks },
            `over ${maxLinks} links found on other hosts' pages wait here: those past it are not given to ` +
              "another agent to keep when their page's host is handed over (a crash right after may lose them)",
          ),
        )
      : undefined;
  const frontierHooks = {
    onHostReady: (host: string) => scheduler?.markReady(host),
    onQueueGrew: (host: string) => scheduler?.queueGrew(host),
    ...(linkOrigins ? { onSettled: (url: string) => linkOrigins.settled(url) } : {}),
  };
  const { store, crawlLog, warcDir, warc, warcOffload, committer, fingerprinter, frontier } =
    await openDurableState(options, { logger, frontierHooks }, opened);
  const { fetcher, ipActivity, ipGate, robots, bandwidth, fetchPage } = await openWebAccess(
    options,
    {
      ...deps,
      store,
      clusterIpLimiter: deps.cluster?.ipLimiter,
      pausedSignal: () => scheduler?.pausedSignal,
      stoppedSignal: () => scheduler?.stoppedSignal,
    },
    opened,
  );
  const stats = await restoredStats(store, committer, clock);
  const { digestRegistry, duplicates } = await openPayloadDedup(options, {
    clock,
    store,
    committer,
    stats,
    peers: deps.cluster?.digests,
  });
  const recrawl = options.recrawl?.mode === "off" ? undefined : options.recrawl;
  const archive = new PageArchive(warc, crawlLog, duplicates, recrawl !== undefined);
  const ownRights: CrawlRights = deps.cluster
    ? { owns: deps.cluster.owns, admit: deps.cluster.admit, mayFetch: deps.cluster.mayFetch }
    : { owns: () => true };
  const crossOver =
    options.linkMode === "cross" && deps.cluster
      ? new CrossOver({
          clock,
          outOfWork: () => scheduler?.isIdle === true && frontier.isEmpty,
          queue: (url, depth, host, traits) => frontier.add(url, depth, host, traits),
          adopted: () => {
            frontier.commit().catch(() => {});
            for (const host of frontier.hostsWithWork()) scheduler?.markReady(host);
          },
        })
      : undefined;
  // What a visit asks: the cluster's answers, widened in the cross-over mode to the hosts it crossed into.
  const rights = crossOver ? crossOver.widen(ownRights) : ownRights;
  const blacklist = await loadBlacklist(store, logger);
  const keptAsideSinceMs = await keptAsideSince(store, committer, clock);
  const selfOnly: UrlOwnership = { ownerOfUrl: () => options.id };
  const router = new LinkRouter(
    {
      maxDepth: options.maxDepth,
      scopes: options.scopes,
      mode: options.linkMode,
      ...(options.replicatedUrls && options.replicatedUrls.length > 0
        ? { replicated: new Set(options.replicatedUrls) }
        : {}),
    },
    {
      selfId: options.id,
      ownership: deps.cluster ? deps.cluster.ownership : () => selfOnly,
      frontier,
      exchange: deps.cluster?.exchange,
      ...(linkOrigins ? { origins: linkOrigins } : {}),
      stats,
      ...(crossOver ? { crossOver } : {}),
    },
  );
  const scrub = new WarcScrub(options.scrubIntervalMs ?? AGENT_DEFAULTS.scrubIntervalMs, {
    store,
    committer,
    frontier,
    warcDir,
    crawlLogPath: crawlLog.path,
    // A file the --on-warc-closed hook moves away is gone before the state records it moved.
    goneIsLost: warcOffload === undefined,
    ownsHere: (url, host) => router.ownsHere(url, host),
    markReady: (host) => scheduler?.markReady(host),
    clock,
    logger,
  });
  const turns = new PageTurns(options.maxActiveHosts * UNSYNCED_PAGES_PER_HOST);
  const turnGovernor = new TurnGovernor(
    { turns, loop: loopLoad(), clock },
    { ...TURN_GOVERNOR_DEFAULTS, ceiling: options.maxActiveHosts * UNSYNCED_PAGES_PER_HOST },
  );
  const recrawler =
    recrawl &&
    new Recrawler(recrawl, {
      store,
      committer,
      fingerprint: (url) => fingerprinter.fingerprint(url),
      queue: (url, depth, host) => frontier.requeue(url, depth, host, { revisit: true }),
      owns: rights.owns,
      policy: revisitPolicy(recrawl, clock, deps.cluster?.revisitBudget),
      clock,
      logger,
    });
  await recrawler?.load();
  const visitor = new HostVisitor(
    {
      delayMs: options.delayMs,
      delayFactor: options.delayFactor,
      maxPagesPerHost: options.maxPagesPerHost,
      quantumPages: QUANTUM_PAGES,
      maxUnsyncedPages: UNSYNCED_PAGES_PER_HOST,
      maxLinksPerPage: MAX_LINKS_PER_PAGE,
      maxRobotsAttempts: options.maxRobotsAttempts,
      maxFetchAttempts: options.maxFetchAttempts,
      fetchRetryMs: options.fetchRetryMs,
      userAgentToken: productToken(options.userAgent),
    },
    {
      frontier,
      resolve: (hostname, signal) => deps.resolver.resolve(hostname, signal),
      robots: (origin) => robots.answer(origin),
      saveRobots: (rules) => committer.add(robotsSnapshotOp(rules.origin, rules.toJSON())),
      fetch: fetchPage,
      ipGate,
      turns,
      archive,
      router,
      sitemaps: new SitemapReader(
        { mode: options.sitemaps, maxSitemapsPerHost: DEFAULT_MAX_SITEMAPS_PER_HOST },
        { router, stats, logger },
      ),
      stats,
      clock,
      mustYield: () => scheduler?.isPaused === true,
      pausedSignal: () => scheduler?.pausedSignal,
      owns: rights.owns,
      blacklisted: (host) => blacklist.matches(host),
      crawlDelayBound: new CrawlDelayBound(
        { maxCrawlDelayMs: options.maxCrawlDelaySeconds * 1000, policy: options.crawlDelayPolicy },
        { logger },
      ),
      logger,
      ...(rights.admit ? { admit: rights.admit } : {}),
      ...(rights.mayFetch ? { mayFetch: rights.mayFetch } : {}),
      ...(deps.cluster?.hands ? { hands: deps.cluster.hands } : {}),
      ...(deps.cluster?.stranded ? { stranded: deps.cluster.stranded } : {}),
      ...(recrawler ? { revisits: recrawler } : {}),
    },
  );
  const guard = new StorageGuard({
    clock,
    pause: () => scheduler?.pause(),
    resume: () => scheduler?.resume(),
    retryWrites: async () => {
      await warc.recover();
      await warc.flush();
      await crawlLog.flush();
      await committer.commit();
    },
    logger,
  });
  scheduler = new HostScheduler(
    // No visit before Agent.start: URLs a peer hands over during the join, a lost page or an overdue
    // revisit read back wait for the agent's view and the cluster's blacklist.
    { maxActiveHosts: options.maxActiveHosts, unvisitedRank: QUANTUM_PAGES, deferVisits: true },
    {
      visit: (host, signal) => visitor.visit(host, signal),
      hasWork: (host) => frontier.waitingOf(host) > 0 && rights.owns(host),
      queueLength: (host) => frontier.waitingOf(host),
      unvisited: (host) => (frontier.recordIfKnown(host)?.fetched ?? 0) === 0,
      onVisitError: (host, error) => {
        if (guard.handle(error)) return;
        stats.recordError("internal");
        logger.error({ event: "visit-failed", host, err: error }, `the visit of ${host} failed`);
      },
      clock,
    },
  );
  return {
    clock,
    store,
    frontier,
    fetcher,
    committer,
    warc,
    warcOffload,
    crawlLog,
    archive,
    digestRegistry,
    duplicates,
    visitor,
    crossOver,
    linkOrigins,
    bandwidth,
    scheduler,
    turns,
    turnGovernor,
    router,
    stats,
    blacklist,
    keptAsideSinceMs,
    logger,
    guard,
    recrawler,
    scrub,
    ipActivity,
  };
}

/** How the event loop did since the last call, for the turn governor. */
function loopLoad(): () => LoopLoad {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  let last = performance.eventLoopUtilization();
  return () => {
    const delayMs = histogram.count > 0 ? histogram.mean / 1e6 : 0;
    histogram.reset();
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return { delayMs, utilization };
  };
}
