import type { Clock } from "../clock.js";
import type {
  DigestQuestion,
  DigestRegistry,
  DigestSettlement,
  DigestVerdict,
  DuplicateDetector,
} from "../dedup/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { BandwidthGate, Fetcher } from "../fetching/index.js";
import type {
  AdoptedHost,
  ForcedOutcome,
  Frontier,
  HostScheduler,
  PageTurnCounts,
  PageTurns,
  TurnGovernor,
  WaitingHosts,
  WaitReason,
} from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import type { HandedHistories, PageHistory, Recrawler, RevisitFigures } from "../recrawl/index.js";
import type {
  CrawlLog,
  CrawlLogInput,
  GroupCommit,
  QueuedUrl,
  StateStore,
  UrlTraits,
  WarcWriter,
} from "../storage/index.js";
import { metaOp } from "../storage/index.js";
import { hostKey, inScope, normalizeUrl } from "../url/index.js";
import {
  type AssembledAgent,
  type AssemblyDeps,
  assembleAgent,
  type ClusterHooks,
  UNSYNCED_PAGES_PER_HOST,
} from "./agent-assembly.js";
import { type AgentOptions, validateAgentOptions } from "./agent-options.js";
import {
  type BlacklistRemoval,
  type BlacklistRestore,
  describeRestore,
  NO_RESTORE,
  type RestoredByMerge,
  withHost,
} from "./blacklist-restore.js";
import type { AgentStorage, ClusterFacingAgent } from "./cluster-facing.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { CrossOver } from "./cross-over.js";
import type { BlacklistEntry, BlacklistMerge, HostBlacklist } from "./host-blacklist.js";
import type { HostVisitor } from "./host-visitor.js";
import type { BusyIp, IpActivity } from "./ip-activity.js";
import type { LinkRouter } from "./link-router.js";
import type { PageArchive } from "./page-archive.js";
import { BLACKLIST_META_KEY } from "./saved-state.js";
import type { StorageGuard } from "./storage-guard.js";
import type { WarcOffload } from "./warc-offload.js";
import type { ScrubCounts, WarcScrub } from "./warc-scrub.js";

/** On stop, how long fetches in flight may take to finish before they are aborted (and repeated later). */
const STOP_GRACE_MS = 10_000;
/** How often completion is checked for `--exit-when-done`. */
const DONE_CHECK_INTERVAL_MS = 50;
/** Period of the do-nothing timer that holds the process alive while the agent runs (`keepAlive`). */
const KEEP_ALIVE_INTERVAL_MS = 60_000;
/** The settings {@link Agent.applySetting} changes at runtime, by flag name, with their ranges. */
export const RUNTIME_SETTINGS = {
  "delay-ms": { min: 0, max: 3_600_000 },
  "max-active-hosts": { min: 1, max: 100_000 },
} as const;
type RuntimeSetting = keyof typeof RUNTIME_SETTINGS;

/** Waits that a view change may end: a crashed owner's grace, a claim on a host being handed over. */
const VIEW_DEPENDENT_WAITS: ReadonlySet<WaitReason> = new Set(["held", "hand-over"]);

/** A crawling agent's local machinery, shared by the single-agent and the cluster modes. */
export interface AgentParts {
  readonly options: AgentOptions;
  readonly clock: Clock;
  readonly store: StateStore;
  readonly frontier: Frontier;
  readonly scheduler: HostScheduler;
  readonly router: LinkRouter;
  readonly stats: CrawlStats;
}

/** What {@link Agent.start} did with the seeds, each counted once. */
export interface SeedRouting {
  /** Seeds that are http(s) URLs. */
  readonly given: number;
  /** Seeds queued here: never seen before in this data dir. */
  readonly queued: number;
  /** Seeds of hosts other agents own, sent to them (whether they are new is theirs to know). */
  readonly sentAway: number;
  /** Seeds of this agent's hosts seen before in this data dir: done, or queued since an earlier run. */
  readonly seenBefore: number;
  /** Seeds outside `--scope`. */
  readonly outOfScope: number;
  /** Fetch failures by class counted in this data dir before this start (the stats' are cumulative). */
  readonly errorsBefore: Readonly<Record<string, number>>;
}

/**
 * One crawler agent: opens its durable state, visits its hosts politely and breadth-first, archives
 * what it fetches, and routes discovered links — to its own frontier, or through `cluster` to their
 * owners. Alone, every host is its own.
 */
