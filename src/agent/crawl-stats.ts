import type { Clock } from "../clock.js";
import type { RobotsStatus } from "../robots/index.js";

/** URLs and batches exchanged with one peer. */
export interface PeerTraffic {
  urlsSent: number;
  urlsReceived: number;
  batchesSent: number;
  batchesReceived: number;
}

/** Why a URL was dropped without a fetch; the keys of {@link CrawlStats.dropped}. */
export type DropReason =
  | "robots"
  | "crawl-delay-too-long"
  | "depth"
  | "scope"
  | "page-limit"
  | "nofollow"
  | "abandoned"
  | "blacklisted"
  | "fetched-before"
  | "sitemap-elsewhere"
  | "sitemap-limit"
  | "firewall"
  | "replicated"
  | "cross-over-full";

/** The counters of a crawl as kept durably (the store's `stats` metadata), so a restart goes on counting. */
export interface CrawlCounters {
  readonly pagesFetched: number;
  readonly bytesFetched: number;
  readonly linksFound: number;
  readonly linksToOtherAgents: number;
  readonly pagesRecovered: number;
  readonly fetchRetries: number;
  /** Pages whose payload was stored before, written as WARC revisits; absent in older state. */
  readonly duplicates?: number;
  /** Body bytes those revisits did not store again; absent in older state. */
  readonly duplicateBytes?: number;
  /** Messages sent to other agents to ask about or confirm payload digests; absent in older state. */
  readonly digestMessages?: number;
  /** Copies of payloads stored before, counted for the digests this agent owns; absent in older state. */
  readonly payloadCopies?: number;
  /** Payloads stored without the digest owner's answer; absent in older state. */
  readonly payloadsUnchecked?: number;
  readonly errors: Readonly<Record<string, number>>;
  readonly dropped: Readonly<Record<string, number>>;
  readonly peers: Readonly<Record<string, PeerTraffic>>;
  /** Pages fetched by status class (`2xx`…); absent in state written before it was kept. */
  readonly statusClasses?: Readonly<Record<string, number>>;
  /** robots.txt answers by outcome (a {@link RobotsStatus}); absent in state written before it was kept. */
  readonly robotsOutcomes?: Readonly<Record<string, number>>;
}

/**
 * The counters of one agent's crawl since it began in its data dir (restored at a restart from the
 * durable copy, {@link restore}), kept in memory for the stats RPC and the progress line. A plain
 * mutable record: the pipeline increments, readers snapshot.
 */
export class CrawlStats {
  readonly startedAtMs: number;
  /** Pages fetched before this start (restored), so this run's can be told apart. */
  private pagesBeforeThisRun = 0;
  pagesFetched = 0;
  bytesFetched = 0;
  linksFound = 0;
  /**
   * Links found on pages (and seeds) that another agent owns, offered to that agent: the URLs Cho
   * and Garcia-Molina's exchange mode sends (the firewall mode drops them instead, the cross-over mode
   * holds them). Each URL is handed away once, so fewer URLs than this are sent.
   */
  linksToOtherAgents = 0;
  pagesRecovered = 0;
  /** Fetches that failed in a way that may pass and were tried again (not counted in `errors`). */
  fetchRetries = 0;
  /** Pages whose payload was stored before (anywhere in the cluster), archived as WARC revisits. */
  duplicates = 0;
  /** Body bytes the revisits did not store again. */
  duplicateBytes = 0;
  /** Messages sent to other agents about payload digests (questions and confirmations). */
  digestMessages = 0;
  /**
   * Payloads stored again after a first copy, as this agent counts them for the digests it owns (a
   * claim that ran out, an agent that could not ask).
   */
  payloadCopies = 0;
  /** Payloads this agent stored without an answer from their digest's owner (each a possible copy). */
  payloadsUnchecked = 0;
  /** Hosts whose name was not found in this run (not saved: each run resolves afresh). */
  unresolvedHostsThisRun = 0;
  /** Messages sent to other agents, IP addresses' authorities, in this run (not saved). */
  ipMessagesThisRun = 0;
  /** Times a host's requests moved to another address in this run, its name resolving anew (not saved). */
  addressChangesThisRun = 0;
  /** Fetch failures by error class (an {@link ErrorCode} or `http_4xx`/`http_5xx`). */
  readonly errors = new Map<string, number>();
  /** URLs dropped before a fetch, by reason. */
  readonly dropped = new Map<DropReason, number>();
  readonly peers = new Map<string, PeerTraffic>();
  /**
   * Pages fetched by status class (`1xx`…`5xx`); pages restored from a state that did not keep classes
   * count as `unknown`, so the classes always add up to {@link pagesFetched}.
   */
  readonly statusClasses = new Map<string, number>();
  /** robots.txt answers received (fresh, not cached), by outcome: `parsed`, `allow-all`, `unavailable`. */
  readonly robotsOutcomes = new Map<RobotsStatus, number>();
  private readonly rateWindow: { atMs: number; pages: number }[] = [];
  private written: CrawlCounters;

