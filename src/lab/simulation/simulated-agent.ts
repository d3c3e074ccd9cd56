import type { FlushPolicy } from "../../cluster/index.js";
import type { LinkGraph } from "../../testweb/index.js";
import type { EventQueue } from "./event-queue.js";
import type { SimulationSettings, SimulationTiming } from "./parameters.js";
import { SimulatedExchange } from "./simulated-exchange.js";

/**
 * An agent of the simulated cluster: the real agent's crawl and exchange reduced to what shapes its
 * timing and traffic. Hosts are visited breadth-first, one fetch at a time each, at most
 * `maxActiveHosts` at once, a visit yielding its slot after `quantumPages`; a host's first visit
 * fetches robots.txt and queues its sitemap last; each page costs CPU on the agent's one CPU, where
 * received batches and heartbeats queue too. Links to its own hosts are queued once (a seen set);
 * links to other agents' hosts are offered to the exchange, which sends each URL once (a sent set) in
 * batches to its owner under the real {@link FlushPolicy}; a receiver queues what it owns and forwards
 * the rest. A new owner asks up to k agents for a host before crawling it (page recovery), and a
 * previous owner that answers hands over the pages it fetched there. On a view change an agent
 * re-sends what it ever sent to the dead and hands over the queues of hosts it lost.
 */

/** What an agent of the simulation reaches beyond itself. */
export interface SimulatedWorld {
  /** The simulated time. */
  readonly events: EventQueue;
  /** The web crawled. */
  readonly graph: LinkGraph;
  readonly settings: SimulationSettings;
  readonly timing: SimulationTiming;
  /** When a buffer to another agent goes (the real agents' policy). */
  readonly policy: FlushPolicy;
  /** The agent of an index. */
  agent(index: number): SimulatedAgent;
  /** A fetch's duration, drawn from the measured ones. */
  drawFetchMs(): number;
  /** `agent` fetched page `node`. */
  onFetch(agent: SimulatedAgent, node: number): void;
  /** Agent `index`'s queued URLs in its last heartbeat (0 when it was idle); undefined before any. */
  reportedQueued(index: number): number | undefined;
}

/** A view of the cluster: who is alive and who owns each host. */
export interface SimulatedView {
  readonly alive: ReadonlySet<number>;
  /** Owner (an agent index) of each host of the graph. */
  readonly owners: Int32Array;
  /** The agents a new owner of `host` asks, in the order it asks them (the real agents': the circle's). */
  askOrder(host: number, claimant: number, k: number): number[];
}

/**
 * What a claimed agent answers: it holds the host (its pages), does not, or asks to be asked later (its
 * view lags). A holder that lost the host has already pushed its pages to the new owner, and pushes
 * those of a fetch still in flight when it ends.
 */
export type ClaimAnswer = readonly number[] | "not-held" | "later";

/** How long a claimant waits before asking again an agent that answered "later". */
const CLAIM_RETRY_MS = 500;

enum HostState {
  Idle,
  Ready,
  Active,
  Claiming,
}

interface HostWork {
  readonly queue: number[];
  head: number;
  state: HostState;
  robotsDone: boolean;
  /** Fetches of the current visit. */
  turn: number;
}

/** See the module's comment. */
export class SimulatedAgent {
  /** Started and not killed. */
  alive = false;
  private view: SimulatedView;
  /** URLs queued here once (the frontier's seen set). */
  private readonly seen = new Set<number>();
  /** Pages fetched here, or handed over to here, by host. */
  private readonly fetchedByHost = new Map<number, number[]>();
  private readonly fetched = new Set<number>();
  /** Hosts this agent may crawl: claimed (asked the others), or its own from the start. */
  private readonly held = new Set<number>();
  private readonly hosts = new Map<number, HostWork>();
  private readonly ready: number[] = [];
  private readyHead = 0;
  private active = 0;
  private claiming = 0;
  private waiting = 0;
  private cpuFreeAt = 0;
  /** Its side of the URL exchange. */
  readonly exchange: SimulatedExchange;
  /** Idle when last looked at: buffers are re-examined when the agent goes idle, not at each look. */
  private wasIdle = false;
  /** CPU ms used. */
  cpuMs = 0;
  /** Pages it fetched. */
  fetches = 0;

  constructor(
    readonly index: number,
    readonly id: string,
    private readonly world: SimulatedWorld,
    view: SimulatedView,
  ) {
    this.view = view;
    this.exchange = new SimulatedExchange(this, world);
  }

  /** True while `peer` is alive in this agent's view. */
  sees(peer: number): boolean {
    return this.view.alive.has(peer);
  }

  /** Routes `node` as a URL given back (never filtered), then starts any host it made ready. */
  reroute(node: number): void {
    this.route(node, true);
    this.startHosts();
  }

  /** URLs waiting in this agent's host queues. */
  get queuedUrls(): number {
    return this.waiting;
  }