export class Agent implements AgentParts, ClusterFacingAgent {
  readonly clock: Clock;
  readonly store: StateStore;
  readonly frontier: Frontier;
  readonly stats: CrawlStats;
  readonly scheduler: HostScheduler;
  readonly router: LinkRouter;
  private readonly turns: PageTurns;
  /** Sets how many pages are fetched and processed at once from how busy the event loop is. */
  private readonly turnGovernor: TurnGovernor;
  /** Group commit of the state store, shared by every writer of this agent's state. */
  private readonly committer: GroupCommit;
  private readonly fetcher: Fetcher;
  private readonly warc: WarcWriter;
  private readonly warcOffload: WarcOffload | undefined;
  private readonly crawlLog: CrawlLog;
  private readonly archive: PageArchive;
  /** The payload digests this agent owns, and the responses that stored them first. */
  private readonly digestRegistry: DigestRegistry;
  private readonly duplicates: DuplicateDetector | undefined;
  private readonly visitor: HostVisitor;
  /** The cross-over mode's held links and crossed hosts (`--mode cross` in a cluster only). */
  private readonly crossOver: CrossOver | undefined;
  private readonly bandwidth: BandwidthGate | undefined;
  /** Continuous crawling's histories and plans (`--recrawl`); undefined when off. */
  readonly recrawler: Recrawler | undefined;
  private readonly scrub: WarcScrub;
  private readonly ipActivity: IpActivity;
  private stopping: Promise<void> | undefined;
  /**
   * A real timer holding the process alive from start() until the agent is closed: the clock's timers
   * are unref'd, so a crawl waiting only on them (politeness delays, retries, a stop's grace) would
   * otherwise let the process end in the middle, silently.
   */
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly cluster: ClusterHooks | undefined;
  /** Hosts never fetched, changed at runtime (`ubicrawl ctl`) and kept in the state; their queued URLs are dropped. */
  private readonly blacklist: HostBlacklist;
  /** Since when this agent's state keeps the URLs dropped for blacklisted hosts aside (ms). */
  private readonly keptAsideSinceMs: number;
  private readonly logger: Logger;
  /** Stops fetching while the disk refuses writes, and resumes when it takes them again. */
  readonly guard: StorageGuard;
  /** What {@link start} did with the seeds; undefined before it ran. */
  seedRouting: SeedRouting | undefined;

  private constructor(
    readonly options: AgentOptions,
    parts: AssembledAgent,
    cluster: ClusterHooks | undefined,
  ) {
    this.clock = parts.clock;
    this.store = parts.store;
    this.frontier = parts.frontier;
    this.guard = parts.guard;
    this.cluster = cluster;
    this.blacklist = parts.blacklist;
    this.keptAsideSinceMs = parts.keptAsideSinceMs;
    this.logger = parts.logger;
    this.fetcher = parts.fetcher;
    this.committer = parts.committer;
    this.warc = parts.warc;
    this.warcOffload = parts.warcOffload;
    this.scrub = parts.scrub;
    this.crawlLog = parts.crawlLog;
    this.archive = parts.archive;
    this.digestRegistry = parts.digestRegistry;
    this.duplicates = parts.duplicates;
    this.visitor = parts.visitor;
    this.crossOver = parts.crossOver;
    this.bandwidth = parts.bandwidth;
    this.recrawler = parts.recrawler;
    this.scheduler = parts.scheduler;
    this.turns = parts.turns;
    this.turnGovernor = parts.turnGovernor;
    this.router = parts.router;
    this.stats = parts.stats;
    this.ipActivity = parts.ipActivity;
  }

  /** Opens the agent's state under `options.dataDir` and prepares (but does not start) the crawl. */
  static async open(options: AgentOptions, deps: AssemblyDeps = {}): Promise<Agent> {
    validateAgentOptions(options);
    return new Agent(options, await assembleAgent(options, deps), deps.cluster);
  }

