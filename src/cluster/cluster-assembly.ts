import { type Admission, Agent, type AgentOptions, type ClusterHooks, ipDelayOf } from "../agent/index.js";
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
import { AdminService } from "./admin-service.js";
import { agentHandlers, deferredHandlers } from "./agent-handlers.js";
import { BlacklistGossip } from "./blacklist-gossip.js";
import { ClusterIpGate } from "./cluster-ip-gate.js";
import type { ClusterOptions } from "./cluster-options.js";
import { CrawlEnd } from "./crawl-end.js";
import { CrawlTenure } from "./crawl-tenure.js";
import { fromWireVerdicts, toWireSettlements } from "./digest-wire.js";
import { HandOverDesk } from "./hand-over.js";
import { heartbeatSender } from "./heartbeat-sender.js";
import { DEFAULT_RECOVERY_K, HostClaims } from "./host-claims.js";
import { IP_LEASE_TTL_MS, IpAuthority } from "./ip-authority.js";
import { answerIpRequest, ipHoldOf } from "./ip-wire.js";
import { LastKnownFigures } from "./last-known.js";
import { fromWireMember, toWireMember } from "./members.js";
import { MembershipService } from "./membership-service.js";
import { Ownership } from "./ownership.js";
import { PartitionStats } from "./partition-stats.js";
import { DEFAULT_TAKEOVER_DELAY_MS, TakeoverGrace } from "./takeover-grace.js";
import { UrlExchange } from "./url-exchange.js";
import { DEFAULT_BATCH_URLS } from "./url-exchange-options.js";
import { UrlIntake } from "./url-intake.js";
import { ViewStabilizer } from "./view-stabilizer.js";

/**
 * Longest wait for a peer's answer about payload digests: past it the page is stored whole (a slow or
 * dead owner costs bytes, never a page).
 */
const DIGEST_DEADLINE_MS = 2_000;

/** Longest wait for an IP authority's answer: past it nothing is granted, and the asker asks again. */
const IP_DEADLINE_MS = 2_000;

/** How much longer than the whole-fetch deadline a granted slot lasts when its release never comes, ms. */
const SLOT_MARGIN_MS = 2_000;

