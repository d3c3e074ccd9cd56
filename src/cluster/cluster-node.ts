import { Agent, type ClusterHooks } from "../agent/agent.js";
import type { AgentOptions } from "../agent/agent-options.js";
import { type Clock, sleep, systemClock, type TimerHandle } from "../clock.js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import { FailureDetector, type MemberEntry } from "../failure-detector/index.js";
import { Assignment, loadHasher64 } from "../hashing/index.js";
import {
  AgentServer,
  type AgentServiceHandlers,
  type AgentStats,
  type ControlReply,
  type ControlRequest,
  type HeartbeatReply,
  type HeartbeatRequest,
  type JoinReply,
  type JoinRequest,
  PeerClientPool,
  parseHostPort,
  type StatsReply,
  type StatsRequest,
  type TransportSecurity,
  type UrlBatch,
  type UrlBatchAck,
  type WasFetchedReply,
  type WasFetchedRequest,
} from "../transport/index.js";
import { hostKey, normalizeUrl, UrlFingerprinter } from "../url/index.js";
import { fromWireMember, toWireMember } from "./members.js";
import { Ownership } from "./ownership.js";
import { PageRecovery } from "./page-recovery.js";
import { DEFAULT_TAKEOVER_DELAY_MS, TakeoverGrace } from "./takeover-grace.js";
import { TerminationDetector, type WorkLoad } from "./termination.js";
import { resendUnacked } from "./unacked-urls.js";
import { UrlExchange } from "./url-exchange.js";

/** How an agent takes part in a cluster; the CLI's `--listen`, `--join`, … flags. */
export interface ClusterOptions {
  /** `host:port` of this agent's gRPC server (port 0 picks one). */
  readonly listen: string;
  /**
   * `host:port` the other agents are told to reach this agent at (behind NAT, a container or a proxy);
   * it is this agent's address in every membership view. @default the bound `listen` address
   */
  readonly advertise?: string;
  /** Addresses of live agents to join through (empty: start a new cluster). */
  readonly join: readonly string[];
  /** This agent's capacity: its share of hosts is proportional to it. @default 1 */
  readonly capacity: number;
  /** @default 1000 */
  readonly heartbeatIntervalMs: number;
  /** @default 5000 */
  readonly suspectAfterMs: number;
  /** Previous owners asked by page recovery (UbiCrawler's k). @default 2 */
  readonly recoveryK: number;
  /**
   * How long hosts of a crashed agent wait for it to come back before their new owners crawl them
   * (0: at once). An agent restarted on its data dir within it refetches nothing but the pages in flight.
   * @default 10000
   */
  readonly takeoverDelayMs?: number;
  /** Replicas per unit of capacity on the circle; every agent of a cluster must use the same value. */
  readonly replicasPerUnit?: number;
  /** Transport security of agent-to-agent traffic. */
  readonly security: TransportSecurity;
  /** How long joining keeps trying the `join` addresses before giving up. @default 30000 */
  readonly joinTimeoutMs?: number;
  /**
   * `SubmitUrls` batches handled at once at most; further ones are answered `Overloaded` at once so
   * their senders back off and retry, which bounds the memory a flood of batches can take.
   * @default 32
   */
  readonly maxConcurrentSubmits?: number;
}

/** Default of {@link ClusterOptions.maxConcurrentSubmits}: well above one batch per peer in flight. */
export const DEFAULT_MAX_CONCURRENT_SUBMITS = 32;

/** How long a page-recovery answer may wait for a fetch of an asked URL's host in flight here. */
const WAS_FETCHED_WAIT_MS = 3_000;
/**
 * How often the frontier is checked for URLs of hosts owned by others: a fetch in flight when its host
 * was handed over can end put back in the queue (a parked host, a full disk), after the hand-over.
 */
const STRANDED_CHECK_MS = 2_000;
/**
 * Least time between two extra heartbeat rounds for termination detection: the end of a crawl is
 * found a few round trips after the last agent goes idle, not a heartbeat interval or two later.
 */
const TERMINATION_PULSE_GAP_MS = 100;
/** Seen batch ids kept per process to count each received batch once despite retries. */
const MAX_REMEMBERED_BATCHES = 100_000;