  /**
   * Queues the seeds (again: seen ones are skipped) and starts visiting hosts with work; resolves to
   * what became of the seeds (also kept as {@link seedRouting}), so a crawl that has nothing new to do
   * can say so.
   */
  async start(): Promise<SeedRouting> {
    const routing = { given: 0, queued: 0, sentAway: 0, seenBefore: 0, outOfScope: 0 };
    const errorsBefore = Object.fromEntries(this.stats.errors);
    for (const seed of this.options.seeds) {
      const url = normalizeUrl(seed);
      if (url === null) continue;
      routing.given++;
      const waiting = this.frontier.waitingUrls;
      const outOfScope = this.stats.dropped.get("scope") ?? 0;
      this.router.route(url, 0, undefined);
      if (this.frontier.waitingUrls > waiting) routing.queued++;
      else if ((this.stats.dropped.get("scope") ?? 0) > outOfScope) routing.outOfScope++;
      else if (this.cluster && this.cluster.ownership().ownerOfUrl(url, hostKey(url)) !== this.id) {
        routing.sentAway++;
      } else routing.seenBefore++;
    }
    await this.frontier.commit();
    // A removal from the blacklist that a crash (or a stop) cut short is finished now.
    await this.restoreUnlisted();
    for (const host of this.frontier.hostsWithWork()) this.scheduler.markReady(host);
    this.keepAlive ??= setInterval(() => {}, KEEP_ALIVE_INTERVAL_MS);
    this.crossOver?.start();
    this.turnGovernor.start();
    this.scrub.start();
    this.seedRouting = { ...routing, errorsBefore };
    return this.seedRouting;
  }

  /**
   * Calls `observer` with every crawl-log line from now on: each fetch, failed attempt and failure (the
   * metrics' histograms, the console's recent fetches). Returns the function that stops it.
   */
  observeFetches(observer: (entry: CrawlLogInput) => void): () => void {
    return this.archive.observe(observer);
  }

  /**
   * The folder of this agent's WARC files, and the index line of each record written from now on: the
   * console replays recent fetches from them.
   */
  get archivedCaptures(): PageArchive["captures"] {
    return this.archive.captures;
  }

  /** Distinct URLs ever queued here (the seen set's size). */
  get seenUrls(): number {
    return this.frontier.seen.size;
  }

  /**
   * Hosts with queued URLs waiting for a visit slot, and the queue length the next of them has at least
   * (a power of two): slots go to the longest queues first.
   */
  get readyHosts(): { readonly hosts: number; readonly longestQueue: number } {
    return { hosts: this.scheduler.readyHosts, longestQueue: this.scheduler.longestReadyQueue };
  }

  /**
   * Page turns: how many pages may be fetched and processed at once (fewer while the event loop is
   * saturated), how many are, and how many hosts wait for one (longest queues are served first).
   */
  get pageTurns(): PageTurnCounts {
    return { limit: this.turns.limit, inUse: this.turns.inUse, waiting: this.turns.waiting };
  }

  /** What the running check of the finished WARC files found since this process started. */
  get warcScrub(): ScrubCounts {
    return this.scrub.found;
  }

  /** Downloads waiting for their share of the bandwidth (`--max-bandwidth`; 0 without a bound). */
  get fetchesWaitingForBandwidth(): number {
    return this.bandwidth?.waitingFetches ?? 0;
  }

  /**
   * True when this agent has nothing to fetch, nothing in flight and nothing unwritten, (cross-over
   * mode) holds no link to cross with, and (`--recrawl`) plans no revisit: with revisits planned, an
   * agent with nothing to fetch now is waiting, not done.
   */
  get isIdle(): boolean {
    return (
      this.scheduler.isIdle &&
      this.frontier.isEmpty &&
      (this.crossOver?.heldLinks ?? 0) === 0 &&
      (this.recrawler?.plannedRevisits ?? 0) === 0
    );
  }

  // ---- the cluster-facing surface ({@link ClusterFacingAgent}) -------------------------------

  /** This agent's id. */
  get id(): string {
    return this.options.id;
  }

  /** The durable store and its group commit, shared with the cluster's outbox of handed-off URLs. */
  get storage(): AgentStorage {
    return { store: this.store, committer: this.committer };
  }

  /** Queues `url` of `host` (a URL this agent owns) unless seen before, with its traits; true when queued. */
  accept(url: string, depth: number, host: string, traits: UrlTraits = {}): boolean {
    return this.frontier.add(url, depth, host, traits);
  }

  /**
   * Routes `url` of `host` under the current view, at a depth already computed (URLs from peers), with
   * its traits (the fetch attempts that failed elsewhere, a sitemap mark, a lastmod).
   */
  route(url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    this.router.routeAt(url, depth, host, traits);
  }

  /** Resolves when every change made so far is durable. */
  commit(): Promise<void> {
    return this.frontier.commit();
  }

