import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Clock, systemClock } from "../clock.js";
import {
  DEFAULT_CLAIM_LEASE_MS,
  type DigestPeers,
  DigestRegistry,
  DuplicateDetector,
} from "../dedup/index.js";
import { ErrorCode } from "../errors.js";
import {
  BandwidthGate,
  Fetcher,
  HostsFileResolver,
  NetPolicy,
  type Resolver,
  SystemResolver,
  TransferRates,
} from "../fetching/index.js";
import {
  Frontier,
  HostScheduler,
  IpGate,
  type IpLimiter,
  IpSpacing,
  type LoopLoad,
  PageTurns,
  TURN_GOVERNOR_DEFAULTS,
  TurnGovernor,
} from "../frontier/index.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import { Recrawler, revisitPolicy } from "../recrawl/index.js";
import { EVERY_CRAWLER, RobotsCache, type RobotsSnapshot } from "../robots/index.js";
import { prepareDataDir, recordWarcDir } from "../storage/data-dir.js";
import {
  CrawlLog,
  digestOp,
  forEachPayloadDigest,
  GroupCommit,
  payloadOriginals,
  recordWarcFileExtents,
  robotsSnapshotOp,
  robotsSnapshots,
  StateStore,
  WarcWriter,
  warcFileOffloadedOp,
} from "../storage/index.js";
import { hostKey, UrlFingerprinter } from "../url/index.js";
import { AGENT_DEFAULTS, type AgentOptions, ipDelayOf, productToken } from "./agent-options.js";
import { CrawlDelayBound } from "./crawl-delay-bound.js";
import type { Admission, CrawlRights } from "./crawl-rights.js";
import type { CrawlStats } from "./crawl-stats.js";
import { CrossOver } from "./cross-over.js";
import type { HostBlacklist } from "./host-blacklist.js";
import { HostVisitor, type HostVisitorDeps } from "./host-visitor.js";
import { IpActivity } from "./ip-activity.js";
import { ipGatedFetch } from "./ip-gated-fetch.js";
import { LinkRouter, type UrlExchange, type UrlOwnership } from "./link-router.js";
import { refetchLostPages } from "./lost-pages.js";
import { PageArchive } from "./page-archive.js";
import { keptAsideSince, loadBlacklist, restoredStats } from "./saved-state.js";
import { DEFAULT_MAX_SITEMAPS_PER_HOST, SitemapReader } from "./sitemap-reader.js";
import { StorageGuard } from "./storage-guard.js";
import { trackedIpLimiter } from "./tracked-ip-limiter.js";
import { WarcOffload } from "./warc-offload.js";
import { WarcScrub } from "./warc-scrub.js";

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
/** Confirmed payload digests wait this long for a page's commit to ride on before they commit alone. */
const DIGEST_SAVE_DELAY_MS = 50;
/** Links read from one page at most. */
const MAX_LINKS_PER_PAGE = 10_000;

/** How an agent learns who owns what and where foreign links go (absent for a lone agent). */
export interface ClusterHooks {
  readonly ownership: () => UrlOwnership;
  readonly exchange: UrlExchange;
  /**
   * True while this agent may hold URLs of `host`: it owns the host in its current view (or, under URL
   * partitioning, always).
   */
  readonly owns: (host: string) => boolean;
  /**
   * When this agent may crawl `host`, which it owns: 0 for now, or a later time — held for a crashed
   * previous owner, or being handed over by the agent that crawled it before (a promise meanwhile).
   */
  readonly admit: (host: string) => Admission | Promise<Admission>;
  /** True while this agent may send `host` a request: it owns it and holds its crawl. */
  readonly mayFetch: (host: string) => boolean;
  /** True when every live agent is idle and no URL batch is in transit (termination detection). */
  readonly isCrawlComplete: () => boolean;
  /** Where payload digests other agents own are asked about (`--dedup cluster`). */
  readonly digests: DigestPeers;
  /** The cluster-wide per-IP limit (absent: this agent's own `--max-per-ip` only). */
  readonly ipLimiter?: IpLimiter;
}

