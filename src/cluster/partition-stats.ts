import { type ClusterFacingAgent, communicationOverhead } from "../agent/index.js";
import type { Clock } from "../clock.js";
import type { MemberEntry } from "../failure-detector/index.js";
import type { AgentStats, MemberFigures } from "../transport/index.js";
import type { LastKnownFigures } from "./last-known.js";
import { toWireMember } from "./members.js";
import type { Ownership } from "./ownership.js";
import type { TakeoverGrace } from "./takeover-grace.js";
import type { WorkLoad } from "./termination.js";

/** What a {@link PartitionStats} reads of the agent. */
export type StatsSource = Pick<
  ClusterFacingAgent,
  | "id"
  | "stats"
  | "isIdle"
  | "isPaused"
  | "activeHosts"
  | "queuedUrls"
  | "spareHostSlots"
  | "waiting"
  | "forEachHost"
  | "revisits"
  | "revisitSharing"
  | "busiestIps"
>;

/** Busiest IP addresses in an agent's stats (`AgentStats.busiest_ips`). */
export const BUSIEST_IPS_REPORTED = 10;

/** What a {@link PartitionStats} reads. */
export interface PartitionStatsDeps {
  readonly clock: Clock;
  readonly agent: StatsSource;
  readonly ownership: Pick<Ownership, "holdsHost" | "replicas" | "share">;
  readonly grace: Pick<TakeoverGrace, "heldUntilMs" | "heldFor">;
  /** True when the URL exchange has nothing buffered, unacknowledged or waiting to be re-sent. */
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
    const sharing = agent.revisitSharing();
    return {
      idle: agent.isIdle && this.deps.exchangeIdle() && !agent.isPaused,
      urlBatchesSent: this.batchesDelivered,
      urlBatchesReceived: this.batchesReceived,
      pagesFetched: agent.stats.pagesFetched,
      queuedUrls: agent.queuedUrls,
      spareHostSlots: agent.isPaused ? 0 : agent.spareHostSlots,
      revisitPages: sharing?.pages ?? 0,
      revisitBudget: sharing?.budget ?? 0,
    };
  }

  /** This agent's fetch totals, as gossiped with heartbeats (see {@link LastKnownFigures}). */
  figures(): MemberFigures {
    const { pagesFetched, bytesFetched, pagesRecovered, errors } = this.deps.agent.stats.durable;
    return { id: this.deps.agent.id, pagesFetched, bytesFetched, pagesRecovered, errors: { ...errors } };
  }

  /** The partition stats of this agent. */
  stats(): AgentStats {
    const { agent, ownership, grace, clock } = this.deps;
    const { stats } = agent;
    const counted = stats.durable;
    const now = clock.now();
    let hostsOwned = 0;
    let hostsKnown = 0;
    let hostsDone = 0;
    let hostsHeld = 0;
    agent.forEachHost((host, waiting, fetched) => {
      hostsKnown++;
      const owned = ownership.holdsHost(host);
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
      pagesFetched: counted.pagesFetched,
      bytesFetched: counted.bytesFetched,
      queuedUrls: agent.queuedUrls,
      peers: Object.entries(counted.peers).map(([peerId, traffic]) => ({ peerId, ...traffic })),
      communicationOverhead: communicationOverhead(counted),
      linksToOtherAgents: counted.linksToOtherAgents,
      pagesRecovered: counted.pagesRecovered,
      errors: { ...counted.errors },
      pagesPerSecond: stats.pagesPerSecond(),
      uptimeMs: stats.uptimeMs,
      idle: this.load().idle,
      paused: agent.isPaused,
      hostsHeld,
      heldFor: [...grace.heldFor],
      pagesFetchedThisRun: stats.durablePagesThisRun,
      status: "ALIVE",
      reportedMsAgo: 0,
      waiting: agent.waiting().map(({ reason, hosts, nextAtMs }) => ({
        reason,
        hosts,
        nextInMs: Math.max(0, nextAtMs - now),
      })),
      duplicates: counted.duplicates ?? 0,
      duplicateBytes: counted.duplicateBytes ?? 0,
      digestMessages: counted.digestMessages ?? 0,
      payloadCopies: counted.payloadCopies ?? 0,
      payloadsUnchecked: counted.payloadsUnchecked ?? 0,
      revisits: agent.revisits() ?? null,
      busiestIps: agent.busiestIps(BUSIEST_IPS_REPORTED).map(({ keeper, hostNames, ...figures }) => ({
        ...figures,
        hostNames: [...hostNames],
        keeper: keeper ?? agent.id,
      })),
    };
  }
}

/**
 * The partition stats of an agent crawling alone (no `--listen`): it owns every host and the whole
 * circle, has no peers and holds nothing for anyone — so `/api/stats` and the metrics read the same
 * document for a lone agent as for a cluster's.
 */
export function loneAgentStats(agent: StatsSource, clock: Clock): PartitionStats {
  return new PartitionStats(
    { address: "", capacity: 1 },
    {
      clock,
      agent,
      ownership: { holdsHost: () => true, replicas: 0, share: 1 },
      grace: { heldUntilMs: () => 0, heldFor: [] },
      exchangeIdle: () => true,
      members: () => [],
    },
  );
}
