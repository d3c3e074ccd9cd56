// Over 400 lines on purpose: the composition root of a cluster agent. Each part is built once, here, in
// the order of what it holds, and given the parts built before it; split, the wiring's order would be
// spread over files that each see half of it.
import { Agent, type AgentOptions, HandsChanges, ipDelayOf } from "../agent/index.js";
import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { FailureDetector } from "../failure-detector/index.js";
import { Assignment, loadHasher64 } from "../hashing/index.js";
import type { Logger } from "../logging/index.js";
import { WarcFolderListing } from "../storage/index.js";
import {
  type AgentServiceHandlers,
  GRPC_TRANSPORT,
  type PeerClient,
  PeerClientPool,
  type PeerServer,
  type PeerTransport,
} from "../transport/index.js";
import { UrlFingerprinter } from "../url/index.js";
import { deferredHandlers } from "./agent-handlers.js";
import { type AgentService, agentService } from "./agent-service.js";
import { BlacklistGossip } from "./blacklist-gossip.js";
import { clusterHooks, digestPeers } from "./cluster-hooks.js";
import type { ClusterIpGate } from "./cluster-ip-gate.js";
import { clusterIpLimit } from "./cluster-ip-limit.js";
import type { ClusterOptions } from "./cluster-options.js";
import { CrawlEnd } from "./crawl-end.js";
import { CrawlTenure } from "./crawl-tenure.js";
import { HAND_OVER_DELIVERY_MS, HandOverDesk } from "./hand-over.js";
import { HandOverDelivery } from "./hand-over-delivery.js";
import { heartbeatSender } from "./heartbeat-sender.js";
import { DEFAULT_RECOVERY_K, DEFAULT_UNHEARD_WAIT_MS, HostClaims } from "./host-claims.js";
import { DEFAULT_IP_LIMIT, type IpAuthority } from "./ip-authority.js";
import { LastKnownFigures } from "./last-known.js";
import { fromWireMember, toWireMember } from "./members.js";
import { Ownership } from "./ownership.js";
import { PartitionStats } from "./partition-stats.js";
import { RevisitBudgetShare } from "./revisit-budget-share.js";
import { DEFAULT_TAKEOVER_DELAY_MS, TakeoverGrace } from "./takeover-grace.js";
import { UrlExchange } from "./url-exchange.js";
import { DEFAULT_BATCH_URLS } from "./url-exchange-options.js";
import { ViewStabilizer } from "./view-stabilizer.js";

/**
 * The parts one cluster agent is composed of (see {@link assembleCluster}): those of its `Agent` service
 * (its handlers, each RPC passed to the part that owns it: a test may replace one), and the others.
 */
export interface ClusterParts extends AgentService {
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
  readonly blacklist: BlacklistGossip;
  /** The politeness of the IP addresses this agent is the authority of, for the whole cluster. */
  readonly ipAuthority: IpAuthority;
  /** This agent's requests per IP address, limited cluster-wide. */
  readonly ipGate: ClusterIpGate;
  /** Hands this agent's addresses over to their next authorities as it leaves (see `ClusterIpLimit.leave`). */
  readonly handOffAddresses: () => Promise<void>;
  readonly peers: PeerClientPool;
  /** The client of a member, by id. */
  readonly peerClient: (id: string) => PeerClient;
  readonly server: PeerServer;
}

/** What {@link assembleCluster} is given besides the options. */
export interface ClusterAssemblyDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** A graceful leave of this agent (`ctl leave`), then what follows it (see `ClusterNodeDeps.afterLeave`). */
  readonly leave: () => Promise<unknown>;
  /** How this agent reaches its peers and is reached. @default GRPC_TRANSPORT */
  readonly transport?: PeerTransport;
}

/** A cluster agent's parts, wired and serving, and the addresses it is reached at. */
export interface AssembledCluster {
  readonly parts: ClusterParts;
  /** The address other agents reach this one at: `advertise`, or the bound address. */
  readonly address: string;
  /** The address the gRPC server is bound to (the real port when `listen` asked for port 0). */
  readonly listenAddress: string;
}

/**
 * Opens the agent with the cluster's hooks, starts its gRPC server, and wires the parts around it: the
 * failure detector and its heartbeats, ownership, the takeover grace, the URL exchange, hand-overs and
 * claims, partition stats, self-stabilization, termination detection, the blacklist gossip and the
 * service. Joins nothing and starts no crawl (`ClusterNode.start` does).
 *
 * The parts are built in the order of what they hold: each is given the parts built before it. Where
 * two need each other — the agent and the URL exchange, host claims and termination detection its
 * hooks ask; the failure detector and the figures its heartbeats carry; the exchange, the partition
 * stats and the view stabilizer — the one built first is given a function that reaches the other, and
 * calls it only once the cluster runs: on a crawl, a heartbeat or a view change, all started by
 * `ClusterNode.start` after this returns. The server is the one exception: it listens (and may be
 * called) before the parts that answer it exist, so until the end of the assembly it refuses every
 * call as "agent is starting".
 */