/** An agent's machinery, wired: what {@link assembleAgent} builds and the agent runs. */
export interface AssembledAgent {
  readonly clock: Clock;
  readonly store: StateStore;
  readonly frontier: Frontier;
  readonly fetcher: Fetcher;
  /** Group commit of the state store, shared by every writer of this agent's state. */
  readonly committer: GroupCommit;
  readonly warc: WarcWriter;
  /** The `--on-warc-closed` hook's runs, when given. */
  readonly warcOffload: WarcOffload | undefined;
  readonly crawlLog: CrawlLog;
  readonly archive: PageArchive;
  /** The payload digests this agent owns, and the responses that stored them first. */
  readonly digestRegistry: DigestRegistry;
  readonly duplicates: DuplicateDetector | undefined;
  readonly visitor: HostVisitor;
  /** The cross-over mode's held links and crossed hosts (`--mode cross` in a cluster only). */
  readonly crossOver: CrossOver | undefined;
  readonly bandwidth: BandwidthGate | undefined;
  readonly scheduler: HostScheduler;
  /** Turns to fetch and process a page, the longest queues first. */
  readonly turns: PageTurns;
  /** Sets how many pages are fetched and processed at once from how busy the event loop is. */
  readonly turnGovernor: TurnGovernor;
  readonly router: LinkRouter;
  readonly stats: CrawlStats;
  /** Hosts never fetched, changed at runtime (`ubicrawl ctl`) and kept in the state. */
  readonly blacklist: HostBlacklist;
  /** Since when this state keeps the URLs dropped for blacklisted hosts aside (ms since the epoch). */
  readonly keptAsideSinceMs: number;
  readonly logger: Logger;
  /** Stops fetching while the disk refuses writes, and resumes when it takes them again. */
  readonly guard: StorageGuard;
  /** Continuous crawling's histories and plans (`--recrawl`); undefined when off. */
  readonly recrawler: Recrawler | undefined;
  /** The finished WARC files read back against their indexes while the agent runs. */
  readonly scrub: WarcScrub;
  /** Requests per IP address, for the busiest addresses' report. */
  readonly ipActivity: IpActivity;
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

/** What {@link openParts} opened and must be closed again if a later step fails. */
interface Closable {
  close(): Promise<void>;
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
  const { clock, logger, resolver, netPolicy } = deps;
  const store = await StateStore.open(join(options.dataDir, "state"));
  opened.push(store);
  if (store.damageAtOpen.length > 0) {
    logger.warn(
      { event: "storage-damaged", code: ErrorCode.StorageCorrupt, leveldb: store.damageAtOpen },
      `the state store in ${join(options.dataDir, "state")} was damaged: LevelDB dropped records of its log ` +
        `at open (${store.damageAtOpen.join("; ")}). What they said is lost: pages done there may be ` +
        "fetched again, URLs queued there may be missing ('ubicrawl report' shows the coverage)",
    );
  }
  const fingerprinter = await UrlFingerprinter.create();
  let scheduler: HostScheduler | undefined;
  const crawlLog = new CrawlLog({ dir: options.dataDir });
  opened.push(crawlLog);
  await crawlLog.open();
  const warcDir = options.warcDir ?? join(options.dataDir, "warc");
  // Its records wait for the group commit made below; the first hook runs well after that.
  const warcOffload =
    options.onWarcClosed === undefined
      ? undefined
      : new WarcOffload(options.onWarcClosed, {
          logger,
          offloadedOp: warcFileOffloadedOp,
          record: (op) => {
            committer.add(op);
            return committer.commit();
          },
        });
  const warc = new WarcWriter(
    {
      dir: warcDir,
      agentId: options.id,
      compression: options.warcCompression,
    },
    { logger, ...(warcOffload ? { onFileClosed: (file) => warcOffload.closed(file) } : {}) },
  );
  opened.push(warc);
  await warc.open();
  // Each batch is made durable in order: the pages it completes are synced in the WARC files and
  // their lines in the crawl log before the state says they are done, and the state is synced before
  // a commit resolves (and, in a cluster, before an agent acknowledges what it received). So a power
  // cut, like a SIGKILL, costs only the fetches in flight and the batch being synced, and never loses
  // an archived page or a URL. A batch with no ops makes nothing done: earlier ones are durable already.
  const committer = new GroupCommit(async (ops) => {
    if (ops.length === 0) return;
    await Promise.all([warc.syncAppended(), crawlLog.sync()]);
    await store.write(ops);
  });
  recordWarcFileExtents({ warc, crawlLog, committer });
  const frontier = await Frontier.open(
    {},
    {
      store,
      committer,
      fingerprinter,
      onHostReady: (host) => scheduler?.markReady(host),
      onQueueGrew: (host) => scheduler?.queueGrew(host),
    },
  );
  // Before the digests are loaded: it forgets those whose first copy is lost.
  await refetchLostPages({ store, committer, frontier, warcDir, crawlLogPath: crawlLog.path, logger });
  warcOffload?.start();
  const fetcher = new Fetcher(
    {
      userAgent: options.userAgent,
      maxBodyBytes: options.maxBodyBytes,
      totalTimeoutMs: options.fetchTimeoutMs,
      minBytesPerSecond: options.minBytesPerSecond,
      rateWindowMs: options.minRateWindowMs,
      http2: options.http2,
      ...(options.trustedCaPems === undefined ? {} : { trustedCaPems: options.trustedCaPems }),
    },
    { resolver, netPolicy, clock },
  );
  opened.push(fetcher);
  const ipLimiter: IpLimiter =
    deps.cluster?.ipLimiter ??
    new IpGate(options.maxPerIp, { spacing: new IpSpacing(ipDelayOf(options), clock) });
  const ipActivity = new IpActivity({}, { clock, politenessAt: (ip) => ipLimiter.politenessAt(ip) });
  const ipGate = trackedIpLimiter(ipLimiter, ipActivity);
  const robots = new RobotsCache(
    {
      userAgent: productToken(options.userAgent) ?? EVERY_CRAWLER,
      unavailableRetryMs: options.robotsRetryMs,
      // Under either policy no host is paced slower than the bound: `skip` fetches none of its pages.
      maxCrawlDelayMs: options.maxCrawlDelaySeconds * 1000,
    },
    { fetcher: ipGatedFetch(fetcher, (hostname) => resolver.resolve(hostname), ipGate), clock },
  );
  for await (const snapshot of robotsSnapshots(store)) {
    try {
      robots.restore(snapshot as RobotsSnapshot);
    } catch {
      // A snapshot from an older format: robots.txt is simply fetched again.
    }
  }
  const stats = await restoredStats(store, committer, clock);
  let digestCommitDue = false;
  const digestRegistry = new DigestRegistry(
    {},
    {
      clock,
      lookup: (digests) => payloadOriginals(store, digests),
      forEachStored: (visit) => forEachPayloadDigest(store, visit),
      onCopy: () => stats.payloadCopies++,
      save: (confirmed) => {
        for (const [digest, original] of confirmed) committer.add(digestOp(digest, original));
        // Rides on the pages' next commit; a commit of their own only if none came meanwhile (the crawl
        // may be over, and an uncommitted op keeps the frontier from looking empty). A failed commit
        // keeps its ops for the next one (the storage guard sees the page commits fail).
        if (digestCommitDue) return;
        digestCommitDue = true;
        clock.setTimeout(() => {
          digestCommitDue = false;
          if (committer.pendingOps > 0) committer.commit().catch(() => {});
        }, DIGEST_SAVE_DELAY_MS);
      },
    },
  );
  await digestRegistry.load();
  const duplicates =
    options.dedup === "off"
      ? undefined
      : new DuplicateDetector(
          { claimLeaseMs: DEFAULT_CLAIM_LEASE_MS },
          {
            selfId: options.id,
            clock,
            registry: digestRegistry,
            ...(options.dedup === "cluster" && deps.cluster ? { peers: deps.cluster.digests } : {}),
            onMessage: () => stats.digestMessages++,
            onUnchecked: () => stats.payloadsUnchecked++,
          },
        );
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
  const bandwidth =
    options.maxBytesPerSecond === undefined
      ? undefined
      : new BandwidthGate(
          {
            maxBytesPerSecond: options.maxBytesPerSecond,
            searchDepth: options.bandwidthSearchDepth,
            control: options.bandwidthControl,
          },
          {
            clock,
            // Before any download, a page is guessed at 64 KiB fetched at the whole bound.
            rates: new TransferRates({ bytesPerSecond: options.maxBytesPerSecond, bytes: 64 * 1024 }),
          },
        );
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
      policy: revisitPolicy(recrawl, clock),
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
      resolve: (hostname, signal) => resolver.resolve(hostname, signal),
      robots: (origin) => robots.get(origin),
      saveRobots: (rules) => committer.add(robotsSnapshotOp(rules.origin, rules.toJSON())),
      fetch: bandwidth
        ? boundedFetch(
            bandwidth,
            (url, ip, signal, headers) => fetcher.fetch(url, { ip, signal, headers }),
            clock,
          )
        : (url, ip, signal, headers) => fetcher.fetch(url, { ip, signal, headers }),
      ipGate,
      turns,
      archive,
      router,
      sitemaps: new SitemapReader(
        { mode: options.sitemaps, maxSitemapsPerHost: DEFAULT_MAX_SITEMAPS_PER_HOST },
        { router, stats },
      ),
      stats,
      clock,
      mustYield: () => scheduler?.isPaused === true,
      owns: rights.owns,
      blacklisted: (host) => blacklist.matches(host),
      crawlDelayBound: new CrawlDelayBound(
        { maxCrawlDelayMs: options.maxCrawlDelaySeconds * 1000, policy: options.crawlDelayPolicy },
        { logger },
      ),
      logger,
      ...(rights.admit ? { admit: rights.admit } : {}),
      ...(rights.mayFetch ? { mayFetch: rights.mayFetch } : {}),
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
    { maxActiveHosts: options.maxActiveHosts, unvisitedRank: QUANTUM_PAGES },
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

/**
 * `fetch` through `gate`: each download waits for its share of the bandwidth and hands it back when it
 * ends, with its bytes and duration (a failure with none).
 */
function boundedFetch(
  gate: BandwidthGate,
  download: HostVisitorDeps["fetch"],
  clock: Clock,
): HostVisitorDeps["fetch"] {
  return async (url, ip, signal, headers) => {
    const ticket = await gate.acquire(hostKey(url), signal);
    const startedAtMs = clock.now();
    try {
      const result = await download(url, ip, signal, headers);
      ticket.done(result.wireBytes, result.durationMs);
      return result;
    } catch (error) {
      ticket.done(0, clock.now() - startedAtMs);
      throw error;
    }
  };
}