/**
 * One agent in a cluster: runs the crawl of an {@link Agent} and, around it, the gRPC server, the
 * heartbeat failure detector with gossip membership, the consistent-hashing ownership, the URL
 * exchange, page recovery and termination detection. No coordinator: every decision is local.
 *
 * When the alive set changes, ownership is rebuilt and the frontier re-examined: queues of hosts now
 * owned by others are handed to them, URLs buffered for dead agents go to the new owners, and every
 * URL ever handed to a crashed agent is re-sent to its hosts' new owners (self-stabilization).
 */
export class ClusterNode implements AgentServiceHandlers {
  readonly agent: Agent;
  private readonly detector: FailureDetector;
  private readonly ownership: Ownership;
  private readonly exchange: UrlExchange;
  private readonly recovery: PageRecovery;
  private readonly grace: TakeoverGrace;
  private readonly termination = new TerminationDetector();
  private readonly peers: PeerClientPool;
  private readonly server: AgentServer;
  private readonly receivedBatches = new Set<string>();
  private batchesDelivered = 0;
  private batchesReceived = 0;
  private submitsInProgress = 0;
  private aliveIds = new Set<string>();
  private reexamining: Promise<void> = Promise.resolve();
  private leaving = false;
  private intakeClosed = false;
  /** Local time of the last change of the alive set (termination waits for a stable view). */
  private viewChangedAtMs = 0;
  /** Set once something waits for the crawl's end (termination detection then asks for fresh loads). */
  private awaitingEnd = false;
  /** This agent's idleness at the last termination check, to notice it going idle. */
  private wasIdle = false;
  private lastPulseAtMs = Number.NEGATIVE_INFINITY;
  private stopping: Promise<void> | undefined;
  private strandedTimer: TimerHandle | undefined;

  private constructor(
    readonly options: ClusterOptions,
    /** The address other agents reach this one at: `advertise`, or the bound address. */
    readonly address: string,
    /** The address the gRPC server is bound to (the real port when `listen` asked for port 0). */
    readonly listenAddress: string,
    private readonly clock: Clock,
    parts: {
      agent: Agent;
      detector: FailureDetector;
      ownership: Ownership;
      exchange: UrlExchange;
      recovery: PageRecovery;
      grace: TakeoverGrace;
      peers: PeerClientPool;
      server: AgentServer;
    },
  ) {
    this.agent = parts.agent;
    this.detector = parts.detector;
    this.ownership = parts.ownership;
    this.exchange = parts.exchange;
    this.recovery = parts.recovery;
    this.grace = parts.grace;
    this.peers = parts.peers;
    this.server = parts.server;
  }

