import type { CrawlStats, ScrubCounts } from "../agent/index.js";
import type { Clock } from "../clock.js";
import type { PageTurnCounts } from "../frontier/index.js";
import type { CrawlLogInput } from "../storage/index.js";
import { AgentMetrics } from "./agent-metrics.js";
import { ConsoleServer, type ConsoleServerOptions, type ConsoleSource } from "./console-server.js";
import { FetchActivity } from "./fetch-activity.js";
import { RecentCaptures } from "./recent-captures.js";

/** How often the cluster's pages fetched are sampled for its rate, in milliseconds. */
const CLUSTER_SAMPLE_MS = 1000;

/** What the console observes of the agent itself (beyond its partition stats). */
export interface ObservedAgent {
  readonly stats: CrawlStats;
  readonly seenUrls: number;
  readonly urlsInFlight: number;
  readonly fetchesWaitingForBandwidth: number;
  /** Hosts waiting for a visit slot, and the shortest queue the next of them may have. */
  readonly readyHosts: { readonly hosts: number; readonly longestQueue: number };
  /** Pages that may be in progress at once, that are, and hosts waiting for a turn. */
  readonly pageTurns: PageTurnCounts;
  /** What the running check of the finished WARC files found. */
  readonly warcScrub: ScrubCounts;
  /** Calls `observer` with every crawl-log line; returns the function that stops it. */
  observeFetches(observer: (entry: CrawlLogInput) => void): () => void;
  /** The folder of its WARC files, and the CDXJ line of each record written from now on. */
  readonly archivedCaptures: {
    readonly folder: string;
    observeIndexed(observer: (line: string) => void): () => void;
  };
}

/**
 * One agent's console (`--http`): its metrics, its recent activity (with the captures it replays)
 * and the HTTP server that shows them. Started before the agent joins (so `/healthz` answers while it does), attached once the agent
 * crawls, told when it stops.
 */
export class AgentConsole {
  private unobserve: (() => void) | undefined;
  private unobserveCaptures: (() => void) | undefined;
  private clusterSampler: NodeJS.Timeout | undefined;

  private constructor(
    private readonly server: ConsoleServer,
    private readonly metrics: AgentMetrics,
    private readonly activity: FetchActivity,
    private readonly captures: RecentCaptures,
    /** The bound `HOST:PORT`. */
    readonly address: string,
  ) {}

  /** Binds the console's address (refusing a non-loopback one without a token or TLS). */
  static async start(
    options: ConsoleServerOptions,
    deps: { readonly agentId: string; readonly clock: Clock; readonly onError: (error: unknown) => void },
  ): Promise<AgentConsole> {
    const metrics = new AgentMetrics(deps.agentId);
    const activity = new FetchActivity({}, deps.clock);
    const server = new ConsoleServer(options, { metrics, activity, onError: deps.onError });
    const address = await server.start();
    return new AgentConsole(server, metrics, activity, new RecentCaptures(), address);
  }

  /** The agent crawls: serve its figures, and watch its fetches. */
  attach(agent: ObservedAgent, source: ConsoleSource): void {
    this.unobserve?.();
    this.unobserve = agent.observeFetches((entry) => {
      this.metrics.observe(entry);
      this.activity.record(entry);
    });
    this.metrics.attach({
      counters: () => agent.stats.durable,
      get seenUrls() {
        return agent.seenUrls;
      },
      get urlsInFlight() {
        return agent.urlsInFlight;
      },
      get fetchesWaitingForBandwidth() {
        return agent.fetchesWaitingForBandwidth;
      },
      get readyHosts() {
        return agent.readyHosts;
      },
      get pageTurns() {
        return agent.pageTurns;
      },
      get warcScrub() {
        return agent.warcScrub;
      },
      stats: () => source.stats(),
    });
    this.unobserveCaptures?.();
    this.unobserveCaptures = agent.archivedCaptures.observeIndexed((line) => this.captures.record(line));
    this.server.attach(source, { folder: agent.archivedCaptures.folder, captures: this.captures });
    // The cluster's rate is kept from the start, so a dashboard opened later draws it at once.
    clearInterval(this.clusterSampler);
    const sample = () => this.activity.noteClusterPages(source.clusterPagesFetched());
    sample();
    this.clusterSampler = setInterval(sample, CLUSTER_SAMPLE_MS);
    this.clusterSampler.unref();
  }

  /** The agent stops: `/readyz` says so; the figures stay readable until {@link stop}. */
  markStopping(): void {
    this.server.markStopping();
  }

  /** Closes the server. */
  async stop(): Promise<void> {
    this.unobserve?.();
    this.unobserveCaptures?.();
    clearInterval(this.clusterSampler);
    this.metrics.detach();
    await this.server.stop();
  }
}