  /** Nothing to fetch: no host visited, ready or being claimed, nothing queued. */
  get crawlIdle(): boolean {
    return (
      this.active === 0 && this.claiming === 0 && this.readyHead === this.ready.length && this.waiting === 0
    );
  }

  /** Idle, and nothing buffered for or on its way to another agent. */
  get quiet(): boolean {
    return this.crawlIdle && this.exchange.quiet;
  }

  /** Starts with `seeds` (nodes of its own hosts, or any: they are routed). */
  start(seeds: readonly number[]): void {
    this.alive = true;
    for (const node of seeds) this.route(node, false);
    this.startHosts();
  }

  /** Dies: everything it was doing stops, and its memory is gone. */
  kill(): void {
    this.alive = false;
  }

  /** Spends `ms` of CPU after what is queued on it, then runs `then`, or `ifDied` if it died meanwhile. */
  useCpu(ms: number, then?: () => void, ifDied?: () => void): void {
    const start = Math.max(this.world.events.now, this.cpuFreeAt);
    this.cpuFreeAt = start + ms;
    this.cpuMs += ms;
    if (then) this.world.events.at(this.cpuFreeAt, () => (this.alive ? then() : ifDied?.()));
  }

  /**
   * Applies a new view: buffers for the dead go to their hosts' new owners, and so does everything
   * ever sent to them (`crashed`); queues of hosts now owned by another are handed to it, with the
   * pages fetched there.
   */
  changeView(view: SimulatedView, crashed: readonly number[]): void {
    if (!this.alive) return;
    this.view = view;
    for (const dead of crashed) this.exchange.redistribute(dead);
    for (const [host, work] of this.hosts) {
      const owner = view.owners[host] as number;
      if (owner === this.index) continue;
      this.held.delete(host);
      const moved = work.queue.splice(work.head);
      this.waiting -= moved.length;
      work.queue.length = 0;
      work.head = 0;
      for (const node of moved) this.exchange.send(owner, node);
      const done = this.fetchedByHost.get(host);
      if (done) {
        const peer = this.world.agent(owner);
        this.world.events.after(this.world.timing.latencyMs, () => peer.adoptFetched(host, done));
      }
    }
    this.startHosts();
    this.exchange.examine();
  }

  /** A previous owner's pages of `host`: not fetched again here. */
  adoptFetched(host: number, nodes: readonly number[]): void {
    if (!this.alive) return;
    for (const node of nodes) this.markFetched(host, node);
  }

  /**
   * A claimant asks whether this agent holds `host`: if so, and its own view agrees the claimant owns
   * it, it hands over the pages it fetched there; a holder whose view lags asks to be asked later.
   */
  answerClaim(host: number, claimant: number): ClaimAnswer {
    if (!this.alive || !this.held.has(host)) return "not-held";
    if (this.view.owners[host] !== claimant) return "later";
    this.held.delete(host);
    return this.fetchedByHost.get(host) ?? [];
  }

  /** A batch from another agent's exchange, `from`, arrived. */
  receive(from: SimulatedExchange, urls: readonly number[]): void {
    // A receiver that is dead, or dies before it answers, resets the call: the sender tries again.
    const failed = () =>
      this.world.events.after(this.world.timing.latencyMs, () => from.failed(this.index, urls));
    if (!this.alive) {
      failed();
      return;
    }
    this.useCpu(
      this.world.timing.cpuMsPerUrlReceived * urls.length,
      () => {
        let fresh = 0;
        for (const node of urls) {
          const owner = this.view.owners[this.world.graph.hostOf[node] as number] as number;
          if (owner !== this.index) {
            this.exchange.send(owner, node);
            fresh++;
          } else if (this.accept(node)) fresh++;
        }
        this.startHosts();
        this.world.events.after(this.world.timing.latencyMs, () => from.acked(this.index, urls, fresh));
      },
      failed,
    );
  }

  /** A link, seed or URL given back: queued here if this agent owns its host, else handed on. */
  private route(node: number, given: boolean): void {
    const owner = this.view.owners[this.world.graph.hostOf[node] as number] as number;
    if (owner === this.index) this.accept(node);
    else if (given) this.exchange.send(owner, node);
    else this.exchange.offer(owner, node);
  }

  /** Queues `node` unless seen; true when queued. */
  private accept(node: number): boolean {
    if (this.seen.has(node)) return false;
    this.seen.add(node);
    const host = this.world.graph.hostOf[node] as number;
    const work = this.workOf(host);
    work.queue.push(node);
    this.waiting++;
    if (work.state === HostState.Idle) this.admit(host, work);
    return true;
  }

  /** A host with work: ready at once if held, else claimed first (page recovery). */
  private admit(host: number, work: HostWork): void {
    if (this.held.has(host) || this.world.settings.recoveryK === 0 || this.view.alive.size === 1) {
      this.held.add(host);
      work.state = HostState.Ready;
      this.ready.push(host);
      return;
    }
    work.state = HostState.Claiming;
    this.claiming++;
    this.claim(host, work, this.view.askOrder(host, this.index, this.world.settings.recoveryK));
  }

