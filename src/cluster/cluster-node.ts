import { type Admission, Agent, type AgentOptions, type ClusterHooks } from "../agent/index.js";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { FailureDetector, type MemberEntry } from "../failure-detector/index.js";
import { Assignment, loadHasher64 } from "../hashing/index.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import {
  AgentServer,
  type AgentStats,
  type PeerClient,
  PeerClientPool,
  parseHostPort,
  type TransportSecurity,
} from "../transport/index.js";
import { UrlFingerprinter } from "../url/index.js";
import { BlacklistGossip } from "./blacklist-gossip.js";
import { DEFAULT_JOIN_TIMEOUT_MS, joinCluster } from "./cluster-join.js";
import { ClusterService, DEFAULT_MAX_CONCURRENT_SUBMITS } from "./cluster-service.js";
import { CrawlEnd } from "./crawl-end.js";
import { CrawlTenure } from "./crawl-tenure.js";
import { fromWireVerdicts, toWireSettlements } from "./digest-wire.js";
import { DEFAULT_LEAVE_TIMEOUT_MS, type LeaveOutcome, leaveCluster } from "./graceful-leave.js";
import { HandOverDesk } from "./hand-over.js";
import { heartbeatSender } from "./heartbeat-sender.js";
import { DEFAULT_RECOVERY_K, HostClaims } from "./host-claims.js";
import { fromWireMember, toWireMember } from "./members.js";
import { Ownership, type Partitioning } from "./ownership.js";
import { PartitionStats } from "./partition-stats.js";
import { DEFAULT_TAKEOVER_DELAY_MS, TakeoverGrace } from "./takeover-grace.js";
import { resendUnacked } from "./unacked-urls.js";
import { DEFAULT_BATCH_URLS, UrlExchange } from "./url-exchange.js";
import { ViewStabilizer } from "./view-stabilizer.js";

/**
 * Longest wait for a peer's answer about payload digests: past it the page is stored whole (a slow or
 * dead owner costs bytes, never a page).
 */
const DIGEST_DEADLINE_MS = 2_000;

export { DEFAULT_LEAVE_TIMEOUT_MS, DEFAULT_MAX_CONCURRENT_SUBMITS, type LeaveOutcome };

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
  /**
   * Agents a new owner asks at most, along the circle, for a host it claims before it takes a host none
   * of them holds (UbiCrawler's k; 0 takes hosts without asking). @default 16
   */
  readonly recoveryK?: number;
  /**
   * URLs a batch to another agent holds at most, and the count that sends it at once (1: every URL in
   * a message of its own). @default {@link DEFAULT_BATCH_URLS}
   */
  readonly batchUrls?: number;
  /**
   * How long hosts of a crashed agent wait for it to come back before their new owners crawl them
   * (0: at once). An agent restarted on its data dir within it refetches nothing but the pages in flight.
   * @default 10000
   */
  readonly takeoverDelayMs?: number;
  /** Replicas per unit of capacity on the circle; every agent of a cluster must use the same value. */
  readonly replicasPerUnit?: number;
  /**
   * How URLs are spread over the agents; every agent of a cluster must use the same. `url` is for
   * experiments (see {@link Ownership}). @default "host"
   */
  readonly partitioning?: Partitioning;
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

/** What a {@link ClusterNode} is given rather than reaching for. */
export interface ClusterNodeDeps {
  readonly clock?: Clock;
  /** Where the node's and its agent's records go. @default JSON records on standard error */
  readonly logger?: Logger;
}

/** The parts one cluster agent is composed of (see {@link ClusterNode.start}). */
interface Parts {
  readonly agent: Agent;
  readonly detector: FailureDetector;
  readonly ownership: Ownership;
  readonly exchange: UrlExchange;
  readonly tenure: CrawlTenure;
  readonly desk: HandOverDesk;
  readonly claims: HostClaims;
  readonly stabilizer: ViewStabilizer;
  readonly crawlEnd: CrawlEnd;
  readonly partition: PartitionStats;
  readonly service: ClusterService;
  readonly blacklist: BlacklistGossip;
  readonly peers: PeerClientPool;
  /** The client of a member, by id. */
  readonly peerClient: (id: string) => PeerClient;
  readonly server: AgentServer;
}

