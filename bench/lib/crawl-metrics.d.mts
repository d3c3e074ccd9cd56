/** What the union of some crawl logs fetched, against the ground truth. */
export interface CrawlMetrics {
  /** Crawl log lines. */
  entries: number;
  /** Lines with status > 0. */
  fetches: number;
  /** Lines with status 0. */
  failures: number;
  /** Distinct URLs fetched. */
  unique: number;
  /** Distinct URLs logged, failures included. */
  loggedUrls: number;
  /** Body bytes of the fetches. */
  bytes: number;
  /** Truth URLs fetched. */
  covered: number;
  /** URLs in the truth. */
  truthSize: number;
  /** URLs fetched outside the truth. */
  extra: number;
  /** covered / truthSize. */
  coverage: number;
  /** (fetches − unique) / unique. */
  overlap: number;
  /** Seconds from the first to the last line. */
  spanSeconds: number;
  /** Epoch ms of the last line (NaN when none). */
  lastEntryEpochMs: number;
  /** Epoch ms of each fetch counted in `fetches`, ascending. */
  pageTimesMs: number[];
}

/** What an agent's final summary says. */
export interface AgentSummary {
  seconds: number | undefined;
  pagesFetched: number | undefined;
  dropped: Record<string, number>;
  seenUrls: number | undefined;
  seenSetBytes: number | undefined;
  /** The URL exchange with peers, when a cluster agent prints it. */
  exchange:
    | { urlsSent: number; batchesSent: number; urlsReceived: number; batchesReceived: number }
    | undefined;
  /** Links found to other agents' hosts (each URL among them is sent once), when a cluster agent prints it. */
  linksToOtherAgents: number | undefined;
  /** Digest questions and settlements sent to other agents (cluster dedup); 0 when the record has none. */
  digestMessages: number;
  /** Messages sent to IP authorities (the cluster-wide per-IP limit); 0 when the record has none. */
  ipMessages: number;
}

/** The ground truth file: one URL a line. */
export function readTruth(path: string): Promise<Set<string>>;
/** Measures the union of crawl logs against `truth`. */
export function measureCrawlLogs(paths: readonly string[], truth: ReadonlySet<string>): Promise<CrawlMetrics>;
/**
 * Start times (epoch ms) of the answered requests (status > 0) of the union of crawl logs, ascending,
 * by host name; and the hosts met whose every request failed, sorted.
 */
export function requestTimesByHost(
  paths: readonly string[],
): Promise<{ answered: Map<string, number[]>; failedHosts: string[] }>;
/** Parses an agent's final summary lines. */
export function parseAgentSummary(lines: readonly string[]): AgentSummary;
/** Seen-set size estimated from the logged URLs and the drops after queueing. */
export function estimateSeenUrls(loggedUrls: number, dropped: Record<string, number>): number;
