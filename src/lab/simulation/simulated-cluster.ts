import { FlushPolicy } from "../../cluster/index.js";
import { ErrorCode, invalidArgument, UbiError } from "../../errors.js";
import { Assignment, type Hasher64, Mt19937 } from "../../hashing/index.js";
import type { LinkGraph } from "../../testweb/index.js";
import { hostKey } from "../../url/index.js";
import { EventQueue } from "./event-queue.js";
import type { SimulationFault, SimulationSettings, SimulationTiming } from "./parameters.js";
import { SimulatedAgent, type SimulatedView, type SimulatedWorld } from "./simulated-agent.js";

/**
 * A discrete-event simulation of a ubicrawl cluster crawling a web given as its link graph: agents
 * `agent-1` … `agent-n` (capacity 1) assigned hosts by the real identifier-seeded consistent hashing,
 * crawling and exchanging URLs as {@link SimulatedAgent} describes, heartbeating all-to-all (each pair
 * once an interval, each message costing CPU by the size of the membership table it carries), and
 * seeing a dead agent `suspectAfterMs` plus up to one heartbeat after its death. Runs until every
 * agent is idle with nothing buffered or in flight.
 */

/** What {@link simulateCrawl} simulates. */
export interface SimulationSpec {
  /** The web crawled: its pages, and the URLs each leads to. */
  readonly graph: LinkGraph;
  /** Agents started with seeds. */
  readonly agents: number;
  /** Each agent's seeds (URLs of the graph), given who owns each host key. */
  readonly seedsOf: (agentId: string, ownerOf: (hostKey: string) => string) => readonly string[];
  /** The agents' settings, and the costs and delays of their machines and network. */
  readonly settings: SimulationSettings;
  readonly timing: SimulationTiming;
  /** Agents killed or added mid-crawl (not both). */
  readonly fault?: SimulationFault;
  /** Seed of the draws (fetch times, detection delays). @default 1 */
  readonly seed?: number;
  /** The assignment's hash function. */
  readonly hasher: Hasher64;
}

/** What a simulated crawl measured. */
export interface SimulationResult {
  /** Agents started with seeds. */
  readonly agents: number;
  /** Pages fetched (N), distinct pages fetched (I), and the graph's pages (U). */
  readonly fetches: number;
  readonly distinct: number;
  readonly truthSize: number;
  /** I / U. */
  readonly coverage: number;
  /** (N − I) / I. */
  readonly overlap: number;
  /** URLs sent to other agents, in how many batches. */
  readonly urlsSent: number;
  readonly batchesSent: number;
  /** URLs sent a page fetched. */
  readonly overhead: number;
  /** Heartbeat messages (requests and answers). */
  readonly heartbeats: number;
  /** Simulated seconds from the start to the last fetch. */
  readonly seconds: number;
  /**
   * Pages a second an agent started with seeds fetched over the crawl's middle ({@link steadyRate}):
   * without its start and its tail.
   */
  readonly steadyPagesPerSecondPerAgent: number;
  /** CPU time used over CPU time there was, all agents ever started, to the last fetch. */
  readonly cpuBusy: number;
  /** With a fault: when it came (simulated seconds), when the last survivor's view changed, and the
   * first fetch of the dead agents' hosts by another (seconds after the fault). */
  readonly faultAtSeconds?: number;
  readonly viewChangedAfterSeconds?: number;
  readonly gapSeconds?: number;
  /** Events the simulation ran. */
  readonly events: number;
}

/** How often an agent's own CPU is spent, in slices ({@link SimulationTiming.cpuMsPerAgentSecond}). */
const UPKEEP_MS = 100;

/** The middle of a crawl a steady rate is taken over: from this share of its fetches... */
const STEADY_FROM = 0.1;
/** ...to this one. */
const STEADY_TO = 0.9;

/**
 * Fetches a second over the middle of a crawl (from its {@link STEADY_FROM} to its {@link STEADY_TO}
 * fetch), given each fetch's time (ms, in order): the rate without the start (claims, first batches)
 * and the tail (the last hosts, the last batches), which weigh more the smaller the crawl.
 */
