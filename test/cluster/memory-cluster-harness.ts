import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { type AgentOptions, crawlSummary } from "../../src/agent/index.js";
import type { Clock } from "../../src/clock.js";
import { ClusterNode, type ClusterNodeDeps, type ClusterOptions } from "../../src/cluster/index.js";
import { TEST_WEB_FETCH_TIMEOUT_MS } from "../../src/launch/index.js";
import { type LogFields, type Logger, silentLogger } from "../../src/logging/index.js";
import type { TestWebOptions } from "../../src/testweb/index.js";
import { INSECURE, MemoryNetwork } from "../../src/transport/index.js";
import {
  crawlMetrics,
  inProcessAgentOptions,
  type RequestTrace,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { VirtualTime } from "../support/virtual-time.js";

/**
 * A cluster of real agents in the test's process, on a {@link MemoryNetwork}: each agent has its own
 * frontier, LevelDB folder and fetches from the test web over loopback; only the peers' gRPC is
 * replaced, and every message is still encoded, validated and answered by the real handlers. For the
 * scenarios that need no real process (joins, leaves, crashes as far as the survivors see them,
 * restarts on the same data, partitions): seconds instead of a minute of processes.
 *
 * A crash here is {@link MemoryCluster.crash}: the node stops without a word to the others and keeps
 * what it made durable. What a SIGKILL loses besides (pages fetched and not yet synced) needs a real
 * process and is tested with one.
 */

/** Heartbeats every 50 ms, suspicion after 400 ms, no takeover grace: membership settles in a blink. */
export const FAST_MEMBERSHIP: Omit<ClusterOptions, "listen" | "join"> = {
  capacity: 1,
  heartbeatIntervalMs: 50,
  suspectAfterMs: 400,
  takeoverDelayMs: 0,
  security: INSECURE,
};

/**
 * Agent options of the test web's agents, as `testWebAgentFlags` gives agent processes: a short fetch
 * timeout, a robots.txt that failed is retried soon and given up on after two tries, and each agent
 * keeps its own dedup index.
 */
export const TEST_WEB_AGENT: Partial<AgentOptions> = {
  fetchTimeoutMs: TEST_WEB_FETCH_TIMEOUT_MS,
  robotsRetryMs: 100,
  maxRobotsAttempts: 2,
  dedup: "local",
};

/**
 * A takeover grace as long as the agents' default: where no agent dies, one falsely suspected for a
 * moment (one process runs every agent, so a loaded machine delays heartbeats) keeps its hosts.
 */
export const NO_TAKEOVER: Partial<ClusterOptions> = { takeoverDelayMs: 10_000 };

/** Where an operator's calls start from on a cluster's `MemoryNetwork` (it serves nothing): links from it can be cut. */
export const OPERATOR = "operator.memory:7000";

/** How one agent of a {@link MemoryCluster} starts. */
export interface MemoryAgentOptions {
  /** The agent's own seeds. @default none */
  readonly seeds?: readonly string[];
  /** The agents it joins through. @default the cluster's first agent (none for that one) */
  readonly join?: readonly string[];
  /** Agent options over the in-process defaults (delay, limits…). */
  readonly agent?: Partial<AgentOptions>;
  /** Cluster options over {@link FAST_MEMBERSHIP} and the cluster's own. */
  readonly cluster?: Partial<ClusterOptions>;
  /** The address it listens on. @default `<id>.memory:7000` */
  readonly address?: string;
  /** Node dependencies over the network's transport and the cluster's logger. */
  readonly deps?: Partial<ClusterNodeDeps>;
}

/** Options of a whole {@link MemoryCluster}. */
export interface MemoryClusterOptions {
  /** Agent options every agent starts with, over {@link TEST_WEB_AGENT} (each agent's own come over them). */
  readonly agent?: Partial<AgentOptions>;
  /** Cluster options every agent starts with, over {@link FAST_MEMBERSHIP}. */
  readonly cluster?: Partial<ClusterOptions>;
  /** @default silent */
  readonly logger?: Logger;
  /** The clock of the network and every agent (virtual time's, test/support/virtual-time.ts). @default the system's */
  readonly clock?: Clock;
}

/** Agents started, stopped, crashed and restarted by id, on one {@link MemoryNetwork} and test web. */
export class MemoryCluster {
  readonly network: MemoryNetwork;
  /** The running agents by id, in the order they started. */
  readonly nodes = new Map<string, ClusterNode>();
  private first: string | undefined;
  private readonly logger: Logger;

  constructor(
    readonly web: WebFixture,
    private readonly options: MemoryClusterOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.network = new MemoryNetwork({
      logger: this.logger,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  }

  /** The address agent `id` listens on by default. */
  addressOf(id: string): string {
    return `${id}.memory:7000`;
  }

  /** The data folder of agent `id` (kept across a crash or a stop, for a restart). */
  dataDirOf(id: string): string {
    return join(this.web.dir, `data-${id}`);
  }

  /** The running agent `id`; throws if it is not running. */
  node(id: string): ClusterNode {
    const node = this.nodes.get(id);
    if (!node) throw new Error(`agent ${id} is not running`);
    return node;
  }

  /** Starts agent `id` (again, on its data, if it ran before) and waits until it joined. */
  async start(id: string, options: MemoryAgentOptions = {}): Promise<ClusterNode> {
    if (this.nodes.has(id)) throw new Error(`agent ${id} is already running`);
    this.first ??= id;
    const address = options.address ?? this.addressOf(id);
    const join = options.join ?? (id === this.first ? [] : [this.addressOf(this.first)]);
    const node = await ClusterNode.start(
      inProcessAgentOptions(
        { id, dataDir: this.dataDirOf(id), seeds: [...(options.seeds ?? [])], hostsFile: this.web.hostsFile },
        { ...TEST_WEB_AGENT, ...this.options.agent, ...options.agent },
      ),
      { ...FAST_MEMBERSHIP, ...this.options.cluster, ...options.cluster, listen: address, join },
      {
        transport: this.network.transport(address),
        logger: this.logger,
        ...(this.options.clock === undefined ? {} : { clock: this.options.clock }),
        // A `ctl leave` ends in a stop, as the agent command's process ends.
        afterLeave: () => void this.stop(id),
        ...options.deps,
      },
    );
    this.nodes.set(id, node);
    return node;
  }

  /**
   * Starts agents `ids` one after another, each joining those before it, the last with `seeds` — as
   * the real-process test clusters start (no host moves at the start: the crawl begins once all joined).
   * `options` apply to each.
   */
  async startAll(
    ids: readonly string[],
    seeds: readonly string[],
    options: Omit<MemoryAgentOptions, "seeds" | "join"> = {},
  ): Promise<void> {
    for (const [i, id] of ids.entries()) {
      const join = ids.slice(0, i).map((before) => this.addressOf(before));
      await this.start(id, { ...options, join, seeds: i === ids.length - 1 ? seeds : [] });
    }
  }

  /** Gracefully leaves (hands its hosts and URLs over) and stops agent `id`. */
  async leave(id: string): ReturnType<ClusterNode["leave"]> {
    const node = this.node(id);
    const outcome = await node.leave();
    await this.stop(id);
    return outcome;
  }

  /**
   * Crashes agent `id` as the others see a crash: it stops without telling anyone, keeping only what
   * it made durable, and they find out by its silence.
   */
  async crash(id: string): Promise<void> {
    await this.stop(id);
  }

  /**
   * Runs agent `id` to the crawl's end as its process does with `--exit-when-done` (agent-command.ts):
   * once its crawl is complete and no URL batch slipped in since, it tells the others it leaves on
   * purpose and stops. Resolves with the fields of the `stopped` record its process would log; rejects
   * after `timeoutMs`, saying what is left (the agent keeps running then).
   */
  async untilDone(id: string, timeoutMs: number): Promise<LogFields> {
    const node = this.node(id);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${id}'s crawl did not end within ${timeoutMs} ms; ${this.leftover()}`)),
        timeoutMs,
      );
    });
    try {
      do await Promise.race([node.agent.whenDone(), timeout]);
      while (!node.sealIntake());
    } finally {
      clearTimeout(timer);
    }
    await node.announceLeave();
    await this.stop(id);
    return crawlSummary(node.agent, "done").fields;
  }

  /** Stops agent `id` if it runs (no leave announced); its data folder stays. */
  async stop(id: string): Promise<void> {
    const node = this.nodes.get(id);
    if (!node) return;
    this.nodes.delete(id);
    await node.stop();
  }

  /**
   * Runs agents `ids` to the crawl's end at once, each as {@link untilDone} does; rejects after
   * `timeoutMs` if any has not ended, saying what the agents still running have left.
   */
  async runToEnd(ids: readonly string[], timeoutMs = 30_000): Promise<LogFields[]> {
    return Promise.all(ids.map((id) => this.untilDone(id, timeoutMs)));
  }

  /** Stops every agent; for `afterEach`. */
  async stopAll(): Promise<void> {
    const nodes = [...this.nodes.values()];
    this.nodes.clear();
    await Promise.all(nodes.map((node) => node.stop()));
  }

  /** Each running agent's view, for a failure's message: `a sees a,b,c`. */
  views(): string[] {
    return [...this.nodes.entries()].map(
      ([id, node]) => `${id} sees ${node.alive.map((member) => member.id).join(",")}`,
    );
  }

  /** True when every running agent sees exactly `ids` alive. */
  viewsAre(ids: readonly string[]): boolean {
    const expected = [...ids].sort().join();
    return [...this.nodes.values()].every(
      (node) =>
        node.alive
          .map((member) => member.id)
          .sort()
          .join() === expected,
    );
  }

  /** The test web's pages no agent fetched yet. */
  missing(): string[] {
    return crawlMetrics(servedPages(this.web.web.recorder), this.web.truth().urls).missing;
  }

  /** Coverage so far: pages missing, fetched twice, and fetched though not in the truth. */
  metrics(): ReturnType<typeof crawlMetrics> {
    return crawlMetrics(servedPages(this.web.web.recorder), this.web.truth().urls);
  }

  /**
   * Checks the crawl's outcome after a fault at `faultAtMs` (`performance.now()`, as `trace` stamps its
   * requests): every page fetched, none outside the web, and each page fetched twice fetched again only
   * from the fault on (its price: what came before it fetched nothing twice). Returns those pages.
   */
  expectCoveredRepeatingSince(trace: RequestTrace, faultAtMs: number): string[] {
    const metrics = this.metrics();
    expect(metrics.missing).toEqual([]);
    expect(metrics.extra).toEqual([]);
    const again = metrics.repeated.filter((url) =>
      trace.requests.some((request) => request.url === url && request.beganAtMs >= faultAtMs),
    );
    expect(again).toEqual(metrics.repeated);
    return metrics.repeated;
  }

  /**
   * The first of `ids` crawling a host it owns with URLs queued — one whose leave hands over both —,
   * once there is one (in the order given; rejects after `timeoutMs`).
   */
  async crawlingOwnHost(ids: readonly string[], timeoutMs: number): Promise<string> {
    let found = "";
    await waitFor(
      () => {
        found =
          ids.find((id) => {
            const { queuedUrls, hostsActive, hostsOwned } = this.node(id).stats();
            return queuedUrls > 0 && hostsActive > 0 && hostsOwned > 0;
          }) ?? "";
        return found !== "";
      },
      () => `an agent crawling a host it owns: ${this.leftover()}`,
      timeoutMs,
    );
    return found;
  }

  /** What each running agent still has queued or waiting: what a stuck crawl is stuck on. */
  leftover(): string {
    return JSON.stringify(
      [...this.nodes.values()].map((node) => {
        const { id, queuedUrls, idle, waiting } = node.stats();
        return { id, queuedUrls, idle, waiting };
      }),
    );
  }
}