  constructor(private readonly clock: Clock) {
    this.startedAtMs = clock.now();
    this.written = this.counters();
  }

  /**
   * The counters as of the last durable write of the crawl's state ({@link markDurable}): what stats
   * report, so a figure never counts a page that a crash can still take back (and fetch again), and
   * never goes down across a restart.
   */
  get durable(): CrawlCounters {
    return this.written;
  }

  /** Pages fetched since this process started, as of the last durable write. */
  get durablePagesThisRun(): number {
    return this.written.pagesFetched - this.pagesBeforeThisRun;
  }

  /** Records that `counters` (taken by {@link counters} for a batch) are now on disk with it. */
  markDurable(counters: CrawlCounters): void {
    this.written = counters;
  }

  /** Pages fetched since this process started. */
  get pagesFetchedThisRun(): number {
    return this.pagesFetched - this.pagesBeforeThisRun;
  }

  /** Takes the counters of the crawl so far (earlier runs in the same data dir) as the starting point. */
  restore(counters: CrawlCounters): void {
    this.pagesFetched = counters.pagesFetched;
    this.pagesBeforeThisRun = counters.pagesFetched;
    this.bytesFetched = counters.bytesFetched;
    this.linksFound = counters.linksFound;
    this.linksToOtherAgents = counters.linksToOtherAgents;
    this.pagesRecovered = counters.pagesRecovered;
    this.fetchRetries = counters.fetchRetries;
    this.duplicates = counters.duplicates ?? 0;
    this.duplicateBytes = counters.duplicateBytes ?? 0;
    this.digestMessages = counters.digestMessages ?? 0;
    this.payloadCopies = counters.payloadCopies ?? 0;
    this.payloadsUnchecked = counters.payloadsUnchecked ?? 0;
    for (const [name, count] of Object.entries(counters.errors)) this.errors.set(name, count);
    for (const [name, count] of Object.entries(counters.dropped)) this.dropped.set(name as DropReason, count);
    for (const [peer, traffic] of Object.entries(counters.peers)) this.peers.set(peer, { ...traffic });
    let classified = 0;
    for (const [name, count] of Object.entries(counters.statusClasses ?? {})) {
      this.statusClasses.set(name, count);
      classified += count;
    }
    if (classified < counters.pagesFetched) {
      this.statusClasses.set(
        "unknown",
        (this.statusClasses.get("unknown") ?? 0) + counters.pagesFetched - classified,
      );
    }
    for (const [name, count] of Object.entries(counters.robotsOutcomes ?? {})) {
      this.robotsOutcomes.set(name as RobotsStatus, count);
    }
    this.written = this.counters();
  }