export function steadyRate(sortedTimesMs: readonly number[]): number {
  const from = Math.floor(sortedTimesMs.length * STEADY_FROM);
  const to = Math.ceil(sortedTimesMs.length * STEADY_TO) - 1;
  if (to <= from) return 0;
  const span = (sortedTimesMs[to] as number) - (sortedTimesMs[from] as number);
  return span <= 0 ? 0 : ((to - from) * 1000) / span;
}

/** Stops a simulation that would never end (a bug, or a web too large for the time given). */
const MAX_SIMULATED_MS = 24 * 3600_000;

/** Simulates a crawl; see the module's comment. */
export function simulateCrawl(spec: SimulationSpec): SimulationResult {
  return new SimulatedCluster(spec).run();
}

class SimulatedCluster implements SimulatedWorld {
  readonly events = new EventQueue();
  readonly graph: LinkGraph;
  readonly settings: SimulationSettings;
  readonly timing: SimulationTiming;
  readonly policy: FlushPolicy;
  private readonly agents: SimulatedAgent[] = [];
  private readonly ids: string[];
  private readonly random: Mt19937;
  private readonly hostKeys: string[];
  private readonly hostIndexes = new Map<string, number>();
  private readonly reported: (number | undefined)[];
  private fetches = 0;
  /** When each fetch was done, in order. */
  private readonly fetchTimes: number[] = [];
  private readonly fetchedOnce: Uint8Array;
  private distinct = 0;
  private lastFetchAt = 0;
  private heartbeats = 0;
  private faultAt: number | undefined;
  private faultDone = false;
  private viewChangedAt: number | undefined;
  private gapAt: number | undefined;
  private readonly faultyHosts = new Set<number>();
  private readonly views = new Map<string, SimulatedView>();
  /** View changes scheduled and not yet applied. */
  private pendingViews = 0;
  /** Nothing left to do: the heartbeats and upkeep stop. */
  private over = false;

  constructor(private readonly spec: SimulationSpec) {
    const { graph, agents, fault } = spec;
    if (!Number.isInteger(agents) || agents < 1)
      invalidArgument(`agents must be a positive integer, got ${agents}`);
    if (spec.timing.fetchMs.length === 0) invalidArgument("the simulation needs at least one fetch time");
    const kill = fault?.kill ?? 0;
    if (kill > 0 && (fault?.add ?? 0) > 0)
      invalidArgument("a simulated fault kills agents or adds them, not both");
    if (kill >= agents)
      invalidArgument(`a simulated fault must leave an agent alive (${kill} of ${agents} killed)`);
    this.graph = graph;
    this.settings = spec.settings;
    this.timing = spec.timing;
    this.policy = new FlushPolicy({ targetBatchUrls: spec.settings.batchUrls });
    this.random = new Mt19937(Uint32Array.of(spec.seed ?? 1));
    const total = agents + (fault?.add ?? 0);
    this.ids = Array.from({ length: total }, (_, i) => `agent-${i + 1}`);
    this.reported = new Array<number | undefined>(total).fill(undefined);
    this.fetchedOnce = new Uint8Array(graph.fetchedCount);
    // A host's key is the real agents' (name:port unless the port is the scheme's).
    this.hostKeys = new Array<string>(graph.hosts.length);
    graph.hostOf.forEach((host, node) => {
      if (this.hostKeys[host] === undefined) this.hostKeys[host] = hostKey(graph.urls[node] as string);
    });
    for (const [host, key] of this.hostKeys.entries()) this.hostIndexes.set(key, host);
  }

  run(): SimulationResult {
    const { agents, fault, seedsOf } = this.spec;
    const initial = this.viewOf(Array.from({ length: agents }, (_, i) => i));
    for (let i = 0; i < this.ids.length; i++) {
      this.agents.push(new SimulatedAgent(i, this.ids[i] as string, this, initial));
    }
    const nodeOf = new Map(this.graph.urls.map((url, node) => [url, node]));
    const ownerOf = (key: string) => this.ids[initial.owners[this.hostIndex(key)] ?? 0] as string;
    for (let i = 0; i < agents; i++) {
      const seeds = seedsOf(this.ids[i] as string, ownerOf).map((url) => {
        const node = nodeOf.get(url);
        if (node === undefined) invalidArgument(`seed ${url} is not in the simulated web`);
        return node;
      });
      (this.agents[i] as SimulatedAgent).start(seeds);
    }
    if (fault && (fault.kill ?? 0) + (fault.add ?? 0) > 0 && fault.afterFetches <= 0) this.injectFault();
    this.heartbeat();
    this.upkeep();
    const events = this.events.run(() => false, MAX_SIMULATED_MS);
    if (this.events.pending > 0) {
      throw new UbiError(
        ErrorCode.ExperimentFailed,
        "the simulated crawl did not end within a simulated day",
      );
    }
    return this.result(events);
  }