  /** Hosts with URLs waiting, but those of other agents this one crossed into (`--mode cross`). */
  hostsWithWork(): string[] {
    const hosts = this.frontier.hostsWithWork();
    const crossOver = this.crossOver;
    return crossOver ? hosts.filter((host) => !crossOver.isAdopted(host)) : hosts;
  }

  /**
   * Takes every waiting URL of `host` out of its queue (the host belongs to another agent now);
   * `handOff` gets each one as its dequeue is recorded, so no commit writes one without the other.
   */
  async handOver(host: string, handOff: (entry: QueuedUrl) => void): Promise<void> {
    await this.frontier.drainHost(host, handOff);
  }

  /**
   * Offers every host with waiting URLs to the scheduler again (after a view change or a pause), and
   * wakes hosts parked for a hold or a hand-over, which a view change may have ended (a crashed agent
   * back within its grace, say): otherwise they would sit out a wait that no longer applies.
   */
  wakeHosts(): void {
    this.scheduler.wakeParked(VIEW_DEPENDENT_WAITS);
    for (const host of this.frontier.hostsWithWork()) this.scheduler.markReady(host);
  }

  /** Waits (at most `maxWaitMs`) until no request to `host` is in flight, then commits; false if some are. */
  quiesce(host: string, maxWaitMs: number): Promise<boolean> {
    return this.frontier.quiesce(host, maxWaitMs);
  }

  /** Fingerprints of `host`'s done URLs, after the first `skip`, at most `limit`. */
  doneOf(host: string, skip: number, limit: number): Promise<bigint[]> {
    return this.frontier.doneOf(host, skip, limit);
  }

  /** What this agent knows of `host`'s crawl: pages fetched, and why it was given up if it was. */
  hostRecord(host: string): { readonly pagesFetched: number; readonly abandoned?: string } {
    const record = this.frontier.recordIfKnown(host);
    if (record === undefined) return { pagesFetched: 0 };
    return record.abandoned === undefined
      ? { pagesFetched: record.fetched }
      : { pagesFetched: record.fetched, abandoned: record.abandoned };
  }

  /** Takes in what another agent handed over of `host` (durable at the next commit). */
  adopt(host: string, handOver: AdoptedHost): void {
    // Pages a previous owner fetched that this agent had not seen: never fetched here (page recovery).
    this.stats.pagesRecovered += this.frontier.adopt(host, handOver);
  }

  /** See {@link ClusterFacingAgent.historiesOf}. */
  async *historiesOf(host: string, skip: number): AsyncGenerator<PageHistory> {
    if (this.recrawler) yield* this.recrawler.historiesOf(host, skip);
  }

  /** See {@link ClusterFacingAgent.adoptHistories}. */
  async adoptHistories(handed: readonly HandedHistories[]): Promise<void> {
    if (this.recrawler && handed.length > 0) await this.recrawler.adopt(handed);
    else await this.commit();
  }

  /** See {@link ClusterFacingAgent.releaseHistories}. */
  async releaseHistories(host: string): Promise<void> {
    await this.recrawler?.release(host);
  }

  /** URLs taken from their queues and not yet done (being fetched, or waiting to be). */
  get urlsInFlight(): number {
    return this.frontier.inFlightUrls;
  }

  /** Records that the URL with this fingerprint was handed to another agent. */
  noteSentAway(fingerprint: bigint): void {
    this.frontier.markSentAway(fingerprint);
  }

  /** True when the URL with this fingerprint was handed to another agent before. */
  wasSentAway(fingerprint: bigint): boolean {
    return this.frontier.wasSentAway(fingerprint);
  }

  /** Stops starting fetches (those in flight finish); links and batches are still handled. */
  pause(): void {
    this.scheduler.pause();
  }

  /** Starts fetching again after {@link pause}. */
  resume(): void {
    this.scheduler.resume();
  }

  /** True while paused (by an operator or a full disk). */
  get isPaused(): boolean {
    return this.scheduler.isPaused;
  }

  /** Hosts with queued URLs that wait, by reason. */
  waiting(): readonly WaitingHosts[] {
    return this.scheduler.waiting();
  }

  /** The `limit` IP addresses this agent's requests were busiest at lately (see ip-activity.ts). */
  busiestIps(limit: number): BusyIp[] {
    return this.ipActivity.busiest(limit);
  }

  /** What `--recrawl`'s revisits did since this start, and the plans pending; undefined when off. */
  revisits(): RevisitFigures | undefined {
    return this.recrawler?.figures();
  }