  /** The counters as kept durably. */
  counters(): CrawlCounters {
    return {
      pagesFetched: this.pagesFetched,
      bytesFetched: this.bytesFetched,
      linksFound: this.linksFound,
      linksToOtherAgents: this.linksToOtherAgents,
      pagesRecovered: this.pagesRecovered,
      fetchRetries: this.fetchRetries,
      duplicates: this.duplicates,
      duplicateBytes: this.duplicateBytes,
      digestMessages: this.digestMessages,
      payloadCopies: this.payloadCopies,
      payloadsUnchecked: this.payloadsUnchecked,
      errors: Object.fromEntries(this.errors),
      dropped: Object.fromEntries(this.dropped),
      // Copies: the live records keep counting after the write, the durable ones must not.
      peers: Object.fromEntries([...this.peers].map(([peer, traffic]) => [peer, { ...traffic }])),
      statusClasses: Object.fromEntries(this.statusClasses),
      robotsOutcomes: Object.fromEntries(this.robotsOutcomes),
    };
  }

  /** Counts one fetch that reached a server and answered `status` with `bytes` of body. */
  recordFetch(bytes: number, status: number): void {
    this.pagesFetched++;
    this.bytesFetched += bytes;
    const statusClass = `${Math.floor(status / 100)}xx`;
    this.statusClasses.set(statusClass, (this.statusClasses.get(statusClass) ?? 0) + 1);
  }

  /** Counts one page archived as a revisit, whose `bytes` of body were not stored again. */
  recordDuplicate(bytes: number): void {
    this.duplicates++;
    this.duplicateBytes += bytes;
  }

  /** Counts one robots.txt answer received from a server (or its failure). */
  recordRobots(outcome: RobotsStatus): void {
    this.robotsOutcomes.set(outcome, (this.robotsOutcomes.get(outcome) ?? 0) + 1);
  }

  /** Counts one failure of class `errorClass`. */
  recordError(errorClass: string): void {
    this.errors.set(errorClass, (this.errors.get(errorClass) ?? 0) + 1);
  }

  /** Counts one URL dropped for `reason`. */
  recordDrop(reason: DropReason): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + 1);
  }

  /** The traffic record of `peer`, created on first use. */
  peer(peer: string): PeerTraffic {
    let traffic = this.peers.get(peer);
    if (!traffic) {
      traffic = { urlsSent: 0, urlsReceived: 0, batchesSent: 0, batchesReceived: 0 };
      this.peers.set(peer, traffic);
    }
    return traffic;
  }

  /** Total errors of every class. */
  get errorCount(): number {
    let total = 0;
    for (const count of this.errors.values()) total += count;
    return total;
  }

  /** URLs and batches exchanged with every peer together. */
  get traffic(): PeerTraffic {
    const total = { urlsSent: 0, urlsReceived: 0, batchesSent: 0, batchesReceived: 0 };
    for (const traffic of this.peers.values()) {
      total.urlsSent += traffic.urlsSent;
      total.urlsReceived += traffic.urlsReceived;
      total.batchesSent += traffic.batchesSent;
      total.batchesReceived += traffic.batchesReceived;
    }
    return total;
  }

  /** Pages per second over the last ~10 s (sampled by each call). */
  pagesPerSecond(): number {
    const now = this.clock.now();
    this.rateWindow.push({ atMs: now, pages: this.pagesFetched });
    while (this.rateWindow.length > 2 && now - (this.rateWindow[1]?.atMs ?? now) >= 10_000)
      this.rateWindow.shift();
    const first = this.rateWindow[0];
    if (!first || now === first.atMs) {
      const elapsed = now - this.startedAtMs;
      return elapsed > 0 ? (this.pagesFetchedThisRun * 1000) / elapsed : 0;
    }
    return ((this.pagesFetched - first.pages) * 1000) / (now - first.atMs);
  }

  /** Milliseconds since the agent started. */
  get uptimeMs(): number {
    return this.clock.now() - this.startedAtMs;
  }
}

/** URLs sent to peers per page fetched (Cho and Garcia-Molina's communication overhead). */
export function communicationOverhead(counters: CrawlCounters): number {
  if (counters.pagesFetched === 0) return 0;
  let urlsSent = 0;
  for (const traffic of Object.values(counters.peers)) urlsSent += traffic.urlsSent;
  return urlsSent / counters.pagesFetched;
}