/**
 * One agent in a cluster, composed of an {@link Agent} that crawls and, around it: the gRPC service
 * ({@link ClusterService}), the heartbeat failure detector with gossip membership, the
 * consistent-hashing ownership, host hand-overs ({@link HostClaims}, {@link HandOverDesk}: page
 * recovery by host), the URL exchange, the takeover grace, self-stabilization on view changes
 * ({@link ViewStabilizer}), termination detection ({@link CrawlEnd}) and the graceful leave. No
 * coordinator: every decision is local.
 */
export class ClusterNode {
  readonly agent: Agent;
  /** The agent's gRPC service; its handlers are the `Agent` service of the protocol. */
  readonly service: ClusterService;
  private readonly parts: Parts;
  private leaving: Promise<LeaveOutcome> | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly options: ClusterOptions,
    /** The address other agents reach this one at: `advertise`, or the bound address. */
    readonly address: string,
    /** The address the gRPC server is bound to (the real port when `listen` asked for port 0). */
    readonly listenAddress: string,
    private readonly clock: Clock,
    parts: Parts,
  ) {
    this.parts = parts;
    this.agent = parts.agent;
    this.service = parts.service;
  }

  /**
   * Opens the agent, starts the server, joins the cluster through `options.join` and starts crawling.
   * Rejects with `IdConflict` when a live agent already has this id (or its replicas collide).
   */
  static async start(
    agentOptions: AgentOptions,
    options: ClusterOptions,
    deps: ClusterNodeDeps = {},
  ): Promise<ClusterNode> {
    const clock = deps.clock ?? systemClock;
    const logger = deps.logger ?? defaultLogger();
    if (options.advertise !== undefined && parseHostPort(options.advertise) === undefined) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `advertise must be host:port, got "${options.advertise}"`,
      );
    }
    const selfId = agentOptions.id;
    const hasher = await loadHasher64();
    const fingerprinter = new UrlFingerprinter(hasher);
    const ownership = new Ownership(
      selfId,
      options.capacity,
      options.replicasPerUnit,
      hasher,
      options.partitioning,
    );
    // Under URL partitioning no host waits for a crashed agent: every agent crawls every host.
    const graceMs =
      options.partitioning === "url" ? 0 : (options.takeoverDelayMs ?? DEFAULT_TAKEOVER_DELAY_MS);
    const grace = new TakeoverGrace(graceMs, {
      clock,
      current: () => ownership.assignment,
      build: (agents) => Assignment.build(agents, { replicasPerUnit: options.replicasPerUnit }, hasher),
      onEnded: (id) =>
        logger.info(
          { event: "takeover-grace-ended", peer: id },
          `agent ${id} did not come back within --takeover-delay-ms: its hosts are crawled by their new owners`,
        ),
    });
    const peers = new PeerClientPool({ security: options.security });
    const tenure = new CrawlTenure();
    // The parts are made after the agent and the server; hooks and handlers reach them through `late`.
    const late: { node?: ClusterNode; claims?: HostClaims; exchange?: UrlExchange } = {};
    const ready = (): ClusterNode => {
      if (!late.node) throw new UbiError(ErrorCode.PeerUnreachable, "agent is starting");
      return late.node;
    };
    const owns = (host: string) => ownership.holdsHost(host);
    // Under URL partitioning hosts are not claimed, held or handed over: every agent crawls every host.
    const byUrl = ownership.partitioning === "url";
    const hooks: ClusterHooks = {
      ownership: () => ownership,
      exchange: {
        send: (owner, url, depth, host, traits) => late.exchange?.send(owner, url, depth, host, traits),
        offer: (owner, url, depth, host, traits) => late.exchange?.offer(owner, url, depth, host, traits),
      },
      owns,
      admit: (host) => {
        if (byUrl) return 0;
        // A crashed previous owner's hosts wait for it first; then the host is claimed from whoever holds it.
        const heldUntilMs = grace.heldUntilMs(host);
        if (heldUntilMs > clock.now()) return { untilMs: heldUntilMs, reason: "held" };
        const claimed = late.claims?.admit(host) ?? clock.now() + 100;
        const admission = (atMs: number): Admission =>
          atMs === 0 ? 0 : { untilMs: atMs, reason: "hand-over" };
        return typeof claimed === "number" ? admission(claimed) : claimed.then(admission);
      },
      mayFetch: (host) => owns(host) && (byUrl || tenure.holds(host)),
      isCrawlComplete: () => late.node?.parts.crawlEnd.isCrawlComplete() ?? false,
      digests: {
        // Digests are spread over the agents like hosts are.
        ownerOf: (digest) => ownership.ownerOf(digest),
        check: async (peerId, questions, settlements) =>
          fromWireVerdicts(
            await peerClient(peerId).checkDigests(
              {
                fromId: selfId,
                fromIncarnation: detector.self.incarnation,
                digests: questions.map(({ digest }) => digest),
                settlements: toWireSettlements(selfId, settlements).settlements,
              },
              { deadlineMs: DIGEST_DEADLINE_MS },
            ),
          ),
        settle: async (peerId, settlements) => {
          await peerClient(peerId).settleDigests(toWireSettlements(selfId, settlements), {
            deadlineMs: DIGEST_DEADLINE_MS,
          });
        },
      },
    };
    const agent = await Agent.open(agentOptions, { clock, cluster: hooks, logger });
    const server = new AgentServer(
      { security: options.security },
      {
        handlers: {
          join: (request) => ready().service.join(request),
          heartbeat: (request) => ready().service.heartbeat(request),
          submitUrls: (request) => ready().service.submitUrls(request),
          claimHosts: (request) => ready().service.claimHosts(request),
          handOverHosts: (request) => ready().service.handOverHosts(request),
          getStats: (request) => ready().service.getStats(request),
          control: (request) => ready().service.control(request),
          syncBlacklist: (request) => ready().service.syncBlacklist(request),
          checkDigests: (request) => ready().service.checkDigests(request),
          settleDigests: (request) => ready().service.settleDigests(request),
        },
        clock,
        logger,
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
        self: { id: selfId, address, capacity: options.capacity },
        heartbeatIntervalMs: options.heartbeatIntervalMs,
        suspectAfterMs: options.suspectAfterMs,
      },
      {
        clock,
        sendHeartbeat: heartbeatSender({
          clock,
          peers,
          deadlineMs: Math.max(options.heartbeatIntervalMs, 5_000),
          partitioning: ownership.partitioning,
          load: () => ready().parts.partition.load(),
          onReply: (fromId, load, sentAtMs) => {
            const { parts } = ready();
            parts.crawlEnd.observeReply(fromId, load, sentAtMs);
            parts.service.noteLoad(fromId, load);
            parts.exchange.notePeerLoad(fromId, load);
          },
        }),
      },
    );
    const memberOf = (id: string) => detector.members().find((member) => member.id === id);
    const peerClient = (peerId: string) => {
      const member = memberOf(peerId);
      if (!member) throw new UbiError(ErrorCode.PeerUnreachable, `unknown peer ${peerId}`);
      return peers.get(member.address);
    };
    const isAlive = (id: string) => late.node?.parts.stabilizer.isAlive(id) === true;
    const partitionCell: { current?: PartitionStats } = {};
    const batchUrls = options.batchUrls ?? DEFAULT_BATCH_URLS;
    const exchange = new UrlExchange(
      { maxBatchUrls: batchUrls, targetBatchUrls: batchUrls },
      {
        selfId,
        incarnation: detector.self.incarnation,
        clock,
        stats: agent.stats,
        ...agent.storage,
        fingerprinter,
        submit: (peerId, batch, signal) => peerClient(peerId).submitUrls(batch, { signal }),
        isAlive,
        reroute: (url, depth, host, traits) => agent.route(url, depth, host, traits),
        onSentAway: (fingerprint) => agent.noteSentAway(fingerprint),
        sentAwayBefore: (fingerprint) => agent.wasSentAway(fingerprint),
        localIdle: () => agent.isIdle,
        onDelivered: () => {
          if (partitionCell.current) partitionCell.current.batchesDelivered++;
        },
        requeue: (url, depth, host, traits) => {
          if (ownership.ownerOfUrl(url, host) === selfId) agent.accept(url, depth, host, traits);
          else agent.route(url, depth, host, traits);
        },
      },
    );
    late.exchange = exchange;
    const desk = new HandOverDesk({
      selfId,
      clock,
      tenure,
      ownership,
      agent,
      memberOf,
      heardFrom: (member) => detector.heardFrom(member),
    });
    const claims = new HostClaims(
      { maxAsked: options.recoveryK ?? DEFAULT_RECOVERY_K },
      {
        selfId,
        clock,
        tenure,
        ownership,
        isAlive,
        self: () => toWireMember(detector.self, clock.now()),
        claim: (peerId, request) => peerClient(peerId).claimHosts(request),
        learnOf: (member) => detector.learnOf(fromWireMember(member)),
        desk,
        agent,
      },
    );
    late.claims = claims;
    const partition = new PartitionStats(
      { address, capacity: options.capacity },
      {
        clock,
        agent,
        ownership,
        grace,
        exchangeIdle: () => exchange.isIdle,
        members: () => detector.members(),
      },
    );
    partitionCell.current = partition;
    const stabilizer: ViewStabilizer = new ViewStabilizer({
      clock,
      ownership,
      grace,
      exchange,
      agent,
      statusOf: (id) => memberOf(id)?.status,
      capacityOf: (id) => memberOf(id)?.capacity ?? 1,
      onGone: (id) => {
        crawlEnd.forget(id);
        // A dead agent's claims on payloads would hold others' copies until their lease ran out.
        agent.forgetDigestClaims(id);
      },
      lostHosts: {
        push: () => desk.pushLost((peerId, request) => peerClient(peerId).handOverHosts(request)),
        any: () => desk.holdsLostHosts(),
      },
      logger,
    });
    const crawlEnd: CrawlEnd = new CrawlEnd({
      selfId,
      clock,
      suspectAfterMs: options.suspectAfterMs,
      load: () => partition.load(),
      aliveIds: () => stabilizer.alive,
      viewChangedAtMs: () => stabilizer.viewChangedAtMs,
      pulse: () => detector.pulse(),
      // Links buffered while this agent was busy are all the others will get from it: send them soon.
      onAwaitingEnd: () => exchange.reconsider(),
    });
    const blacklist = new BlacklistGossip(
      {},
      {
        clock,
        agent,
        peers: () => detector.alive().flatMap((member) => (member.id === selfId ? [] : [member.id])),
        // Bounded: a peer that died since the last heartbeat must not hold this agent's start for long.
        sync: (peerId, request) =>
          peerClient(peerId).syncBlacklist(request, {
            deadlineMs: Math.max(2 * options.heartbeatIntervalMs, 2000),
          }),
        logger,
      },
    );
    const service = new ClusterService(
      { maxConcurrentSubmits: options.maxConcurrentSubmits },
      {
        blacklist,
        logger,
        clock,
        agent,
        detector,
        ownership,
        exchange,
        crawlEnd,
        desk,
        partition,
        peers,
        leaveAndExit: () => {
          ready()
            .leave()
            .then(
              () => process.kill(process.pid, "SIGTERM"),
              (error) => logger.error({ event: "leave-failed", err: error }, "the leave failed"),
            );
        },
      },
    );
    const node = new ClusterNode(options, address, listenAddress, clock, {
      agent,
      detector,
      ownership,
      exchange,
      tenure,
      desk,
      claims,
      stabilizer,
      crawlEnd,
      partition,
      service,
      blacklist,
      peers,
      peerClient,
      server,
    });
    late.node = node;
    try {
      detector.onChange((alive) => stabilizer.onViewChange(alive));
      await joinCluster(detector, {
        seeds: options.join.filter((seed) => seed !== address && seed !== listenAddress),
        joinTimeoutMs: options.joinTimeoutMs ?? DEFAULT_JOIN_TIMEOUT_MS,
        settleMs: options.suspectAfterMs,
        pollMs: Math.min(50, options.heartbeatIntervalMs),
        // Suspected after the timeout, seen as such by the next sweep: two timeouts are enough.
        idConflictWaitMs: 2 * options.suspectAfterMs,
        logger,
        clock,
      });
      stabilizer.onViewChange(detector.alive());
      stabilizer.start();
      // The cluster's blacklist before the first fetch: an agent that joins later must not crawl a
      // host the operator blacklisted before.
      await blacklist.start();
    } catch (error) {
      await node.stop();
      throw error;
    }
    if (agentOptions.seeds.length > 0) crawlEnd.markStarted();
    // URLs handed off just before a crash and never acknowledged are on no queue: route them again,
    // now that the view (and so each one's owner) is known.
    await resendUnacked(agent.storage.store, agent.storage.committer, (url, depth, host) =>
      agent.route(url, depth, host),
    );
    await agent.start();
    return node;
  }

  /** The agents alive in this agent's view, self included. */
  get alive(): readonly MemberEntry[] {
    return this.parts.detector.alive();
  }

  /** The partition stats of this agent (what `GetStats` answers for it). */
  stats(): AgentStats {
    return this.parts.partition.stats();
  }

  /**
   * Every member's partition stats, gathered through this agent (what `GetStats` with `cluster`
   * answers): the live ones asked now, the others with their last known figures.
   */
  async clusterStats(): Promise<AgentStats[]> {
    return (await this.parts.service.getStats({ cluster: true })).agents;
  }

  /**
   * Graceful leave (see {@link leaveCluster}): hands every host this agent holds and every queued URL
   * to their next owners and tells the others, all within `timeoutMs`. Idempotent.
   */
  leave(timeoutMs = DEFAULT_LEAVE_TIMEOUT_MS): Promise<LeaveOutcome> {
    const { agent, detector, stabilizer, exchange, desk, claims, tenure, peerClient } = this.parts;
    this.leaving ??= leaveCluster(timeoutMs, {
      clock: this.clock,
      agent,
      claims,
      desk,
      heldHosts: () => tenure.heldHosts().length,
      send: (peerId, request, deadlineMs) => peerClient(peerId).handOverHosts(request, { deadlineMs }),
      announce: () => detector.leave(),
      settled: () => stabilizer.settled(),
      exchange,
    });
    return this.leaving;
  }

  /**
   * Stops accepting URL batches (senders retry, then re-route once this agent has left) and returns
   * true when this agent is still idle; otherwise reopens and returns false, and the crawl goes on.
   * Closes the window between deciding the crawl is complete and leaving, in which an acknowledged
   * batch would be lost.
   */
  sealIntake(): boolean {
    const { service, partition } = this.parts;
    service.closeIntake();
    if (partition.load().idle) return true;
    service.reopenIntake();
    return false;
  }

  /**
   * Tells every member this agent leaves on purpose (after the crawl completed, nothing to hand over),
   * so nobody treats it as crashed and re-sends its URLs.
   */
  async announceLeave(): Promise<void> {
    await this.parts.detector.leave();
  }

  /** Stops everything; the durable state is kept. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const { detector, stabilizer, claims, exchange, server, agent, peers, blacklist } = this.parts;
      detector.stop();
      stabilizer.stop();
      blacklist.stop();
      claims.stop();
      exchange.stop();
      await server.stop();
      await agent.stop();
      peers.closeAll();
    })();
    return this.stopping;
  }
}
