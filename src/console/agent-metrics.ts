import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { CrawlCounters, PeerTraffic, ScrubCounts } from "../agent/index.js";
import type { PageTurnCounts } from "../frontier/index.js";
import type { CrawlLogInput } from "../storage/index.js";
import type { AgentStats } from "../transport/index.js";
import { registerBusyIpMetrics } from "./busy-ip-metrics.js";

/** What the metrics read of a running agent at each scrape. */
export interface MetricsSource {
  /** The agent's counters as last written (durable: they go on counting across restarts in the same data dir). */
  counters(): CrawlCounters;
  /** Distinct URLs ever queued here (the seen set's size). */
  readonly seenUrls: number;
  /** URLs taken from their queues and not done yet. */
  readonly urlsInFlight: number;
  /** Downloads waiting for their share of the bandwidth (0 without `--max-bandwidth`). */
  readonly fetchesWaitingForBandwidth: number;
  /** Hosts waiting for a visit slot, and the queue length the next of them has at least. */
  readonly readyHosts: { readonly hosts: number; readonly longestQueue: number };
  /** Pages that may be in progress at once, that are, and hosts waiting for a turn. */
  readonly pageTurns: PageTurnCounts;
  /** What the running check of the finished WARC files found (this process's counts). */
  readonly warcScrub: ScrubCounts;
  /** The agent's partition stats, as `ubicrawl stats --json` shows them. */
  stats(): AgentStats;
}

/** Buckets of the fetch duration histogram, seconds: 5 ms to 1 min. */
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Buckets of the page size histogram, bytes: 256 B to 16 MiB, by fours. */
const SIZE_BUCKETS_BYTES = [256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216];

/**
 * An agent's Prometheus metrics (prom-client): Node's process metrics, the crawl's counters and
 * gauges read from the agent at each scrape, and histograms of fetch durations and page sizes fed
 * with each fetch. Names follow Prometheus' conventions (`ubicrawl_` prefix, `_total` counters, base
 * units); labels are bounded (status classes, error codes, reasons, peer agent ids, the busiest IP
 * addresses' ranks — never a host or a URL; an address is a label of the busiest addresses' info gauge
 * only, see busy-ip-metrics.ts). Counters are the agent's durable counters, so they equal
 * `ubicrawl stats`' figures and do not fall back to zero at a restart in the same data dir.
 */
export class AgentMetrics {
  /** The registry to serve (`/metrics`). */
  readonly registry = new Registry();
  private source: MetricsSource | undefined;
  private readonly fetchDuration: Histogram<"outcome">;
  private readonly pageSize: Histogram;

