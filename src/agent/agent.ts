import type { Clock } from "../clock.js";
import type { DigestRegistry } from "../dedup/index.js";
import type {
  AdoptedHost,
  ForcedOutcome,
  Frontier,
  HostScheduler,
  PageTurnCounts,
  WaitingHosts,
  WaitReason,
} from "../frontier/index.js";
import type {
  BudgetSharing,
  HandedHistories,
  PageHistory,
  Recrawler,
  RevisitFigures,
} from "../recrawl/index.js";
import type { CrawlLogInput, QueuedUrl, UrlTraits } from "../storage/index.js";
import { type AssembledAgent, type AssemblyDeps, assembleAgent } from "./agent-assembly.js";
import { type AgentOptions, validateAgentOptions } from "./agent-options.js";
import { BlacklistControl } from "./blacklist-control.js";
import type { AgentStorage, ClusterFacingAgent } from "./cluster-facing.js";
import type { ClusterHooks } from "./cluster-hooks.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { BusyIp } from "./ip-activity.js";
import type { FoundLink } from "./link-origins.js";
import type { PageArchive } from "./page-archive.js";
import type { ProgressSource } from "./progress.js";
import { applyRuntimeSetting } from "./runtime-settings.js";
import { forceSeed, routeSeeds, type SeedRouting } from "./seed-routing.js";
import type { ScrubCounts } from "./warc-scrub.js";

/** On stop, how long fetches in flight may take to finish before they are aborted (and repeated later). */
const STOP_GRACE_MS = 10_000;
/** How often completion is checked for `--exit-when-done`. */
const DONE_CHECK_INTERVAL_MS = 50;
/** Period of the do-nothing timer that holds the process alive while the agent runs (`keepAlive`). */
const KEEP_ALIVE_INTERVAL_MS = 60_000;

/** Waits that a view change may end: a crashed owner's grace, a claim on a host being handed over. */
const VIEW_DEPENDENT_WAITS: ReadonlySet<WaitReason> = new Set(["held", "hand-over"]);

/**
 * One crawler agent: opens its durable state, visits its hosts politely and breadth-first, archives
 * what it fetches, and routes discovered links — to its own frontier, or through `cluster` to their
 * owners. Alone, every host is its own.
 *
 * Its parts are the ones {@link assembleAgent} wires, kept as one {@link AssembledAgent}; the agent
 * starts and stops them, and answers the cluster ({@link ClusterFacingAgent}), `ctl` and the console
 * from them.
 */
export class Agent implements ClusterFacingAgent, ProgressSource {
  readonly stats: CrawlStats;
  // What the progress reporter reads besides (see ProgressSource).
  readonly clock: Clock;
  readonly frontier: Frontier;
  readonly scheduler: HostScheduler;
  /** Continuous crawling's histories and plans (`--recrawl`); undefined when off. */
  readonly recrawler: Recrawler | undefined;
  /** The runtime blacklist's changes, durable, and the URLs its removals give back. */
  readonly blacklist: BlacklistControl;
  private stopping: Promise<void> | undefined;
  /**
   * A real timer holding the process alive from start() until the agent is closed: the clock's timers
   * are unref'd, so a crawl waiting only on them (politeness delays, retries, a stop's grace) would
   * otherwise let the process end in the middle, silently.
   */
  private keepAlive: NodeJS.Timeout | undefined;
  /** What {@link start} did with the seeds; undefined before it ran. */
  seedRouting: SeedRouting | undefined;

