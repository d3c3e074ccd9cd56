import type { Agent, AgentOptions } from "../agent/index.js";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { MemberEntry } from "../failure-detector/index.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import { outboxPeers } from "../storage/index.js";
import {
  type AgentServiceHandlers,
  type AgentStats,
  type PeerTransport,
  parseHostPort,
} from "../transport/index.js";
import { assembleCluster, type ClusterParts } from "./cluster-assembly.js";
import { DEFAULT_JOIN_TIMEOUT_MS, joinCluster } from "./cluster-join.js";
import type { ClusterOptions } from "./cluster-options.js";
import type { CrawlEnd } from "./crawl-end.js";
import { DEFAULT_LEAVE_TIMEOUT_MS, type LeaveOutcome, leaveCluster } from "./graceful-leave.js";
import type { HandOverDesk } from "./hand-over.js";
import type { HostClaims } from "./host-claims.js";
import { KnownPeers, readKnownPeers } from "./known-peers.js";
import { entrustToKeepers } from "./leave-keepers.js";
import { resendUnacked, UNACKED_PEER } from "./unacked-urls.js";
import { DEFAULT_MAX_CONCURRENT_SUBMITS } from "./url-intake.js";
import type { ViewStabilizer } from "./view-stabilizer.js";

export { DEFAULT_LEAVE_TIMEOUT_MS, DEFAULT_MAX_CONCURRENT_SUBMITS, type LeaveOutcome };

/** What a {@link ClusterNode} is given rather than reaching for. */
export interface ClusterNodeDeps {
  readonly clock?: Clock;
  /** Where the node's and its agent's records go. @default JSON records on standard error */
  readonly logger?: Logger;
  /** How the node reaches its peers and is reached (a `MemoryNetwork`'s, in one process). @default gRPC */
  readonly transport?: PeerTransport;
  /**
   * What follows a graceful leave an operator asked for (`ctl leave`) once it ended: the agent command
   * ends its process. @default the node stops
   */
  readonly afterLeave?: (node: ClusterNode) => void;
}

/**
 * One agent in a cluster, composed of an {@link Agent} that crawls and, around it: the `Agent` service
 * (membership, URL intake, the operator's commands: see agent-handlers.ts), the heartbeat failure detector with gossip membership, the
 * consistent-hashing ownership, host hand-overs ({@link HostClaims}, {@link HandOverDesk}: page
 * recovery by host), the URL exchange, the takeover grace, self-stabilization on view changes
 * ({@link ViewStabilizer}), termination detection ({@link CrawlEnd}) and the graceful leave. No
 * coordinator: every decision is local.
 */
export class ClusterNode {
  readonly agent: Agent;
  /** The handlers of the agent's `Agent` service, as its server calls them (a test may replace one). */
  readonly handlers: AgentServiceHandlers;
  private readonly parts: ClusterParts;
  private knownPeers: KnownPeers | undefined;
  private leaving: Promise<LeaveOutcome> | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly options: ClusterOptions,
    /** The address other agents reach this one at: `advertise`, or the bound address. */
    readonly address: string,
    /** The address the gRPC server is bound to (the real port when `listen` asked for port 0). */
    readonly listenAddress: string,
    private readonly clock: Clock,
    parts: ClusterParts,
  ) {
    this.parts = parts;
    this.agent = parts.agent;
    this.handlers = parts.handlers;
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
    const cell: { node?: ClusterNode } = {};
    const afterLeave = deps.afterLeave ?? ((node: ClusterNode) => void node.stop());
    const { parts, address, listenAddress } = await assembleCluster(agentOptions, options, {
      clock,
      logger,
      ...(deps.transport === undefined ? {} : { transport: deps.transport }),
      leave: async () => {
        const node = cell.node;
        if (!node) throw new UbiError(ErrorCode.PeerUnreachable, "agent is starting");
        await node.leave();
        afterLeave(node);
      },
    });
    const node = new ClusterNode(options, address, listenAddress, clock, parts);
    cell.node = node;
    const { agent, detector, stabilizer, blacklist, crawlEnd } = parts;
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
      // The agents seen alive, for a restart to rejoin through when its --join agents are down.
      const knownPeers = new KnownPeers({
        dataDir: agentOptions.dataDir,
        selfId: agentOptions.id,
        initial: await readKnownPeers(agentOptions.dataDir, logger),
        now: () => clock.now(),
        logger,
      });
      node.knownPeers = knownPeers;
      detector.onChange(() => knownPeers.note(detector.members()));
      knownPeers.note(detector.members());
      // URLs handed in an earlier run to agents gone since: re-sent to their hosts' owners now.
      stabilizer.resendForAbsent(
        (await outboxPeers(agent.storage.store)).filter((peer) => peer !== UNACKED_PEER && peer !== agent.id),
      );
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
   * Pages fetched by every member so far, from what this agent knows without asking (its own count, and
   * the others' from their heartbeats and gossip): cheap enough to sample every second.
   */
  clusterPagesFetched(): number {
    return this.parts.membership.figures().reduce((sum, figures) => sum + figures.pagesFetched, 0);
  }

  /**
   * Every member's partition stats, gathered through this agent (what `GetStats` with `cluster`
   * answers): the live ones asked now, the others with their last known figures.
   */
  async clusterStats(): Promise<AgentStats[]> {
    return (await this.parts.admin.getStats({ cluster: true })).agents;
  }

  /**
   * Graceful leave (see {@link leaveCluster}): hands every host this agent holds and every queued URL
   * to their next owners and tells the others, all within `timeoutMs`. Idempotent.
   */
  leave(timeoutMs = DEFAULT_LEAVE_TIMEOUT_MS): Promise<LeaveOutcome> {
    const {
      agent,
      detector,
      stabilizer,
      exchange,
      desk,
      claims,
      tenure,
      peerClient,
      handOffAddresses,
      ownership,
    } = this.parts;
    this.leaving ??= leaveCluster(timeoutMs, {
      clock: this.clock,
      agent,
      claims,
      desk,
      heldHosts: () => tenure.heldHosts().length,
      send: (peerId, request, deadlineMs) => peerClient(peerId).handOverHosts(request, { deadlineMs }),
      handOffAddresses,
      announce: () => detector.leave(),
      settled: () => stabilizer.settled(),
      handOverRequeued: () => stabilizer.handOverStranded(),
      exchange,
      others: () => detector.alive().flatMap(({ id }) => (id === agent.id ? [] : [id])),
      entrustAlone: (deadlineAtMs) =>
        entrustToKeepers(
          {
            selfId: agent.id,
            clock: this.clock,
            store: agent.storage.store,
            ownership,
            isStaying: (id) => id !== agent.id && stabilizer.isAlive(id),
            takeAllLinks: () => agent.takeAllLinks(),
            submit: (peerId, batch, signal) => peerClient(peerId).submitUrls(batch, { signal }),
          },
          deadlineAtMs,
        ),
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
    const { intake, partition } = this.parts;
    intake.closeIntake();
    if (partition.load().idle) return true;
    intake.reopenIntake();
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
      const { detector, stabilizer, claims, exchange, server, agent, peers, blacklist, ipGate, ipAuthority } =
        this.parts;
      detector.stop();
      ipGate.close();
      // Asks held in its addresses' lines are answered now: the server's stop does not wait for them.
      ipAuthority.close();
      stabilizer.stop();
      blacklist.stop();
      claims.stop();
      exchange.stop();
      await server.stop();
      await agent.stop();
      await this.knownPeers?.flush();
      peers.closeAll();
    })();
    return this.stopping;
  }
}