  constructor(agentId: string) {
    const registry = this.registry;
    collectDefaultMetrics({ register: registry });
    const read = (fill: (source: MetricsSource) => void) => () => {
      if (this.source) fill(this.source);
    };
    new Gauge({
      name: "ubicrawl_agent_info",
      help: "This agent's id (always 1)",
      labelNames: ["id"],
      registers: [registry],
    }).set({ id: agentId }, 1);
    const ready: Gauge = new Gauge({
      name: "ubicrawl_ready",
      help: "1 once the agent crawls (joined its cluster), 0 while it starts or stops",
      registers: [registry],
      collect: () => ready.set(this.source ? 1 : 0),
    });
    const counter = <L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[],
      values: (source: MetricsSource, stats: AgentStats) => Iterable<[Partial<Record<L, string>>, number]>,
    ) => {
      const metric: Counter<L> = new Counter<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        collect: read((source) => {
          metric.reset();
          let any = false;
          for (const [labels, value] of values(source, this.statsOf(source))) {
            metric.inc(labels, value);
            any = true;
          }
          // A metric without labels is 0 after a reset: absent instead when there is no value.
          if (!any && labelNames.length === 0) metric.remove();
        }),
      });
      return metric;
    };
    const gauge = <L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[],
      values: (source: MetricsSource, stats: AgentStats) => Iterable<[Partial<Record<L, string>>, number]>,
    ) => {
      const metric: Gauge<L> = new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        collect: read((source) => {
          metric.reset();
          let any = false;
          for (const [labels, value] of values(source, this.statsOf(source))) {
            metric.set(labels, value);
            any = true;
          }
          // A metric without labels is 0 after a reset: absent instead when there is no value.
          if (!any && labelNames.length === 0) metric.remove();
        }),
      });
      return metric;
    };
    const one = (value: number): [Record<never, string>, number][] => [[{}, value]];
    const byLabel = <L extends string>(label: L, counts: Readonly<Record<string, number>> = {}) =>
      Object.entries(counts).map(([key, value]): [Partial<Record<L, string>>, number] => [
        { [label]: key } as Partial<Record<L, string>>,
        value,
      ]);

    counter(
      "ubicrawl_pages_fetched_total",
      "Pages fetched (responses received and archived), by HTTP status class",
      ["status_class"],
      (s) => byLabel("status_class", s.counters().statusClasses),
    );
    counter("ubicrawl_fetched_bytes_total", "Body bytes received", [], (s) => one(s.counters().bytesFetched));
    counter(
      "ubicrawl_fetch_errors_total",
      "Fetches that failed for good or answered 4xx/5xx, by error code",
      ["code"],
      (s) => byLabel("code", s.counters().errors),
    );
    counter(
      "ubicrawl_warc_scrubbed_files_total",
      "Finished WARC files read back against their indexes while the agent runs, since it started",
      [],
      (s) => one(s.warcScrub.filesChecked),
    );
    counter(
      "ubicrawl_warc_damaged_files_total",
      "Finished WARC files found cut short, gone or damaged while the agent runs, since it started",
      [],
      (s) => one(s.warcScrub.filesDamaged),
    );
    counter(
      "ubicrawl_warc_lost_records_total",
      "Records of those files that did not read back (their pages done here are fetched again), since the agent started",
      [],
      (s) => one(s.warcScrub.recordsLost),
    );
    counter("ubicrawl_fetch_retries_total", "Failed fetches that will be tried again", [], (s) =>
      one(s.counters().fetchRetries),
    );
    counter(
      "ubicrawl_duplicates_total",
      "Pages whose payload was stored before, archived as WARC revisit records",
      [],
      (s) => one(s.counters().duplicates ?? 0),
    );
    counter("ubicrawl_duplicate_bytes_total", "Body bytes the revisit records did not store again", [], (s) =>
      one(s.counters().duplicateBytes ?? 0),
    );
    counter(
      "ubicrawl_digest_messages_total",
      "Messages sent to other agents about payload digests (duplicate detection)",
      [],
      (s) => one(s.counters().digestMessages ?? 0),
    );
    counter(
      "ubicrawl_payload_copies_total",
      "Payloads stored again after a first copy, counted for the digests this agent owns (a race: a claim that ran out, an agent that could not ask)",
      [],
      (s) => one(s.counters().payloadCopies ?? 0),
    );
    counter(
      "ubicrawl_payloads_unchecked_total",
      "Payloads stored whole without an answer from their digest's owner (slow or unreachable): each a possible copy",
      [],
      (s) => one(s.counters().payloadsUnchecked ?? 0),
    );
    counter(
      "ubicrawl_revisits_total",
      "Revisits of --recrawl answered since the agent started, by outcome: not_modified (304), unchanged (the same payload), changed, failed (planned again)",
      ["outcome"],
      (_s, st) =>
        st.revisits === null
          ? []
          : byLabel("outcome", {
              not_modified: st.revisits.notModified,
              unchanged: st.revisits.unchanged,
              changed: st.revisits.changed,
              failed: st.revisits.missed,
            }),
    );
    counter(
      "ubicrawl_revisits_queued_total",
      "Pages queued again by --recrawl because their revisit was due, since the agent started",
      [],
      (_s, st) => (st.revisits === null ? [] : one(st.revisits.queued)),
    );
    counter(
      "ubicrawl_revisit_histories_received_total",
      "Page histories of --recrawl taken in with hosts handed to this agent, since the agent started",
      [],
      (_s, st) => (st.revisits === null ? [] : one(st.revisits.received)),
    );
    counter(
      "ubicrawl_robots_txt_total",
      "robots.txt answers received, by outcome (parsed, allow-all, unavailable)",
      ["outcome"],
      (s) => byLabel("outcome", s.counters().robotsOutcomes),
    );
    counter("ubicrawl_urls_dropped_total", "URLs dropped without a fetch, by reason", ["reason"], (s) =>
      byLabel("reason", s.counters().dropped),
    );
    counter("ubicrawl_links_found_total", "Links found on fetched pages", [], (s) =>
      one(s.counters().linksFound),
    );
    counter("ubicrawl_links_to_other_agents_total", "Links found whose host another agent owns", [], (s) =>
      one(s.counters().linksToOtherAgents),
    );
    counter(
      "ubicrawl_pages_recovered_total",
      "Pages a host's previous owners had fetched, taken over instead of fetched again",
      [],
      (s) => one(s.counters().pagesRecovered),
    );
    const perPeer = (pick: (traffic: PeerTraffic) => number) => (s: MetricsSource) =>
      Object.entries(s.counters().peers).map(([peer, traffic]): [Partial<Record<"peer", string>>, number] => [
        { peer },
        pick(traffic),
      ]);
    counter(
      "ubicrawl_exchange_urls_sent_total",
      "URLs sent to the agent owning their host, by peer",
      ["peer"],
      perPeer((t) => t.urlsSent),
    );
    counter(
      "ubicrawl_exchange_urls_received_total",
      "URLs received from other agents, by peer",
      ["peer"],
      perPeer((t) => t.urlsReceived),
    );
    counter(
      "ubicrawl_exchange_batches_sent_total",
      "URL batches sent, by peer",
      ["peer"],
      perPeer((t) => t.batchesSent),
    );
    counter(
      "ubicrawl_exchange_batches_received_total",
      "URL batches received, by peer",
      ["peer"],
      perPeer((t) => t.batchesReceived),
    );

    gauge("ubicrawl_urls_queued", "Distinct URLs queued, waiting for a fetch", [], (_s, st) =>
      one(st.queuedUrls),
    );
    gauge("ubicrawl_urls_in_flight", "URLs taken from their queues and not done yet", [], (s) =>
      one(s.urlsInFlight),
    );
    gauge(
      "ubicrawl_fetches_waiting_for_bandwidth",
      "Downloads waiting for their share of the bandwidth under --max-bandwidth (0 without a bound)",
      [],
      (s) => one(s.fetchesWaitingForBandwidth),
    );
    gauge(
      "ubicrawl_hosts_ready",
      "Hosts with queued URLs waiting for a visit slot; slots go to the longest queues first",
      [],
      (s) => one(s.readyHosts.hosts),
    );
    gauge(
      "ubicrawl_longest_ready_queue",
      "Queued URLs the next host to get a visit slot has at least (a power of two; 0 when none waits)",
      [],
      (s) => one(s.readyHosts.longestQueue),
    );
    gauge(
      "ubicrawl_page_turns",
      "Pages that may be fetched and processed at once; fewer while the event loop is saturated",
      [],
      (s) => one(s.pageTurns.limit),
    );
    gauge("ubicrawl_page_turns_in_use", "Pages being fetched or processed now", [], (s) =>
      one(s.pageTurns.inUse),
    );
    gauge(
      "ubicrawl_page_turns_waiting",
      "Hosts waiting for a page turn; turns go to the longest queues first",
      [],
      (s) => one(s.pageTurns.waiting),
    );
    gauge("ubicrawl_revisits_planned", "Pages with a planned revisit (--recrawl)", [], (_s, st) =>
      st.revisits === null ? [] : one(st.revisits.planned),
    );
    gauge(
      "ubicrawl_revisit_overdue_seconds",
      "How late the earliest planned revisit is (0 when none is due yet; --recrawl)",
      [],
      (_s, st) => (st.revisits === null ? [] : one(st.revisits.overdueMs / 1000)),
    );
    gauge(
      "ubicrawl_revisit_estimated_freshness",
      "The estimated freshness of this agent's share: the expected share of its pages still current, from their estimated change rates and last visits, over a sample of them (absent before any estimate; --recrawl)",
      [],
      (_s, st) =>
        st.revisits === null || st.revisits.freshnessPages === 0 ? [] : one(st.revisits.estimatedFreshness),
    );
    gauge(
      "ubicrawl_revisit_budget",
      "The revisits a second this agent spends now: in a cluster its part of the live agents' --recrawl-budget, in proportion to its pages; alone its own (absent under --recrawl off or fixed, and while it revisits no page)",
      [],
      (_s, st) => (st.revisits === null || st.revisits.budgetPages === 0 ? [] : one(st.revisits.budget)),
    );
    gauge("ubicrawl_seen_urls", "Distinct URLs ever queued here (the seen set)", [], (s) => one(s.seenUrls));
    gauge(
      "ubicrawl_hosts",
      "Hosts by state: owned, known, active (being visited), done, held (for a crashed agent)",
      ["state"],
      (_s, st) => [
        [{ state: "owned" }, st.hostsOwned],
        [{ state: "known" }, st.hostsKnown],
        [{ state: "active" }, st.hostsActive],
        [{ state: "done" }, st.hostsDone],
        [{ state: "held" }, st.hostsHeld],
      ],
    );
    gauge("ubicrawl_hosts_waiting", "Hosts with queued URLs that wait, by reason", ["reason"], (_s, st) =>
      st.waiting.map((entry): [{ reason: string }, number] => [{ reason: entry.reason }, entry.hosts]),
    );
    gauge(
      "ubicrawl_peers",
      "Other agents in this agent's view, by status: alive, suspected (its hosts held for it to come back), gone (suspected, its hosts taken over), left",
      ["status"],
      (_s, st) => {
        const counts = new Map<string, number>([
          ["alive", 0],
          ["suspected", 0],
          ["gone", 0],
          ["left", 0],
        ]);
        const held = new Set(st.heldFor);
        for (const member of st.view) {
          if (member.id === st.id) continue;
          const status =
            member.status === "SUSPECTED" && !held.has(member.id) ? "gone" : member.status.toLowerCase();
          counts.set(status, (counts.get(status) ?? 0) + 1);
        }
        return byLabel("status", Object.fromEntries(counts));
      },
    );
    gauge("ubicrawl_paused", "1 while fetching is paused (by an operator or a full disk)", [], (_s, st) =>
      one(st.paused ? 1 : 0),
    );
    gauge("ubicrawl_idle", "1 while nothing is queued, in flight or unacknowledged here", [], (_s, st) =>
      one(st.idle ? 1 : 0),
    );
    gauge("ubicrawl_circle_share", "This agent's share of the hashing circle (0..1)", [], (_s, st) =>
      one(st.circleShare),
    );
    gauge("ubicrawl_capacity", "This agent's capacity", [], (_s, st) => one(st.capacity));
    registerBusyIpMetrics(registry, () => (this.source ? this.statsOf(this.source) : undefined));

    this.fetchDuration = new Histogram({
      name: "ubicrawl_fetch_duration_seconds",
      help: "Time from request to the end of the body, by outcome (response or error)",
      labelNames: ["outcome"],
      buckets: DURATION_BUCKETS_S,
      registers: [registry],
    });
    this.pageSize = new Histogram({
      name: "ubicrawl_page_size_bytes",
      help: "Body bytes of each response received",
      buckets: SIZE_BUCKETS_BYTES,
      registers: [registry],
    });
  }

  /** Starts reading `source` at each scrape (the agent is ready); until then only process metrics show. */
  attach(source: MetricsSource): void {
    this.source = source;
    this.scrapeStats = undefined;
  }

  /** Stops reading the agent (it stops). */
  detach(): void {
    this.source = undefined;
  }

  /** Takes in one crawl-log line (a fetch, a failed attempt, a failure) for the histograms. */
  observe(entry: CrawlLogInput): void {
    const seconds = entry.durationMs / 1000;
    if (entry.status > 0) {
      this.fetchDuration.observe({ outcome: "response" }, seconds);
      this.pageSize.observe(entry.bytes);
    } else if (entry.durationMs > 0) {
      this.fetchDuration.observe({ outcome: "error" }, seconds);
    }
  }

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    this.scrapeStats = undefined;
    const body = await this.registry.metrics();
    this.scrapeStats = undefined;
    return { contentType: this.registry.contentType, body };
  }

  /** The partition stats, computed once per scrape (they walk every host). */
  private scrapeStats: AgentStats | undefined;
  private statsOf(source: MetricsSource): AgentStats {
    this.scrapeStats ??= source.stats();
    return this.scrapeStats;
  }
}