  agent(index: number): SimulatedAgent {
    return this.agents[index] as SimulatedAgent;
  }

  drawFetchMs(): number {
    const { fetchMs } = this.timing;
    return fetchMs[this.random.next() % fetchMs.length] as number;
  }

  reportedQueued(index: number): number | undefined {
    return this.reported[index];
  }

  onFetch(agent: SimulatedAgent, node: number): void {
    this.fetches++;
    this.lastFetchAt = this.events.now;
    this.fetchTimes.push(this.events.now);
    if (this.fetchedOnce[node] === 0) {
      this.fetchedOnce[node] = 1;
      this.distinct++;
    }
    const host = this.graph.hostOf[node] as number;
    const fault = this.spec.fault;
    if (this.gapAt === undefined && this.faultAt !== undefined && this.faultyHosts.has(host)) {
      // A kill's gap ends with a survivor's fetch there, a join's with a newcomer's.
      const survivor = agent.index < this.spec.agents - (fault?.kill ?? 0);
      if ((fault?.add ?? 0) > 0 ? agent.index >= this.spec.agents : survivor) this.gapAt = this.events.now;
    }
    if (fault && !this.faultDone && this.fetches >= fault.afterFetches) this.injectFault();
  }

  /**
   * Every interval each pair of live agents exchanges a request and an answer carrying the membership
   * table and the sender's load: the loads become what the others know of each other's queues, and
   * each agent pays the messages' CPU. Stops once the crawl is over.
   */
  private heartbeat(): void {
    const live = this.agents.filter((agent) => agent.alive);
    const n = live.length;
    this.heartbeats += n * (n - 1);
    const { cpuMsPerHeartbeat, cpuMsPerGossipEntry } = this.timing;
    for (const agent of live) {
      this.reported[agent.index] = agent.crawlIdle ? 0 : agent.queuedUrls;
      if (n > 1) agent.useCpu(2 * (n - 1) * (cpuMsPerHeartbeat + cpuMsPerGossipEntry * n));
    }
    for (const agent of live) agent.exchange.examine();
    // Over when nothing is left to do or to deliver (a fault not reached by then never comes).
    if (this.pendingViews === 0 && live.every((agent) => agent.quiet)) {
      this.over = true;
      return;
    }
    this.events.after(this.settings.heartbeatMs, () => this.heartbeat());
  }

  /** Each live agent's own CPU ({@link SimulationTiming.cpuMsPerAgentSecond}), in slices, until the end. */
  private upkeep(): void {
    if (this.over || this.timing.cpuMsPerAgentSecond <= 0) return;
    const slice = (this.timing.cpuMsPerAgentSecond * UPKEEP_MS) / 1000;
    for (const agent of this.agents) if (agent.alive) agent.useCpu(slice);
    this.events.after(UPKEEP_MS, () => this.upkeep());
  }