  private constructor(
    readonly options: AgentOptions,
    private readonly parts: AssembledAgent,
    private readonly cluster: ClusterHooks | undefined,
  ) {
    this.stats = parts.stats;
    this.clock = parts.clock;
    this.frontier = parts.frontier;
    this.scheduler = parts.scheduler;
    this.recrawler = parts.recrawler;
    this.blacklist = new BlacklistControl({
      ...parts,
      selfId: options.id,
      markReady: (host) => parts.scheduler.markReady(host),
      wakeHosts: () => this.wakeHosts(),
    });
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
    const { frontier, scheduler } = this;
    const cluster = this.cluster;
    this.seedRouting = routeSeeds(this.options.seeds, {
      frontier,
      router: this.parts.router,
      stats: this.stats,
      ...(cluster
        ? { ownedElsewhere: (url, host) => cluster.ownership().ownerOfUrl(url, host) !== this.id }
        : {}),
    });
    await frontier.commit();
    // A removal from the blacklist that a crash (or a stop) cut short is finished now.
    await this.blacklist.restoreUnlisted();
    for (const host of frontier.hostsWithWork()) scheduler.markReady(host);
    scheduler.beginVisits();
    this.keepAlive ??= setInterval(() => {}, KEEP_ALIVE_INTERVAL_MS);
    this.parts.crossOver?.start();
    this.parts.turnGovernor.start();
    this.parts.scrub.start();
    return this.seedRouting;
  }

  /**
   * Calls `observer` with every crawl-log line from now on: each fetch, failed attempt and failure (the
   * metrics' histograms, the console's recent fetches). Returns the function that stops it.
   */
  observeFetches(observer: (entry: CrawlLogInput) => void): () => void {
    return this.parts.archive.observe(observer);
  }

  /**
   * The folder of this agent's WARC files, and the index line of each record written from now on: the
   * console replays recent fetches from them.
   */
  get archivedCaptures(): PageArchive["captures"] {
    return this.parts.archive.captures;
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
    return {
      limit: this.parts.turns.limit,
      inUse: this.parts.turns.inUse,
      waiting: this.parts.turns.waiting,
    };
  }

  /** What the running check of the finished WARC files found since this process started. */
  get warcScrub(): ScrubCounts {
    return this.parts.scrub.found;
  }

  /** Downloads waiting for their share of the bandwidth (`--max-bandwidth`; 0 without a bound). */
  get fetchesWaitingForBandwidth(): number {
    return this.parts.bandwidth?.waitingFetches ?? 0;
  }

  /** See {@link ClusterFacingAgent.isIdle}. */
  get isIdle(): boolean {
    return (
      this.scheduler.isIdle &&
      this.frontier.isEmpty &&
      (this.parts.crossOver?.heldLinks ?? 0) === 0 &&
      (this.recrawler?.plannedRevisits ?? 0) === 0
    );
  }

  // ---- the cluster-facing surface: each member is documented once, where ClusterFacingAgent declares it

  get id(): string {
    return this.options.id;
  }

  get storage(): AgentStorage {
    return { store: this.parts.store, committer: this.parts.committer };
  }

  accept(url: string, depth: number, host: string, traits: UrlTraits = {}): boolean {
    return this.frontier.add(url, depth, host, traits);
  }

  route(url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    this.parts.router.routeAt(url, depth, host, traits);
  }

  commit(): Promise<void> {
    return this.frontier.commit();
  }

  hostsWithWork(): string[] {
    const hosts = this.frontier.hostsWithWork();
    const crossOver = this.parts.crossOver;
    return crossOver ? hosts.filter((host) => !crossOver.isAdopted(host)) : hosts;
  }

  takeLinksFoundOn(host: string): FoundLink[] {
    return this.parts.linkOrigins?.take(host) ?? [];
  }

  takeAllLinks(): FoundLink[] {
    return this.parts.linkOrigins?.takeAll() ?? [];
  }

  keepLinks(keeper: string, links: readonly FoundLink[]): void {
    this.parts.linkOrigins?.keep(keeper, links);
  }

  takeLinksKeptBy(keeper: string): FoundLink[] {
    return this.parts.linkOrigins?.takeKeptBy(keeper) ?? [];
  }

  async handOver(host: string, handOff: (entry: QueuedUrl) => void): Promise<void> {
    await this.frontier.drainHost(host, handOff);
  }

