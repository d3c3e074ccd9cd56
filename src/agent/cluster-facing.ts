import type { DigestQuestion, DigestSettlement, DigestVerdict } from "../dedup/index.js";
import type { AdoptedHost, ForcedOutcome, WaitingHosts } from "../frontier/index.js";
import type { HandedHistories, PageHistory, RevisitFigures } from "../recrawl/index.js";
import type { GroupCommit, QueuedUrl, StateStore, UrlTraits } from "../storage/index.js";
import type { BlacklistRemoval, RestoredByMerge } from "./blacklist-restore.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { BlacklistEntry, BlacklistMerge } from "./host-blacklist.js";
import type { BusyIp } from "./ip-activity.js";

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
  readonly id: string;
  readonly stats: CrawlStats;
  readonly storage: AgentStorage;
  /** True when nothing is queued, in flight or unwritten. */
  readonly isIdle: boolean;
  readonly isPaused: boolean;
  readonly activeHosts: number;
  /** Hosts this agent could start visiting now but has no URL of. */
  readonly spareHostSlots: number;
  /** Hosts with queued URLs that wait, by reason. */
  waiting(): readonly WaitingHosts[];
  /** What `--recrawl`'s revisits did since this start, and the plans pending; undefined when off. */
  revisits(): RevisitFigures | undefined;
  /** The `limit` IP addresses this agent's requests were busiest at lately, busiest first. */
  busiestIps(limit: number): BusyIp[];
  readonly queuedUrls: number;
  /** Queues `url` of `host` (owned here) unless seen, with its traits (attempts failed elsewhere, …); true when queued. */
  accept(url: string, depth: number, host: string, traits?: UrlTraits): boolean;
  /** Routes `url` under the current view, at a depth already computed, with its traits. */
  route(url: string, depth: number, host: string, traits?: UrlTraits): void;
  commit(): Promise<void>;
  hostsWithWork(): string[];
  handOver(host: string, handOff: (entry: QueuedUrl) => void): Promise<void>;
  /** URLs taken from their queues and not yet done. */
  readonly urlsInFlight: number;
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
  noteSentAway(fingerprint: bigint): void;
  wasSentAway(fingerprint: bigint): boolean;
  pause(): void;
  resume(): void;
  /** Changes a runtime setting (`delay-ms`, `max-active-hosts`); throws `InvalidArgument` otherwise. */
  applySetting(name: string, value: number): void;
  /** Adds a host pattern to the blacklist, durably; false when it was there already. */
  blacklistHost(pattern: string): Promise<boolean>;
  /**
   * Removes a host pattern from the blacklist, durably, and restores the URLs kept aside for its hosts
   * (what it gave back, and what it could not); false when it was not there.
   */
  unblacklistHost(pattern: string): Promise<BlacklistRemoval | false>;
  /** URLs of one host kept aside at most while it is blacklisted; those beyond are only counted. */
  readonly maxAsidePerHost: number;
  /**
   * Queues seed `url`, whose host this agent owns, even when seen before (`ctl add-seeds --force`),
   * unless it is done already or out of scope; durable when it resolves.
   */
  forceSeed(url: string): Promise<ForcedOutcome | "out-of-scope">;
  /** The blacklist's patterns, sorted. */
  blacklistPatterns(): string[];
  /** Every blacklist entry, removals included (what another agent merges). */
  blacklistEntries(): BlacklistEntry[];
  /**
   * Merges another agent's blacklist entries, durably; the later change of each pattern wins. Patterns
   * it takes off restore their hosts' kept-aside URLs (`restore` says what that gave back).
   */
  mergeBlacklist(entries: readonly BlacklistEntry[]): Promise<BlacklistMerge & RestoredByMerge>;
  /** Whether payloads with these digests (this agent owns them) were stored before; see DigestRegistry. */
  checkDigests(questions: readonly DigestQuestion[]): Promise<DigestVerdict[]>;
  /** What agent `asker` did with digests it was told were new. */
  settleDigests(asker: string, settlements: readonly DigestSettlement[]): void;
  /** Agent `id` is gone: its claims on payload digests end. */
  forgetDigestClaims(id: string): void;
  forEachHost(visit: (host: string, waiting: number, fetched: number) => void): void;
}
