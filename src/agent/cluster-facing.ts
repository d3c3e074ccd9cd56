import type { DigestRegistry } from "../dedup/index.js";
import type { AdoptedHost, ForcedOutcome, WaitingHosts } from "../frontier/index.js";
import type { BudgetSharing, HandedHistories, PageHistory, RevisitFigures } from "../recrawl/index.js";
import type { GroupCommit, QueuedUrl, StateStore, UrlTraits } from "../storage/index.js";
import type { RuntimeBlacklist } from "./blacklist-control.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { BusyIp } from "./ip-activity.js";
import type { FoundLink } from "./link-origins.js";

/** An agent's durable store and the group commit every writer of it shares. */
export interface AgentStorage {
  readonly store: StateStore;
  readonly committer: GroupCommit;
}

/**
 * What the cluster layer may do with its agent: queue, hand over and wake hosts, answer page recovery,
 * pause, and read counters. It never reaches into the frontier, scheduler or store behind it; the
 * store is shared only through {@link AgentStorage}, for the cluster's durable outbox.
 */
export interface ClusterFacingAgent {
  /** This agent's id. */
  readonly id: string;
  /** The agent's counters, which the cluster adds its own to (messages, URLs exchanged). */
  readonly stats: CrawlStats;
  /** The durable store and its group commit, shared with the cluster's outbox of handed-off URLs. */
  readonly storage: AgentStorage;
  /**
   * True when nothing is queued, in flight or unwritten, (cross-over mode) no link is held to cross
   * with, and (`--recrawl`) no revisit is planned: with revisits planned, an agent with nothing to
   * fetch now is waiting, not done.
   */
  readonly isIdle: boolean;
  /** True while paused (by an operator or a full disk). */
  readonly isPaused: boolean;
  /** Hosts being visited now. */
  readonly activeHosts: number;
  /** Hosts this agent could start visiting now but has no URL of. */
  readonly spareHostSlots: number;
  /** Hosts with queued URLs that wait, by reason. */
  waiting(): readonly WaitingHosts[];
  /** What `--recrawl`'s revisits did since this start, and the plans pending; undefined when off. */
  revisits(): RevisitFigures | undefined;
  /** What `--recrawl`'s policy shares its revisit budget among, for the cluster's share; undefined when off. */
  revisitSharing(): BudgetSharing | undefined;
  /** The `limit` IP addresses this agent's requests were busiest at lately, busiest first. */
  busiestIps(limit: number): BusyIp[];
  /** URLs waiting in the frontier. */
  readonly queuedUrls: number;
  /** Queues `url` of `host` (owned here) unless seen, with its traits (attempts failed elsewhere, …); true when queued. */
  accept(url: string, depth: number, host: string, traits?: UrlTraits): boolean;
  /**
   * Routes `url` of `host` under the current view, at a depth already computed (URLs from peers), with
   * its traits (the fetch attempts that failed elsewhere, a sitemap mark, a lastmod, a changefreq).
   */
  route(url: string, depth: number, host: string, traits?: UrlTraits): void;
  /** Resolves when every change made so far is durable. */
  commit(): Promise<void>;
  /** Hosts with URLs waiting, but those of other agents this one crossed into (`--mode cross`). */
  hostsWithWork(): string[];
  /**
   * Takes every waiting URL of `host` out of its queue (the host belongs to another agent now);
   * `handOff` gets each one as its dequeue is recorded, so no commit writes one without the other.
   */
  handOver(host: string, handOff: (entry: QueuedUrl) => void): Promise<void>;
  /**
   * The links found on `host`'s pages that wait here (queued for hosts this agent owns, or in flight):
   * `host` goes to another agent with its done set, so they are known here alone from then on. Forgotten
   * here once taken (see link-origins.ts).
   */
  takeLinksFoundOn(host: string): FoundLink[];
  /** Every link still noted (found on pages of other hosts, or given to others to keep), forgotten here: this agent leaves. */
  takeAllLinks(): FoundLink[];
  /** `links` (taken by {@link takeLinksFoundOn}) were given to agent `keeper` to keep: noted by it. */
  keepLinks(keeper: string, links: readonly FoundLink[]): void;
  /**
   * The links given to agent `keeper` to keep that still wait here (it left or crashed: they must go to
   * another), forgotten here once taken.
   */
  takeLinksKeptBy(keeper: string): FoundLink[];
  /** URLs taken from their queues and not yet done (being fetched, or waiting to be). */
  readonly urlsInFlight: number;
  /**
   * Offers every host with waiting URLs to the scheduler again (after a view change or a pause), and
   * wakes hosts parked for a hold or a hand-over, which a view change may have ended (a crashed agent
   * back within its grace, say): otherwise they would sit out a wait that no longer applies.
   */
  wakeHosts(): void;
  /** Waits (at most `maxWaitMs`) until no request to `host` is in flight, then commits; false if some are. */
  quiesce(host: string, maxWaitMs: number): Promise<boolean>;
  /** Fingerprints of `host`'s done URLs, after the first `skip`, at most `limit`. */
  doneOf(host: string, skip: number, limit: number): Promise<bigint[]>;
  /** What this agent knows of `host`'s crawl: pages fetched, and why it was given up if it was. */
  hostRecord(host: string): { readonly pagesFetched: number; readonly abandoned?: string };
  /** Takes in what another agent handed over of `host` (durable at the next commit). */
  adopt(host: string, handOver: AdoptedHost): void;
  /** `--recrawl`: the page histories of `host` kept here, after the first `skip` (none when off). */
  historiesOf(host: string, skip: number): AsyncIterable<PageHistory>;
  /**
   * `--recrawl`: takes in page histories handed over with their hosts (the later visit's of each page
   * kept, and planned), durably in one commit with what was adopted before it; commits even when off.
   */
  adoptHistories(handed: readonly HandedHistories[]): Promise<void>;
  /** `--recrawl`: `host` went to another agent with its histories: its plans here end (at the next commit). */
  releaseHistories(host: string): Promise<void>;
  /** Records that the URL with this fingerprint was handed to another agent. */
  noteSentAway(fingerprint: bigint): void;
  /** True when the URL with this fingerprint was handed to another agent before. */
  wasSentAway(fingerprint: bigint): boolean;
  /** Stops starting fetches (those in flight finish); links and batches are still handled. */
  pause(): void;
  /** Starts fetching again after {@link pause}. */
  resume(): void;
  /** Changes a runtime setting (`delay-ms`, `max-active-hosts`); throws `InvalidArgument` otherwise. */
  applySetting(name: string, value: number): void;
  /**
   * The runtime blacklist: patterns added and removed (`ctl`), other agents' entries merged (gossip),
   * each durable when it resolves; a removal restores the URLs kept aside for its hosts.
   */
  readonly blacklist: RuntimeBlacklist;
  /**
   * Queues seed `url`, whose host this agent owns, even when seen before (`ctl add-seeds --force`),
   * unless it is done already or out of scope; durable when it resolves.
   */
  forceSeed(url: string): Promise<ForcedOutcome | "out-of-scope">;
  /**
   * The payload digests this agent owns (`CheckDigests`, `SettleDigests`): whether payloads were stored
   * before, what askers did with those they were told were new, and the claims of agents gone.
   */
  readonly digests: Pick<DigestRegistry, "check" | "settle" | "forget">;
  /** Calls `visit` with every host this agent has a record of, its waiting URLs and pages fetched. */
  forEachHost(visit: (host: string, waiting: number, fetched: number) => void): void;
}