  /** Kills the last `kill` agents, or starts `add` more; the others see it in their own time. */
  private injectFault(): void {
    const fault = this.spec.fault as SimulationFault;
    this.faultDone = true;
    this.faultAt = this.events.now;
    const { agents } = this.spec;
    const kill = fault.kill ?? 0;
    const add = fault.add ?? 0;
    const survivors = Array.from({ length: agents - kill }, (_, i) => i);
    const before = this.viewOf(Array.from({ length: agents }, (_, i) => i));
    if (kill > 0) {
      const dead = Array.from({ length: kill }, (_, i) => agents - kill + i);
      for (const index of dead) (this.agents[index] as SimulatedAgent).kill();
      this.graph.hosts.forEach((_, host) => {
        if (dead.includes(before.owners[host] as number)) this.faultyHosts.add(host);
      });
      const after = this.viewOf(survivors);
      for (const index of survivors) {
        const detectAfter = this.settings.suspectAfterMs + this.uniform(this.settings.heartbeatMs);
        this.changeViewLater(index, after, dead, detectAfter);
      }
    }
    if (add > 0) {
      const joined = Array.from({ length: add }, (_, i) => agents + i);
      const after = this.viewOf([...survivors, ...joined]);
      this.graph.hosts.forEach((_, host) => {
        if (joined.includes(after.owners[host] as number)) this.faultyHosts.add(host);
      });
      for (const index of joined) {
        const agent = this.agents[index] as SimulatedAgent;
        agent.start([]);
        agent.changeView(after, []);
      }
      // The others hear of the newcomers by their first heartbeats (or gossip), within an interval.
      for (const index of survivors)
        this.changeViewLater(index, after, [], this.uniform(this.settings.heartbeatMs));
    }
  }

  private changeViewLater(
    index: number,
    view: SimulatedView,
    crashed: readonly number[],
    delayMs: number,
  ): void {
    this.pendingViews++;
    this.events.after(delayMs, () => {
      this.pendingViews--;
      (this.agents[index] as SimulatedAgent).changeView(view, crashed);
      this.viewChangedAt = Math.max(this.viewChangedAt ?? 0, this.events.now);
    });
  }

  /** The view in which `alive` (agent indexes) are the agents, built once per set. */
  private viewOf(alive: readonly number[]): SimulatedView {
    const key = alive.join(",");
    const known = this.views.get(key);
    if (known) return known;
    const assignment = Assignment.build(
      alive.map((i) => ({ id: this.ids[i] as string })),
      {},
      this.spec.hasher,
    );
    const indexOf = new Map(this.ids.map((id, i) => [id, i]));
    const owners = Int32Array.from(this.hostKeys, (key) => indexOf.get(assignment.ownerOf(key)) as number);
    const view: SimulatedView = {
      alive: new Set(alive),
      owners,
      askOrder: (host, claimant, k) =>
        assignment
          .successors(this.hostKeys[host] as string, Math.min(k + 1, alive.length))
          .map((id) => indexOf.get(id) as number)
          .filter((index) => index !== claimant)
          .slice(0, k),
    };
    this.views.set(key, view);
    return view;
  }

  private hostIndex(key: string): number {
    const index = this.hostIndexes.get(key);
    if (index === undefined) invalidArgument(`host ${key} is not in the simulated web`);
    return index;
  }

  /** A draw in [0, max). */
  private uniform(max: number): number {
    return (this.random.next() / 2 ** 32) * max;
  }

  private result(events: number): SimulationResult {
    const seconds = this.lastFetchAt / 1000;
    let urlsSent = 0;
    let batchesSent = 0;
    let cpuMs = 0;
    for (const agent of this.agents) {
      urlsSent += agent.exchange.urlsSent;
      batchesSent += agent.exchange.batchesSent;
      cpuMs += agent.cpuMs;
    }
    const { agents } = this.spec;
    const truthSize = this.graph.fetchedCount;
    return {
      agents,
      fetches: this.fetches,
      distinct: this.distinct,
      truthSize,
      coverage: truthSize === 0 ? 1 : this.distinct / truthSize,
      overlap: this.distinct === 0 ? 0 : (this.fetches - this.distinct) / this.distinct,
      urlsSent,
      batchesSent,
      overhead: this.fetches === 0 ? 0 : urlsSent / this.fetches,
      heartbeats: this.heartbeats,
      seconds,
      steadyPagesPerSecondPerAgent: steadyRate(this.fetchTimes) / agents,
      cpuBusy: this.lastFetchAt === 0 ? 0 : cpuMs / (this.lastFetchAt * this.agents.length),
      ...(this.faultAt === undefined
        ? {}
        : {
            faultAtSeconds: this.faultAt / 1000,
            ...(this.viewChangedAt === undefined
              ? {}
              : { viewChangedAfterSeconds: (this.viewChangedAt - this.faultAt) / 1000 }),
            ...(this.gapAt === undefined ? {} : { gapSeconds: (this.gapAt - this.faultAt) / 1000 }),
          }),
      events,
    };
  }
}