  /** Hosts being visited now. */
  get activeHosts(): number {
    return this.scheduler.activeHosts;
  }

  /** Hosts this agent could start visiting now but has no URL of (its visit slots left over). */
  get spareHostSlots(): number {
    return this.scheduler.spareSlots;
  }

  /** URLs waiting in the frontier. */
  get queuedUrls(): number {
    return this.frontier.waitingUrls;
  }

  /**
   * Adds a host pattern to the blacklist (see {@link HostBlacklist}): its hosts' queued URLs are
   * dropped as they come, and no new request goes to them. Resolves once the list is durable; false
   * when the pattern was on it already. Throws `InvalidArgument` for a malformed pattern.
   */
  async blacklistHost(pattern: string): Promise<boolean> {
    const added = this.blacklist.add(pattern, { atMs: this.clock.now(), by: this.options.id });
    if (added) await this.saveBlacklist();
    return added;
  }

  /** URLs of one host kept aside at most while it is blacklisted; those beyond are only counted. */
  get maxAsidePerHost(): number {
    return this.frontier.maxAsidePerHost;
  }

  /** The blacklist's patterns, sorted. */
  blacklistPatterns(): string[] {
    return this.blacklist.toJSON();
  }

  /**
   * Removes a pattern from the blacklist, durably; false when it was not on it. Its hosts are crawled
   * again: the URLs this agent kept aside while they were listed are queued again (or sent to their
   * hosts' owners), and the removal says how many, and what it could not restore.
   */
  async unblacklistHost(pattern: string): Promise<BlacklistRemoval | false> {
    const normalized = pattern.trim().toLowerCase();
    const addedAtMs = this.blacklist.entries().find((entry) => entry.pattern === normalized)?.changedAtMs;
    const removed = this.blacklist.remove(pattern, { atMs: this.clock.now(), by: this.options.id });
    if (!removed) return false;
    await this.saveBlacklist();
    const restore = await this.restoreUnlisted();
    this.wakeHosts();
    return { restore, droppedBeforeKeeping: addedAtMs !== undefined && addedAtMs < this.keptAsideSinceMs };
  }

  /**
   * Gives back the URLs kept aside for hosts no longer blacklisted: each is queued again here when this
   * agent owns its host (though seen before: it was never fetched), else sent to the owner; those done
   * meanwhile are skipped, and those now beyond --max-depth or --scope dropped. Durable when it resolves;
   * logged when anything was restored or could not be.
   */
  async restoreUnlisted(): Promise<BlacklistRestore> {
    let total = NO_RESTORE;
    for (const host of this.frontier.asideHosts()) {
      if (this.blacklist.matches(host)) continue;
      const placed = { here: 0, sent: 0, dropped: 0 };
      const restored = await this.frontier.restoreAside(host, (entry) => {
        const { url, depth, ...traits } = entry;
        const where = this.router.restore(url, depth, host, traits);
        if (where === "here") placed.here++;
        else if (where === "sent") placed.sent++;
        else placed.dropped++;
      });
      if (restored === undefined) continue;
      total = withHost(total, restored, placed);
      this.logger.info(
        { event: "blacklist-restored", host, ...placed, ...restored },
        `${host} is off the blacklist: ${describeRestore(withHost(NO_RESTORE, restored, placed), this.frontier.maxAsidePerHost)}`,
      );
    }
    if (total.hosts > 0) {
      await this.frontier.commit();
      for (const host of this.frontier.hostsWithWork()) this.scheduler.markReady(host);
    }
    return total;
  }

  /**
   * Queues seed `url` (`ctl add-seeds --force`) on this agent, which owns its host, even when seen
   * before, unless it is done already or out of --scope; durable when it resolves.
   */
  async forceSeed(url: string): Promise<ForcedOutcome | "out-of-scope"> {
    const host = hostKey(url);
    if (!inScope(host, this.options.scopes)) {
      this.stats.recordDrop("scope");
      return "out-of-scope";
    }
    const outcome = await this.frontier.forceAdd(url, 0, host);
    await this.frontier.commit();
    if (outcome !== "done-before") this.scheduler.markReady(host);
    return outcome;
  }

  /** Every blacklist entry, removals included (what another agent merges). */
  blacklistEntries(): BlacklistEntry[] {
    return this.blacklist.entries();
  }

