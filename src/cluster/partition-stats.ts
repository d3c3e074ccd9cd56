import type { ClusterFacingAgent } from "../agent/index.js";
import type { Clock } from "../clock.js";
import type { MemberEntry } from "../failure-detector/index.js";
import type { AgentStats } from "../transport/index.js";
import { toWireMember } from "./members.js";
import type { Ownership } from "./ownership.js";
import type { TakeoverGrace } from "./takeover-grace.js";
import type { WorkLoad } from "./termination.js";

/** What a {@link PartitionStats} reads. */
export interface PartitionStatsDeps {
  readonly clock: Clock;
  readonly agent: ClusterFacingAgent;
  readonly ownership: Ownership;
  readonly grace: TakeoverGrace;
  /** True when the URL exchange has nothing buffered or unacknowledged. */
  readonly exchangeIdle: () => boolean;
  /** The failure detector's table. */
  readonly members: () => readonly MemberEntry[];
}

/**
 * An agent's figures as the cluster sees them: its load in every heartbeat (termination detection)
 * and its partition stats (`GetStats`).
 */
export class PartitionStats {
  /** URL batches acknowledged by peers since this agent started. */
  batchesDelivered = 0;
  /** URL batches received (retries counted once) since this agent started. */
  batchesReceived = 0;

  constructor(
    /** This agent's own entry: address, capacity. */
    private readonly self: { readonly address: string; readonly capacity: number },
    private readonly deps: PartitionStatsDeps,
  ) {}

  /** This agent's load, as reported in heartbeats. */
  load(): WorkLoad {
    const { agent } = this.deps;
    return {
      idle: agent.isIdle && this.deps.exchangeIdle() && !agent.isPaused,
      urlBatchesSent: this.batchesDelivered,
      urlBatchesReceived: this.batchesReceived,
      pagesFetched: agent.stats.pagesFetched,
      queuedUrls: agent.queuedUrls,
    };
  }

  /** The partition stats of this agent. */
  stats(): AgentStats {
    const { agent, ownership, grace, clock } = this.deps;
    const { stats } = agent;
    const now = clock.now();
    let hostsOwned = 0;
    let hostsKnown = 0;
    let hostsDone = 0;
    let hostsHeld = 0;
    agent.forEachHost((host, waiting, fetched) => {
      hostsKnown++;
      const owned = ownership.ownerOf(host) === agent.id;
      if (owned) hostsOwned++;
      if (waiting === 0 && fetched > 0) hostsDone++;
      if (owned && waiting > 0 && grace.heldUntilMs(host) > now) hostsHeld++;
    });
    return {
      id: agent.id,
      address: this.self.address,
      capacity: this.self.capacity,
      replicas: ownership.replicas,
      circleShare: ownership.share,
      view: this.deps.members().map((member) => ({
        id: member.id,
        address: member.address,
        status: toWireMember(member, now).status,
        lastHeardMsAgo: Math.max(0, now - member.lastHeardMs),
      })),
      hostsOwned,
      hostsKnown,
      hostsActive: agent.activeHosts,
      hostsDone,
      pagesFetched: stats.pagesFetched,
      bytesFetched: stats.bytesFetched,
      queuedUrls: agent.queuedUrls,
      peers: [...stats.peers].map(([peerId, traffic]) => ({ peerId, ...traffic })),
      communicationOverhead: stats.communicationOverhead,
      linksToOtherAgents: stats.linksToOtherAgents,
      pagesRecovered: stats.pagesRecovered,
      errors: Object.fromEntries(stats.errors),
      pagesPerSecond: stats.pagesPerSecond(),
      uptimeMs: stats.uptimeMs,
      idle: this.load().idle,
      paused: agent.isPaused,
      hostsHeld,
      heldFor: [...grace.heldFor],
    };
  }
}