  /** Asks `asked` one after the other whether one holds `host`; the first that does hands it over. */
  private claim(host: number, work: HostWork, asked: readonly number[]): void {
    const [first, ...rest] = asked;
    const roundTrip = 2 * this.world.timing.latencyMs;
    if (first === undefined) {
      this.world.events.after(0, () => this.claimed(host, work));
      return;
    }
    this.world.events.after(roundTrip, () => {
      if (!this.alive) return;
      const answer = this.world.agent(first).answerClaim(host, this.index);
      if (answer === "not-held") this.claim(host, work, rest);
      else if (answer === "later")
        this.world.events.after(CLAIM_RETRY_MS, () => this.claim(host, work, asked));
      else {
        this.adoptFetched(host, answer);
        this.claimed(host, work);
      }
    });
  }

  private claimed(host: number, work: HostWork): void {
    if (!this.alive) return;
    this.claiming--;
    if (this.view.owners[host] !== this.index) {
      // Lost while being claimed: its queue went to the new owner with the view change.
      work.state = HostState.Idle;
      this.startHosts();
      return;
    }
    this.held.add(host);
    work.state = HostState.Ready;
    this.ready.push(host);
    this.startHosts();
  }

  /** Fills free visit slots from the ready hosts, in order. */
  private startHosts(): void {
    const { maxActiveHosts } = this.world.settings;
    while (this.active < maxActiveHosts && this.readyHead < this.ready.length) {
      const host = this.ready[this.readyHead++] as number;
      if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
        this.ready.splice(0, this.readyHead);
        this.readyHead = 0;
      }
      const work = this.workOf(host);
      work.state = HostState.Active;
      work.turn = 0;
      this.active++;
      this.visitNext(host, work);
    }
    const idle = this.crawlIdle;
    if (idle && !this.wasIdle) this.exchange.examine();
    this.wasIdle = idle;
  }

  /** The next fetch of a host's visit, or the visit's end. */
  private visitNext(host: number, work: HostWork): void {
    if (!this.alive) return;
    const { graph, settings, events } = this.world;
    for (;;) {
      const lost = this.view.owners[host] !== this.index;
      const othersWait = this.readyHead < this.ready.length;
      if (lost || work.head >= work.queue.length || (work.turn >= settings.quantumPages && othersWait)) {
        this.active--;
        if (!lost && work.head < work.queue.length) {
          work.state = HostState.Ready;
          this.ready.push(host);
        } else work.state = HostState.Idle;
        this.startHosts();
        return;
      }
      if (!work.robotsDone) {
        work.robotsDone = true;
        const sitemap = graph.sitemapOf[host] as number;
        if (sitemap >= 0 && !this.seen.has(sitemap)) {
          this.seen.add(sitemap);
          work.queue.push(sitemap);
          this.waiting++;
        }
        events.after(this.world.drawFetchMs() + settings.delayMs, () => this.visitNext(host, work));
        return;
      }
      const node = work.queue[work.head++] as number;
      this.waiting--;
      // Not a page (robots.txt disallows it, its host is gone), or handed over as fetched: dropped.
      if (node >= graph.fetchedCount || this.fetched.has(node)) continue;
      work.turn++;
      events.after(this.world.drawFetchMs(), () => {
        if (!this.alive) return;
        this.useCpu(this.world.timing.cpuMsPerPage, () => {
          this.markFetched(host, node);
          // Fetched after the host moved: its new owner learns of it with the hand-over.
          const owner = this.view.owners[host] as number;
          if (owner !== this.index) {
            const peer = this.world.agent(owner);
            events.after(this.world.timing.latencyMs, () => peer.adoptFetched(host, [node]));
          }
          this.fetches++;
          this.world.onFetch(this, node);
          const start = graph.linkStart[node] as number;
          const end = graph.linkStart[node + 1] as number;
          for (let i = start; i < end; i++) this.route(graph.linkTargets[i] as number, false);
          this.startHosts();
          if (settings.delayMs > 0) events.after(settings.delayMs, () => this.visitNext(host, work));
          else this.visitNext(host, work);
        });
      });
      return;
    }
  }

  private markFetched(host: number, node: number): void {
    if (this.fetched.has(node)) return;
    this.fetched.add(node);
    this.seen.add(node);
    let done = this.fetchedByHost.get(host);
    if (!done) {
      done = [];
      this.fetchedByHost.set(host, done);
    }
    done.push(node);
  }

  private workOf(host: number): HostWork {
    let work = this.hosts.get(host);
    if (!work) {
      work = { queue: [], head: 0, state: HostState.Idle, robotsDone: false, turn: 0 };
      this.hosts.set(host, work);
    }
    return work;
  }
}