  /**
   * Merges another agent's blacklist entries (the later change of each pattern wins), durably when
   * anything changed; hosts of removed patterns are crawled again.
   */
  async mergeBlacklist(entries: readonly BlacklistEntry[]): Promise<BlacklistMerge & RestoredByMerge> {
    const before = JSON.stringify(this.blacklist.entries());
    const merge = this.blacklist.merge(entries);
    if (JSON.stringify(this.blacklist.entries()) !== before) await this.saveBlacklist();
    if (merge.removed.length === 0) return merge;
    const restore = await this.restoreUnlisted();
    this.wakeHosts();
    return { ...merge, restore };
  }

  /**
   * Changes a setting while the agent runs (`ubicrawl ctl set NAME=VALUE`), until it stops (the flags
   * decide again at the next start): `delay-ms` (from each host's next request) or `max-active-hosts`.
   * Throws `InvalidArgument` for another name or a value out of range.
   */
  applySetting(name: string, value: number): void {
    const range = RUNTIME_SETTINGS[name as RuntimeSetting];
    if (range === undefined) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `${name} cannot change at runtime: only ${Object.keys(RUNTIME_SETTINGS).join(", ")} can`,
      );
    }
    if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `${name} must be an integer from ${range.min} to ${range.max}, got ${value}`,
      );
    }
    if (name === "delay-ms") this.visitor.setDelayMs(value);
    else {
      this.scheduler.setMaxActiveHosts(value);
      this.turnGovernor.setCeiling(value * UNSYNCED_PAGES_PER_HOST);
    }
  }

  private async saveBlacklist(): Promise<void> {
    this.committer.add(metaOp(BLACKLIST_META_KEY, JSON.stringify(this.blacklist.entries())));
    await this.committer.commit();
  }

  /** `CheckDigests`: whether payloads with these digests (which this agent owns) were stored before. */
  checkDigests(questions: readonly DigestQuestion[]): Promise<DigestVerdict[]> {
    return this.digestRegistry.check(questions);
  }

  /** `SettleDigests`: what agent `asker` did with digests it was told were new (stored, or not). */
  settleDigests(asker: string, settlements: readonly DigestSettlement[]): void {
    this.digestRegistry.settle(asker, settlements);
  }

  /** Agent `id` is gone: its claims on payload digests end (see DigestRegistry.forget). */
  forgetDigestClaims(id: string): void {
    this.digestRegistry.forget(id);
  }

  /** Calls `visit` with every host this agent has a record of, its waiting URLs and pages fetched. */
  forEachHost(visit: (host: string, waiting: number, fetched: number) => void): void {
    for (const host of this.frontier.knownHosts()) {
      visit(host, this.frontier.waitingOf(host), this.frontier.record(host).fetched);
    }
  }

  /**
   * Resolves when the crawl is complete: alone, when this agent stays idle over two checks in a row;
   * in a cluster, when the cluster's termination detection says so.
   */
  whenDone(): Promise<void> {
    return new Promise<void>((resolve) => {
      let idleChecks = 0;
      const check = () => {
        // Stopped first (a signal): never done.
        if (this.stopping) return;
        const idle = this.cluster ? this.cluster.isCrawlComplete() : this.isIdle;
        idleChecks = idle ? idleChecks + 1 : 0;
        if (idleChecks >= 2) resolve();
        else this.clock.setTimeout(check, DONE_CHECK_INTERVAL_MS);
      };
      check();
    });
  }

  /** Stops visits, writes what is pending and closes files; the state is kept. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.close();
    return this.stopping;
  }

  private async close(): Promise<void> {
    // Held until all is written (taken now by an agent closed without having started).
    this.keepAlive ??= setInterval(() => {}, KEEP_ALIVE_INTERVAL_MS);
    try {
      this.guard.stop();
      await this.scrub.stop();
      this.crossOver?.stop();
      this.turnGovernor.stop();
      this.recrawler?.stop();
      await this.scheduler.stop(STOP_GRACE_MS);
      this.duplicates?.stop();
      this.digestRegistry.stop();
      // A last commit also saves counters moved since the last batch, so a restart never sees one go down.
      await this.frontier.commit().catch(() => {});
      await this.warc.close();
      // The hook of the file the close finished, and the record of what it moved, before the store closes.
      await this.warcOffload?.drained();
      await this.crawlLog.close();
      await this.fetcher.close();
      await this.store.close();
    } finally {
      clearInterval(this.keepAlive);
    }
  }
}