/** What a test of an in-process cluster starts, each stopped after the test by {@link inProcessScope}. */
export interface InProcessScope {
  /** Starts a test web. */
  web(options: TestWebOptions): Promise<WebFixture>;
  /** Makes a cluster on `web` (its agents are started by the test). */
  cluster(web: WebFixture, options?: MemoryClusterOptions): MemoryCluster;
  /**
   * Virtual time (test/support/virtual-time.ts), moving from now until the test's agents stopped: give
   * its clock to the clusters that run on it.
   */
  virtualTime(): VirtualTime;
}

/**
 * For a test file of in-process clusters: after each test, every agent of the clusters it made stops,
 * then virtual time and every test web it started. Call once at the top of the file (or of a `describe`).
 */
export function inProcessScope(): InProcessScope {
  const webs: WebFixture[] = [];
  const clusters: MemoryCluster[] = [];
  const times: VirtualTime[] = [];
  afterEach(async () => {
    // Time moves while the agents stop: a stop may wait on the clock.
    await Promise.all(clusters.splice(0).map((cluster) => cluster.stopAll()));
    for (const time of times.splice(0)) time.stop();
    for (const web of webs.splice(0)) await web.stop();
  });
  return {
    web: async (options) => {
      const web = await startWebFixture(options);
      webs.push(web);
      return web;
    },
    cluster: (web, options) => {
      const cluster = new MemoryCluster(web, options);
      clusters.push(cluster);
      return cluster;
    },
    virtualTime: () => {
      const time = new VirtualTime();
      times.push(time);
      time.start();
      return time;
    },
  };
}