/** The parts one cluster agent is composed of (see {@link assembleCluster}). */
export interface ClusterParts {
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
  /** Joins, heartbeats and host hand-overs: the membership half of the `Agent` service. */
  readonly membership: MembershipService;
  /** URL batches from peers: the receiving half of the URL exchange. */
  readonly intake: UrlIntake;
  /** The operator's stats and commands. */
  readonly admin: AdminService;
  /** The `Agent` service's handlers, each RPC passed to the part that owns it (a test may replace one). */
  readonly handlers: AgentServiceHandlers;
  readonly blacklist: BlacklistGossip;
  /** The politeness of the IP addresses this agent is the authority of, for the whole cluster. */
  readonly ipAuthority: IpAuthority;
  /** This agent's requests per IP address, limited cluster-wide. */
  readonly ipGate: ClusterIpGate;
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
 */
export async function assembleCluster(
  agentOptions: AgentOptions,
  options: ClusterOptions,
  deps: ClusterAssemblyDeps,
): Promise<AssembledCluster> {
  const { clock, logger } = deps;
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
  const tenure = new CrawlTenure();
  // The parts are made after the agent and the server; hooks and handlers reach them through `late`.
  const late: { parts?: ClusterParts; claims?: HostClaims; exchange?: UrlExchange } = {};
  const ready = (): ClusterParts => {
    if (!late.parts) throw new UbiError(ErrorCode.PeerUnreachable, "agent is starting");
    return late.parts;
  };
  const owns = (host: string) => ownership.holdsHost(host);
  const slotTtlMs = agentOptions.fetchTimeoutMs + SLOT_MARGIN_MS;
  const ipLimits = { maxPerIp: agentOptions.maxPerIp, ipDelayMs: ipDelayOf(agentOptions) };
  const ipAuthority: IpAuthority = new IpAuthority(
    {
      ...ipLimits,
      leaseTtlMs: IP_LEASE_TTL_MS,
      slotTtlMs,
      // Another authority's last lease and slots, and the time its view takes to learn of this one.
      graceMs: IP_LEASE_TTL_MS + slotTtlMs + options.suspectAfterMs,
    },
    {
      clock,
      owns: (ip) => ownership.ownerOfIp(ip) === selfId,
      isAlive: (id) => ownership.assignment.has(id),
      takeOver: (from, ip) => ipGate.takeOver(from, ip),
    },
  );
  const ipGate: ClusterIpGate = new ClusterIpGate(selfId, ipLimits, {
    clock,
    authorityOf: (ip) => ownership.ownerOfIp(ip),
    send: async (authority, request) =>
      authority === selfId
        ? answerIpRequest(ipAuthority, request)
        : peerClient(authority).ipGrants(request, { deadlineMs: IP_DEADLINE_MS + ipHoldOf(request) }),
    onMessage: () => {
      if (late.parts) late.parts.agent.stats.ipMessagesThisRun++;
    },
    kept: (ip) => ipAuthority.politenessAt(ip),
  });
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
    isCrawlComplete: () => late.parts?.crawlEnd.isCrawlComplete() ?? false,
    // Every agent answers as an authority; only `--ip-limit cluster` asks authorities.
    ...(options.ipLimit === "cluster" ? { ipLimiter: ipGate } : {}),
    digests: {
      ownerOf: (digest) => ownership.ownerOfDigest(digest),
      check: async (peerId, questions, settlements) =>
        fromWireVerdicts(
          await peerClient(peerId).streamCheckDigests(
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
  const server = transport.server(
    { security: options.security },
    {
      handlers: deferredHandlers(() => ready().handlers),
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
        load: () => ready().partition.load(),
        figures: () => ready().membership.figures(),
        onReply: (fromId, reply, sentAtMs) => {
          const parts = ready();
          parts.crawlEnd.observeReply(fromId, reply.load, sentAtMs);
          parts.membership.noteLoad(fromId, reply.load);
          lastKnown.noteGossip(reply.figures);
          parts.exchange.notePeerLoad(fromId, reply.load);
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
  const isAlive = (id: string) => late.parts?.stabilizer.isAlive(id) === true;
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
      claim: (peerId, request, signal) => peerClient(peerId).claimHosts(request, { signal }),
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
      // URLs handed to a crashed agent and not re-sent yet are work too.
      exchangeIdle: () => exchange.isIdle && late.parts?.stabilizer.redistributing !== true,
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
      // A claim waiting for its answer would wait out the hand-over deadline (30 s) for nothing.
      claims.peerGone(id);
      // A dead agent's claims on payloads would hold others' copies until their lease ran out.
      agent.forgetDigestClaims(id);
      // Its grants at the addresses this agent is the authority of would hold them a whole fetch's time.
      ipAuthority.agentGone(id);
    },
    onOwnershipChanged: (before) => {
      const after = ownership.assignment;
      ipAuthority.viewChanged((ip) => {
        // A self-only view is no evidence: a joining agent has one before it learns of the others; the
        // address's authority before it joined is the next agent along the circle.
        const previous = before.agents.length > 1 ? before.ownerOfRareKey(ip) : after.successors(ip, 1)[0];
        return previous === selfId ? undefined : previous;
      });
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
  const membership = new MembershipService({
    clock,
    detector,
    ownership,
    exchange,
    crawlEnd,
    desk,
    partition,
    lastKnown,
  });
  const intake = new UrlIntake(
    { maxConcurrentSubmits: options.maxConcurrentSubmits },
    { agent, ownership, partition },
  );
  const admin = new AdminService({
    clock,
    agent,
    detector,
    ownership,
    partition,
    lastKnown,
    peers,
    blacklist,
    logger,
    leave: () => {
      deps.leave().catch((error) => logger.error({ event: "leave-failed", err: error }, "the leave failed"));
    },
  });
  const handlers = agentHandlers({
    membership,
    intake,
    admin,
    blacklist,
    agent,
    ipGrants: (request) => answerIpRequest(ipAuthority, request),
  });
  const parts: ClusterParts = {
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
    membership,
    intake,
    admin,
    handlers,
    blacklist,
    ipAuthority,
    ipGate,
    peers,
    peerClient,
    server,
  };
  late.parts = parts;
  return { parts, address, listenAddress };
}
