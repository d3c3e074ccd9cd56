import type { QueuedUrl } from "../storage/index.js";
import type { AgentStorage } from "./agent.js";
import type { CrawlStats } from "./crawl-stats.js";

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
  readonly queuedUrls: number;
  accept(url: string, depth: number, host: string): boolean;
  requeue(url: string, depth: number, host: string): void;
  /** Routes `url` under the current view, at a depth already computed. */
  route(url: string, depth: number, host: string): void;
  commit(): Promise<void>;
  hostsWithWork(): string[];
  handOver(host: string, handOff: (entry: QueuedUrl) => void): Promise<void>;
  wakeHosts(): void;
  wasFetched(urls: readonly string[], maxWaitMs: number): Promise<boolean[]>;
  noteSentAway(fingerprint: bigint): void;
  wasSentAway(fingerprint: bigint): boolean;
  pause(): void;
  resume(): void;
  blacklistHost(host: string): void;
  unblacklistHost(host: string): boolean;
  forEachHost(visit: (host: string, waiting: number, fetched: number) => void): void;
}