export async function assembleCluster(
  agentOptions: AgentOptions,
  options: ClusterOptions,
  deps: ClusterAssemblyDeps,
): Promise<AssembledCluster> {
  const { clock, logger } = deps;
  const selfId = agentOptions.id;
  const hasher = await loadHasher64();
  const ownership = new Ownership(
    selfId,
    options.capacity,
    options.replicasPerUnit,
    hasher,
    options.partitioning,
  );
  // Under URL partitioning no host waits for a crashed agent: every agent crawls every host.
  const graceMs = options.partitioning === "url" ? 0 : (options.takeoverDelayMs ?? DEFAULT_TAKEOVER_DELAY_MS);
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
  const transport = deps.transport ?? GRPC_TRANSPORT;
  const peers = new PeerClientPool(
    {
      security: options.security,
      ...(options.joinServerNames === undefined ? {} : { serverNames: options.joinServerNames }),
    },
    transport,
  );
  // Who may fetch which host changes at a view change and when a host's crawl is passed on: the URLs
  // of hosts this agent may no longer fetch stop waiting for their address's slot.
  const hands = new HandsChanges();
  const tenure = new CrawlTenure(() => hands.changed());
  // Every agent answers as an authority; only under the cluster-wide limit does it ask authorities.
  const clusterWide = (options.ipLimit ?? DEFAULT_IP_LIMIT) === "cluster";
  const {
    authority: ipAuthority,
    gate: ipGate,
    ownershipChanged: ipOwnershipChanged,
    leave: handOffAddresses,
    lives: ipLives,
  } = clusterIpLimit({
    selfId,
    clock,
    ownership,
    maxPerIp: agentOptions.maxPerIp,
    ipDelayMs: ipDelayOf(agentOptions),
    fetchTimeoutMs: agentOptions.fetchTimeoutMs,
    suspectAfterMs: options.suspectAfterMs,
    peerClient: (id) => peerClient(id),
    onMessage: () => {
      agent.stats.ipMessagesThisRun++;
    },
    gated: clusterWide,
    // Read once the failure detector is built (on a change of the view).
    hasLeft: (id) => memberOf(id)?.status === "left",
    incarnationOf: (id) => memberOf(id)?.incarnation,
    logger,
  });
  const revisitBudgets = new RevisitBudgetShare();
  const hooks = clusterHooks({
    clock,
    ownership,
    grace,
    tenure,
    exchange: {
      send: (owner, url, depth, host, traits) => exchange.send(owner, url, depth, host, traits),
      offer: (owner, url, depth, host, traits) => exchange.offer(owner, url, depth, host, traits),
    },
    claim: (host) => claims.admit(host),
    hands,
    stranded: () => void stabilizer.handOverStranded(),
    isCrawlComplete: () => crawlEnd.isCrawlComplete(),
    ...(clusterWide ? { ipLimiter: ipGate } : {}),
    digests: digestPeers(
      selfId,
      ownership,
      (id) => peerClient(id),
      () => detector.self.incarnation,
    ),
    // Read once the failure detector is built (a revisit is planned once a page is fetched).
    revisitBudget: (own) =>
      revisitBudgets.budgetOf(
        own,
        detector.alive().flatMap((member) => (member.id === selfId ? [] : [member.id])),
      ),
  });
  const agent = await Agent.open(agentOptions, { clock, cluster: hooks, logger });
  // Set once every part is built, at the end; until then the server refuses every call.
  let handlers: AgentServiceHandlers | undefined;
  const server = transport.server(
    { security: options.security },
    {
      handlers: deferredHandlers(() => {
        if (!handlers) throw new UbiError(ErrorCode.PeerUnreachable, "agent is starting");
        return handlers;
      }),
      // For `ubicrawl export --agent`: the files in its WARC folder, the live one up to its whole records.
      archive: new WarcFolderListing(agent.archivedCaptures.folder, agentOptions.id, () =>
        agent.archivedCaptures.liveExtent(),
      ),
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
  const lastKnown = new LastKnownFigures(selfId, clock);
  const detector: FailureDetector = new FailureDetector(
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
        load: () => partition.load(),
        figures: () => service.membership.figures(),
        onReply: (fromId, reply, sentAtMs) => {
          crawlEnd.observeReply(fromId, reply.load, sentAtMs);
          service.membership.noteLoad(fromId, reply.load);
          lastKnown.noteGossip(reply.figures);
          exchange.notePeerLoad(fromId, reply.load);
        },
      }),
    },
  );
  // Before the join: the first answer may say this agent restarted before it was found gone.
  detector.onLives(ipLives);
  const memberOf = (id: string) => detector.members().find((member) => member.id === id);
  const peerClient = (peerId: string) => {
    const member = memberOf(peerId);
    if (!member) throw new UbiError(ErrorCode.PeerUnreachable, `unknown peer ${peerId}`);
    return peers.get(member.address);
  };
  const isAlive = (id: string) => stabilizer.isAlive(id);
  const partition: PartitionStats = new PartitionStats(
    { address, capacity: options.capacity },
    {
      clock,
      agent,
      ownership,
      grace,
      // URLs handed to a crashed agent and not re-sent yet are work too.
      exchangeIdle: () => exchange.isIdle && !stabilizer.redistributing,
      members: () => detector.members(),
    },
  );
  const batchUrls = options.batchUrls ?? DEFAULT_BATCH_URLS;
  const exchange: UrlExchange = new UrlExchange(
    { maxBatchUrls: batchUrls, targetBatchUrls: batchUrls },
    {
      selfId,
      incarnation: detector.self.incarnation,
      clock,
      stats: agent.stats,
      ...agent.storage,
      fingerprinter: new UrlFingerprinter(hasher),
      submit: (peerId, batch, signal) => peerClient(peerId).submitUrls(batch, { signal }),
      isAlive,
      reroute: (url, depth, host, traits) => agent.route(url, depth, host, traits),
      onSentAway: (fingerprint) => agent.noteSentAway(fingerprint),
      sentAwayBefore: (fingerprint) => agent.wasSentAway(fingerprint),
      localIdle: () => agent.isIdle,
      onDelivered: () => {
        partition.batchesDelivered++;
      },
      requeue: (url, depth, host, traits) => {
        if (ownership.ownerOfUrl(url, host) === selfId) agent.accept(url, depth, host, traits);
        else agent.route(url, depth, host, traits);
      },
    },
  );
  const delivery = new HandOverDelivery({
    selfId,
    ownership,
    agent,
    exchange,
    waitMs: HAND_OVER_DELIVERY_MS,
    onLate: (hosts, to) =>
      logger.info(
        { event: "hand-over-delivery-late", hosts: hosts.slice(0, 10), hostCount: hosts.length, peers: to },
        `${hosts.length} hosts wait to be handed over: the URLs they gave are not acknowledged yet`,
      ),
  });
  const desk = new HandOverDesk({
    selfId,
    clock,
    tenure,
    ownership,
    agent,
    memberOf,
    heardFrom: (member) => detector.heardFrom(member),
    // What the host's queue held and the links its pages gave are with other agents before its done set
    // leaves.
    beforeHandOver: (hosts, to) => delivery.before(hosts, to),
  });
  const claims = new HostClaims(
    {
      maxAsked: options.recoveryK ?? DEFAULT_RECOVERY_K,
      // An agent this one has not heard from for two suspicion timeouts is as good as gone.
      unheardWaitMs: Math.max(DEFAULT_UNHEARD_WAIT_MS, 2 * options.suspectAfterMs),
    },
    {
      selfId,
      clock,
      tenure,
      ownership,
      isAlive,
      hasLeft: (member) => {
        const known = memberOf(member.id);
        return known?.status === "left" && known.incarnation >= member.incarnation;
      },
      self: () => toWireMember(detector.self, clock.now()),
      claim: (peerId, request, signal) => peerClient(peerId).claimHosts(request, { signal }),
      learnOf: (member) => detector.learnOf(fromWireMember(member)),
      desk,
      agent,
    },
  );
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
      // A claim waiting for its answer would wait out the hand-over deadline (30 s) for nothing.
      claims.peerGone(id);
      // So would a push of hosts to it: they stay here, for their next owner.
      desk.peerGone(id);
      // A dead agent's claims on payloads would hold others' copies until their lease ran out.
      agent.digests.forget(id);
      // Its grants at the addresses this agent is the authority of would hold them a whole fetch's time.
      ipAuthority.agentGone(id);
      // The links it kept for this agent go to another keeper.
      delivery.keeperGone(id);
    },
    onOwnershipChanged: (previous) => {
      ipOwnershipChanged(previous);
      hands.changed();
    },
    lostHosts: {
      push: () =>
        desk.pushLost((peerId, request, signal) => peerClient(peerId).handOverHosts(request, { signal })),
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
    lastSuspicionAtMs: () => detector.lastSuspicionMs(),
    pulse: () => detector.pulse(),
    // Links buffered while this agent was busy are all the others will get from it: send them soon.
    onAwaitingEnd: () => exchange.reconsider(),
  });
  const blacklist = new BlacklistGossip(
    {},
    {
      clock,
      blacklist: agent.blacklist,
      peers: () => detector.alive().flatMap((member) => (member.id === selfId ? [] : [member.id])),
      // Bounded: a peer that died since the last heartbeat must not hold this agent's start for long.
      sync: (peerId, request) =>
        peerClient(peerId).syncBlacklist(request, {
          deadlineMs: Math.max(2 * options.heartbeatIntervalMs, 2000),
        }),
      logger,
    },
  );
  const service = agentService({
    clock,
    logger,
    agent,
    detector,
    ownership,
    exchange,
    crawlEnd,
    desk,
    partition,
    lastKnown,
    revisitBudgets,
    peers,
    blacklist,
    ipAuthority,
    maxConcurrentSubmits: options.maxConcurrentSubmits,
    leave: deps.leave,
  });
  handlers = service.handlers;
  const parts: ClusterParts = {
    ...service,
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
    blacklist,
    ipAuthority,
    ipGate,
    handOffAddresses,
    peers,
    peerClient,
    server,
  };
  return { parts, address, listenAddress };
}