  /**
   * Opens the agent, starts the server, joins the cluster through `options.join` and starts crawling.
   * Rejects with `IdConflict` when a live agent already has this id (or its replicas collide).
   */
  static async start(
    agentOptions: AgentOptions,
    options: ClusterOptions,
    clock: Clock = systemClock,
  ): Promise<ClusterNode> {
    if (options.advertise !== undefined && parseHostPort(options.advertise) === undefined) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `advertise must be host:port, got "${options.advertise}"`,
      );
    }
    const maxSubmits = options.maxConcurrentSubmits ?? DEFAULT_MAX_CONCURRENT_SUBMITS;
    if (!Number.isSafeInteger(maxSubmits) || maxSubmits < 1) {
      throw new UbiError(ErrorCode.InvalidArgument, "maxConcurrentSubmits must be a positive integer");
    }
    const hasher = await loadHasher64();
    const fingerprinter = new UrlFingerprinter(hasher);
    const ownership = new Ownership(agentOptions.id, options.capacity, options.replicasPerUnit, hasher);
    const grace = new TakeoverGrace(options.takeoverDelayMs ?? DEFAULT_TAKEOVER_DELAY_MS, {
      clock,
      current: () => ownership.assignment,
      build: (agents) => Assignment.build(agents, { replicasPerUnit: options.replicasPerUnit }, hasher),
    });
    const peers = new PeerClientPool({ security: options.security });
    // The node is created after the agent and server; hooks and handlers reach it through this cell.
    let node: ClusterNode | undefined;
    const ready = (): ClusterNode => {
      if (!node) throw new UbiError(ErrorCode.PeerUnreachable, "agent is starting");
      return node;
    };
    const exchangeCell: { current?: UrlExchange } = {};
    const hooks: ClusterHooks = {
      ownership: () => ownership,
      exchange: {
        send: (owner, url, depth, host) => exchangeCell.current?.send(owner, url, depth, host),
        offer: (owner, url, depth, host) => exchangeCell.current?.offer(owner, url, depth, host),
      },
      owns: (host) => ownership.ownerOf(host) === agentOptions.id,
      fetchedElsewhere: (host, url, upcoming) => ready().recovery.fetchedElsewhere(host, url, upcoming),
      isCrawlComplete: () => node?.isCrawlComplete() ?? false,
      heldUntilMs: (host) => grace.heldUntilMs(host),
    };
    const agent = await Agent.open(agentOptions, { clock, cluster: hooks });
    const server = new AgentServer(
      { security: options.security },
      {
        handlers: {
          join: (request) => ready().join(request),
          heartbeat: (request) => ready().heartbeat(request),
          submitUrls: (request) => ready().submitUrls(request),
          wasFetched: (request) => ready().wasFetched(request),
          getStats: (request) => ready().getStats(request),
          control: (request) => ready().control(request),
        },
        clock,
        onUnexpectedError: (error) =>
          process.stderr.write(`ubicrawl: rpc handler failed: ${String(error)}\n`),
      },
    );
    let listenAddress: string;
    try {
      listenAddress = await server.start(options.listen);
    } catch (error) {
      await agent.stop();
      throw error;
    }
    // Others reach this agent (and gossip it) at the advertised address, not necessarily the bound one.
    const address = options.advertise ?? listenAddress;
    const detector = new FailureDetector(
      {
        self: { id: agentOptions.id, address, capacity: options.capacity },
        heartbeatIntervalMs: options.heartbeatIntervalMs,
        suspectAfterMs: options.suspectAfterMs,
      },
      {
        clock,
        sendHeartbeat: async (target, heartbeat, signal) => {
          const self = ready();
          // A reply's load is measured after this moment: that, not its (possibly late) arrival, is how
          // fresh it is for termination detection.
          const sentAtMs = clock.now();
          const request = {
            from: toWireMember(heartbeat.from, clock.now()),
            members: heartbeat.entries.map((entry) => toWireMember(entry, clock.now())),
            load: self.load(),
            unanswered: heartbeat.unanswered === true,
          };
          // The detector's signal bounds each heartbeat (one interval, longer when joining).
          const callOptions = { signal, deadlineMs: Math.max(options.heartbeatIntervalMs, 5_000) };
          const client = peers.get(target.address);
          // A known member gets its heartbeats on one long-lived stream; a seed, whose id is not known
          // yet, gets a unary call.
          const reply = await (target.id === undefined
            ? client.heartbeat(request, callOptions)
            : client.streamHeartbeat(request, callOptions));
          self.termination.observe(reply.from.id, reply.load, sentAtMs);
          self.exchange.notePeerLoad(reply.from.id, reply.load);
          return { from: fromWireMember(reply.from), entries: reply.members.map(fromWireMember) };
        },
      },
    );
    const isAlive = (id: string) => node?.aliveIds.has(id) === true;
    const exchange = new UrlExchange(
      {},
      {
        selfId: agentOptions.id,
        incarnation: detector.self.incarnation,
        clock,
        stats: agent.stats,
        committer: agent.committer,
        store: agent.store,
        fingerprinter,
        submit: (peerId, batch, signal) => ready().peerClient(peerId).submitUrls(batch, { signal }),
        isAlive,
        reroute: (url, depth, host) => agent.router.routeAt(url, depth, host),
        onSentAway: (fingerprint) => agent.frontier.markSentAway(fingerprint),
        sentAwayBefore: (fingerprint) => agent.frontier.wasSentAway(fingerprint),
        localIdle: () => agent.isIdle,
        onDelivered: () => {
          if (node) node.batchesDelivered++;
        },
        requeue: (url, depth, host) => {
          if (ownership.ownerOf(host) === agentOptions.id) agent.frontier.requeue(url, depth, host);
          else agent.router.routeAt(url, depth, host);
        },
      },
    );
    exchangeCell.current = exchange;
    const recovery = new PageRecovery(
      { k: options.recoveryK },
      {
        ownership,
        isAlive,
        ask: async (peerId, urls) =>
          (
            await ready()
              .peerClient(peerId)
              .wasFetched({ fromId: agentOptions.id, urls: [...urls] })
          ).fetched,
      },
    );
    node = new ClusterNode(options, address, listenAddress, clock, {
      agent,
      detector,
      ownership,
      exchange,
      recovery,
      grace,
      peers,
      server,
    });
    try {
      await node.joinCluster();
    } catch (error) {
      await node.stop();
      throw error;
    }
    if (agentOptions.seeds.length > 0) node.termination.markStarted();
    // URLs handed off just before a crash and never acknowledged are on no queue: route them again,
    // now that the view (and so each one's owner) is known.
    await resendUnacked(agent.store, agent.committer, (url, depth, host) =>
      agent.router.routeAt(url, depth, host),
    );
    await agent.start();
    return node;
  }

  /** Ids of the agents alive in this agent's view, self included. */
  get alive(): readonly MemberEntry[] {
    return this.detector.alive();
  }

  /** True when the termination rule says the whole cluster's crawl is complete. */
  isCrawlComplete(): boolean {
    const now = this.clock.now();
    this.awaitingEnd = true;
    // Links buffered while this agent was busy are all the others will get from it: send them soon.
    this.exchange.reconsider();
    const load = this.load();
    this.termination.observe(this.agent.options.id, load, now);
    const wentIdle = load.idle && !this.wasIdle;
    this.wasIdle = load.idle;
    // A live agent falsely suspected (a busy machine) would be left out of the rounds below; a view
    // unchanged for twice the suspicion timeout has no such agent, since it would have answered again.
    if (now - this.viewChangedAtMs < 2 * this.options.suspectAfterMs) return false;
    if (this.termination.check([...this.aliveIds])) return true;
    // Going idle, or a round short of fresh reports only: ask everyone now, not at the next round.
    if (wentIdle || this.termination.awaitsFreshReports) this.pulseForTermination();
    return false;
  }

  /** Graceful leave: stop crawling, hand every queued URL to its next owner, tell the others, stop. */
  async leave(): Promise<void> {
    if (this.leaving) return;
    this.leaving = true;
    this.agent.scheduler.pause();
    await this.detector.leave();
    this.onViewChange(this.detector.alive());
    await this.reexamining;
    await this.exchange.drain();
  }

  /**
   * Stops accepting URL batches (senders retry, then re-route once this agent has left) and returns
   * true when this agent is still idle; otherwise reopens and returns false, and the crawl goes on.
   * Closes the window between deciding the crawl is complete and leaving, in which an acknowledged
   * batch would be lost.
   */
  sealIntake(): boolean {
    this.intakeClosed = true;
    if (this.load().idle) return true;
    this.intakeClosed = false;
    return false;
  }

  /**
   * Tells every member this agent leaves on purpose (after the crawl completed, nothing to hand over),
   * so nobody treats it as crashed and re-sends its URLs.
   */
  async announceLeave(): Promise<void> {
    this.leaving = true;
    await this.detector.leave();
  }

  /** Stops everything; the durable state is kept. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.detector.stop();
      if (this.strandedTimer !== undefined) this.clock.clearTimeout(this.strandedTimer);
      this.exchange.stop();
      await this.server.stop();
      await this.agent.stop();
      this.peers.closeAll();
    })();
    return this.stopping;
  }

  // ---- RPC handlers -------------------------------------------------------------------------

  /** `Join`: a newcomer announces itself; refused when its id is taken or its replicas collide. */
  async join(request: JoinRequest): Promise<JoinReply> {
    const reply = await this.heartbeat({ from: request.member, members: [request.member], load: idleLoad() });
    return { members: reply.members };
  }

  /** `Heartbeat`: liveness, gossip and load, both ways. */
  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatReply> {
    const from = fromWireMember(request.from);
    if (this.detector.members().every((member) => member.id !== from.id)) {
      try {
        this.ownership.checkNewcomer({ id: from.id, capacity: from.capacity });
      } catch (error) {
        if (!isUbiError(error, ErrorCode.IdConflict)) throw error;
        throw new UbiError(ErrorCode.IdConflict, `${error.message}; choose another agent id`);
      }
    }
    let answer: ReturnType<FailureDetector["onHeartbeat"]>;
    try {
      answer = this.detector.onHeartbeat({
        from,
        entries: request.members.map(fromWireMember),
        unanswered: request.unanswered,
      });
    } catch (error) {
      // The id is alive here at another address: tell the claimant what to do about it.
      if (!isUbiError(error, ErrorCode.IdConflict)) throw error;
      throw new UbiError(ErrorCode.IdConflict, `${error.message}; choose another agent id`);
    }
    // Only a sender the detector accepted may report a load (a refused claimant must not fake one).
    // A request's load may have waited in transit: it only tells that the crawl started.
    this.termination.noteStarted(request.load);
    this.exchange.notePeerLoad(from.id, request.load);
    // The sender went idle (it asks everyone when it does): its reply to a heartbeat now may end the crawl.
    if (this.awaitingEnd && this.termination.isNewlyIdle(from.id, request.load)) this.pulseForTermination();
    const now = this.clock.now();
    return {
      members: answer.entries.map((entry) => toWireMember(entry, now)),
      load: this.load(),
      from: toWireMember(answer.from, now),
    };
  }

  /**
   * `SubmitUrls`: queues URLs of hosts this agent owns, forwards the others; acknowledges once durable.
   * Past `maxConcurrentSubmits` batches in progress, answers `Overloaded` (the sender retries later).
   */
  async submitUrls(batch: UrlBatch): Promise<UrlBatchAck> {
    if (this.intakeClosed)
      throw new UbiError(ErrorCode.Overloaded, "this agent is leaving: send to the next owner");
    const limit = this.options.maxConcurrentSubmits ?? DEFAULT_MAX_CONCURRENT_SUBMITS;
    if (this.submitsInProgress >= limit) {
      throw new UbiError(ErrorCode.Overloaded, `${limit} batches in progress already; retry later`);
    }
    this.submitsInProgress++;
    try {
      return await this.queueBatch(batch);
    } finally {
      this.submitsInProgress--;
    }
  }

  private async queueBatch(batch: UrlBatch): Promise<UrlBatchAck> {
    let accepted = 0;
    let forwarded = 0;
    let duplicates = 0;
    let invalid = 0;
    const { frontier, router, stats } = this.agent;
    for (const { url, depth } of batch.urls) {
      const canonical = normalizeUrl(url);
      if (canonical === null) {
        invalid++;
        continue;
      }
      const host = hostKey(canonical);
      if (this.ownership.ownerOf(host) !== this.agent.options.id) {
        router.routeAt(canonical, depth, host);
        forwarded++;
      } else if (frontier.add(canonical, depth, host)) accepted++;
      else duplicates++;
    }
    if (invalid > 0 && invalid === batch.urls.length) {
      throw new UbiError(ErrorCode.BadMessage, `batch ${batch.batchId}: no valid http(s) URL in it`);
    }
    await frontier.commit();
    if (!this.receivedBatches.has(batch.batchId)) {
      if (this.receivedBatches.size >= MAX_REMEMBERED_BATCHES) this.receivedBatches.clear();
      this.receivedBatches.add(batch.batchId);
      this.batchesReceived++;
      const traffic = stats.peer(batch.fromId);
      traffic.batchesReceived++;
      traffic.urlsReceived += batch.urls.length;
    }
    return { accepted, forwarded, duplicates };
  }

  /** `WasFetched`: page recovery, answered from the durable record of fetches. */
  async wasFetched(request: WasFetchedRequest): Promise<WasFetchedReply> {
    return { fetched: await this.agent.frontier.wasFetched(request.urls, WAS_FETCHED_WAIT_MS) };
  }

  /** `GetStats`: this agent's partition stats, or every live agent's. */
  async getStats(request: StatsRequest): Promise<StatsReply> {
    const own = this.stats();
    if (!request.cluster) return { agents: [own] };
    const others = await Promise.all(
      this.detector
        .alive()
        .filter((member) => member.id !== this.agent.options.id)
        .map(async (member) => {
          try {
            return (await this.peers.get(member.address).getStats({ cluster: false })).agents;
          } catch {
            return [];
          }
        }),
    );
    return { agents: [own, ...others.flat()] };
  }

  /** `Control`: pause, resume, leave, blacklist. */
  async control(request: ControlRequest): Promise<ControlReply> {
    const { scheduler, blacklist } = this.agent;
    switch (request.action) {
      case "PAUSE":
        scheduler.pause();
        return { ok: true, message: "paused" };
      case "RESUME":
        scheduler.resume();
        return { ok: true, message: "resumed" };
      case "LEAVE":
        this.leave().then(
          () => process.kill(process.pid, "SIGTERM"),
          (error) => process.stderr.write(`ubicrawl: leave failed: ${String(error)}\n`),
        );
        return { ok: true, message: "leaving: handing queued URLs to their next owners" };
      case "BLACKLIST_ADD":
        blacklist.add(request.argument.toLowerCase());
        return { ok: true, message: `blacklisted ${request.argument}` };
      case "BLACKLIST_REMOVE": {
        const removed = blacklist.delete(request.argument.toLowerCase());
        if (removed) for (const host of this.agent.frontier.hostsWithWork()) scheduler.markReady(host);
        return { ok: removed, message: removed ? `unblacklisted ${request.argument}` : "not blacklisted" };
      }
    }
  }

  // ---- membership and self-stabilization -----------------------------------------------------

  private async joinCluster(): Promise<void> {
    this.detector.onChange((alive) => this.onViewChange(alive));
    const seeds = this.options.join.filter(
      (address) => address !== this.address && address !== this.listenAddress,
    );
    if (seeds.length > 0) {
      const deadline = this.clock.now() + (this.options.joinTimeoutMs ?? 30_000);
      for (;;) {
        try {
          await this.detector.join(seeds);
          break;
        } catch (error) {
          if (isUbiError(error, ErrorCode.IdConflict) || this.clock.now() >= deadline) throw error;
          await sleep(this.clock, 500);
        }
      }
    }
    this.detector.start();
    this.onViewChange(this.detector.alive());
    this.watchStranded();
    if (seeds.length === 0) return;
    await this.settleView();
    // The others may have crawled (or be crawling right now) hosts that become this agent's: page
    // recovery then asks them before each fetch. Not when every one of them answered with no work
    // done or queued: each knows this agent by now (it answered its heartbeat), so none will fetch a
    // page of its hosts, and asking would cost a query per page batch for the whole crawl.
    const others = this.detector.alive().filter((member) => member.id !== this.agent.options.id);
    const anyWork =
      this.termination.hasStarted || others.some((member) => !this.termination.hasReportFrom(member.id));
    if (anyWork) this.ownership.markJoinedRunningCrawl();
  }

  /**
   * Waits (at most the suspicion timeout) until every member learned by gossip has answered directly,
   * so the first links routed by a newcomer already use the whole cluster's view.
   */
  private async settleView(): Promise<void> {
    const deadline = this.clock.now() + this.options.suspectAfterMs;
    while (this.clock.now() < deadline) {
      const pending = this.detector.members().some((member) => member.status === "suspected");
      if (!pending) return;
      await sleep(this.clock, Math.min(50, this.options.heartbeatIntervalMs));
    }
  }

  /** The alive set changed: rebuild ownership and re-examine what this agent holds. */
  private onViewChange(alive: readonly MemberEntry[]): void {
    if (alive.length === 0) return; // this agent left and no one else is alive: nothing to hand over
    const previous = this.aliveIds;
    this.aliveIds = new Set(alive.map((member) => member.id));
    // An agent that announced its leave is no live agent falsely suspected: its going does not restart
    // the wait for a stable view (else every agent exiting after the crawl delays the others' exit).
    const hasLeft = (id: string) => this.detector.members().some((m) => m.id === id && m.status === "left");
    const joined = [...this.aliveIds].some((id) => !previous.has(id));
    if (joined || [...previous].some((id) => !this.aliveIds.has(id) && !hasLeft(id))) {
      this.viewChangedAtMs = this.clock.now();
    }
    const changed = this.ownership.update(alive.map(({ id, capacity }) => ({ id, capacity })));
    if (!changed) return;
    this.recovery.reset();
    const members = new Map(this.detector.members().map((member) => [member.id, member]));
    const crashed = [...previous].filter(
      (id) => !this.aliveIds.has(id) && members.get(id)?.status !== "left",
    );
    for (const id of previous) if (!this.aliveIds.has(id)) this.termination.forget(id);
    for (const id of this.aliveIds) this.grace.forget(id);
    for (const id of previous) if (members.get(id)?.status === "left") this.grace.forget(id);
    for (const id of crashed) {
      this.grace.noteCrashed({ id, capacity: members.get(id)?.capacity ?? 1 });
      if (this.grace.delayMs > 0) {
        process.stderr.write(
          `ubicrawl: agent ${id} is not answering; its hosts wait ${this.grace.delayMs} ms for it to come back (--takeover-delay-ms)\n`,
        );
      }
    }
    this.exchange.onViewChange();
    this.queueReexamine(crashed);
  }

  private queueReexamine(crashed: readonly string[]): void {
    this.reexamining = this.reexamining
      .then(() => this.reexamine(crashed))
      .catch((error) => {
        process.stderr.write(`ubicrawl: re-examining the frontier failed: ${String(error)}\n`);
      });
  }

  /** Heartbeats every member now, when this agent is idle and did not do so in the last moments. */
  private pulseForTermination(): void {
    const now = this.clock.now();
    if (now - this.lastPulseAtMs < TERMINATION_PULSE_GAP_MS || !this.load().idle) return;
    this.lastPulseAtMs = now;
    this.detector.pulse();
  }

  /** Hands over, now and then, URLs put back in queues of hosts this agent no longer owns. */
  private watchStranded(): void {
    this.strandedTimer = this.clock.setTimeout(() => {
      if (this.stopping) return;
      const self = this.agent.options.id;
      const hosts = this.agent.frontier.hostsWithWork();
      if (hosts.some((host) => this.ownership.ownerOf(host) !== self)) this.queueReexamine([]);
      this.watchStranded();
    }, STRANDED_CHECK_MS);
  }

  private async reexamine(crashed: readonly string[]): Promise<void> {
    const { frontier, scheduler } = this.agent;
    const self = this.agent.options.id;
    for (const host of frontier.hostsWithWork()) {
      const owner = this.ownership.ownerOf(host);
      if (owner === self) continue;
      // Handed off as it is dequeued: a commit in between would lose the URLs to a crash.
      await frontier.drainHost(host, (entry) => this.exchange.send(owner, entry.url, entry.depth, host));
    }
    await frontier.commit();
    for (const peer of crashed) await this.exchange.redistribute(peer);
    for (const host of frontier.hostsWithWork()) scheduler.markReady(host);
  }

  // ---- stats ---------------------------------------------------------------------------------

  /** This agent's load, as reported in heartbeats (termination detection). */
  load(): WorkLoad {
    const { agent } = this;
    return {
      idle: agent.isIdle && this.exchange.isIdle && !this.agent.scheduler.isPaused,
      urlBatchesSent: this.batchesDelivered,
      urlBatchesReceived: this.batchesReceived,
      pagesFetched: agent.stats.pagesFetched,
      queuedUrls: agent.frontier.waitingUrls,
    };
  }

  /** The partition stats of this agent. */
  stats(): AgentStats {
    const { agent } = this;
    const { stats, frontier, scheduler } = agent;
    const now = this.clock.now();
    let hostsOwned = 0;
    let hostsKnown = 0;
    let hostsDone = 0;
    let hostsHeld = 0;
    for (const host of frontier.knownHosts()) {
      hostsKnown++;
      const owned = this.ownership.ownerOf(host) === agent.options.id;
      if (owned) hostsOwned++;
      const waiting = frontier.waitingOf(host);
      if (waiting === 0 && frontier.record(host).fetched > 0) hostsDone++;
      if (owned && waiting > 0 && this.grace.heldUntilMs(host) > now) hostsHeld++;
    }
    return {
      id: agent.options.id,
      address: this.address,
      capacity: this.options.capacity,
      replicas: this.ownership.replicas,
      circleShare: this.ownership.share,
      view: this.detector.members().map((member) => ({
        id: member.id,
        address: member.address,
        status: toWireMember(member, now).status,
        lastHeardMsAgo: Math.max(0, now - member.lastHeardMs),
      })),
      hostsOwned,
      hostsKnown,
      hostsActive: scheduler.activeHosts,
      hostsDone,
      pagesFetched: stats.pagesFetched,
      bytesFetched: stats.bytesFetched,
      queuedUrls: frontier.waitingUrls,
      peers: [...stats.peers].map(([peerId, traffic]) => ({ peerId, ...traffic })),
      communicationOverhead: stats.communicationOverhead,
      linksToOtherAgents: stats.linksToOtherAgents,
      pagesRecovered: stats.pagesRecovered,
      errors: Object.fromEntries(stats.errors),
      pagesPerSecond: stats.pagesPerSecond(),
      uptimeMs: stats.uptimeMs,
      idle: this.load().idle,
      paused: scheduler.isPaused,
      hostsHeld,
      heldFor: [...this.grace.heldFor],
    };
  }

  private peerClient(peerId: string) {
    const member = this.detector.members().find((entry) => entry.id === peerId);
    if (!member) throw new UbiError(ErrorCode.PeerUnreachable, `unknown peer ${peerId}`);
    return this.peers.get(member.address);
  }
}

function idleLoad(): WorkLoad {
  return { idle: true, urlBatchesSent: 0, urlBatchesReceived: 0, pagesFetched: 0, queuedUrls: 0 };
}