  wakeHosts(): void {
    this.scheduler.wakeParked(VIEW_DEPENDENT_WAITS);
    for (const host of this.frontier.hostsWithWork()) this.scheduler.markReady(host);
  }

  quiesce(host: string, maxWaitMs: number): Promise<boolean> {
    return this.frontier.quiesce(host, maxWaitMs);
  }

  doneOf(host: string, skip: number, limit: number): Promise<bigint[]> {
    return this.frontier.doneOf(host, skip, limit);
  }

  hostRecord(host: string): { readonly pagesFetched: number; readonly abandoned?: string } {
    const record = this.frontier.recordIfKnown(host);
    if (record === undefined) return { pagesFetched: 0 };
    return record.abandoned === undefined
      ? { pagesFetched: record.fetched }
      : { pagesFetched: record.fetched, abandoned: record.abandoned };
  }

  adopt(host: string, handOver: AdoptedHost): void {
    // Pages a previous owner fetched that this agent had not seen: never fetched here (page recovery).
    this.stats.pagesRecovered += this.frontier.adopt(host, handOver);
  }

  async *historiesOf(host: string, skip: number): AsyncGenerator<PageHistory> {
    if (this.recrawler) yield* this.recrawler.historiesOf(host, skip);
  }

  async adoptHistories(handed: readonly HandedHistories[]): Promise<void> {
    if (this.recrawler && handed.length > 0) await this.recrawler.adopt(handed);
    else await this.commit();
  }

  async releaseHistories(host: string): Promise<void> {
    await this.recrawler?.release(host);
  }

  get urlsInFlight(): number {
    return this.frontier.inFlightUrls;
  }

  noteSentAway(fingerprint: bigint): void {
    this.frontier.markSentAway(fingerprint);
  }

  wasSentAway(fingerprint: bigint): boolean {
    return this.frontier.wasSentAway(fingerprint);
  }

  pause(): void {
    this.scheduler.pause();
  }

  resume(): void {
    this.scheduler.resume();
  }

  get isPaused(): boolean {
    return this.scheduler.isPaused;
  }

  waiting(): readonly WaitingHosts[] {
    return this.scheduler.waiting();
  }

  busiestIps(limit: number): BusyIp[] {
    return this.parts.ipActivity.busiest(limit);
  }

  revisits(): RevisitFigures | undefined {
    return this.recrawler?.figures();
  }

  revisitSharing(): BudgetSharing | undefined {
    return this.recrawler?.sharing();
  }

  get activeHosts(): number {
    return this.scheduler.activeHosts;
  }

  get spareHostSlots(): number {
    return this.scheduler.spareSlots;
  }

  get queuedUrls(): number {
    return this.frontier.waitingUrls;
  }

  forceSeed(url: string): Promise<ForcedOutcome | "out-of-scope"> {
    const { frontier, scheduler, stats } = this;
    return forceSeed(url, { frontier, scheduler, stats, scopes: this.options.scopes });
  }

  applySetting(name: string, value: number): void {
    applyRuntimeSetting(name, value, this.parts);
  }

  get digests(): Pick<DigestRegistry, "check" | "settle" | "forget"> {
    return this.parts.digestRegistry;
  }

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
      this.parts.guard.stop();
      await this.parts.scrub.stop();
      this.parts.crossOver?.stop();
      this.parts.turnGovernor.stop();
      this.recrawler?.stop();
      await this.scheduler.stop(STOP_GRACE_MS);
      this.parts.duplicates?.stop();
      this.parts.digestRegistry.stop();
      // A last commit also saves counters moved since the last batch, so a restart never sees one go down.
      await this.frontier.commit().catch(() => {});
      await this.parts.warc.close();
      // The hook of the file the close finished, and the record of what it moved, before the store closes.
      await this.parts.warcOffload?.drained();
      await this.parts.crawlLog.close();
      await this.parts.fetcher.close();
      await this.parts.store.close();
    } finally {
      clearInterval(this.keepAlive);
    }
  }
}
