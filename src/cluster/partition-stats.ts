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
>;

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
    return {
      idle: agent.isIdle && this.deps.exchangeIdle() && !agent.isPaused,
      urlBatchesSent: this.batchesDelivered,
      urlBatchesReceived: this.batchesReceived,
      pagesFetched: agent.stats.pagesFetched,
      queuedUrls: agent.queuedUrls,
      spareHostSlots: agent.isPaused ? 0 : agent.spareHostSlots,
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

/**
 * What an agent last knew of a member: its last full stats and its last heartbeat load, each with when,
 * and the highest fetch totals the others gossiped of it.
 */
export interface LastKnown {
  stats?: { readonly value: AgentStats; readonly atMs: number };
  load?: { readonly value: WorkLoad; readonly atMs: number };
  gossiped?: Omit<MemberFigures, "id">;
}

/**
 * The stats row of a member that could not be asked (suspected, left, or not answering): its last
 * known figures, with its status and their age; zero where nothing is known.
 */
export function rememberedStats(
  member: MemberEntry,
  known: LastKnown | undefined,
  nowMs: number,
): AgentStats {
  const status = toWireMember(member, nowMs).status;
  const latestMs = Math.max(known?.stats?.atMs ?? 0, known?.load?.atMs ?? 0);
  const reportedMsAgo = latestMs === 0 ? 0 : Math.max(0, nowMs - latestMs);
  const load = known?.load?.value;
  // Counters only grow: the later of the two readings wins for the ones both have.
  // The others' gossip too: an agent that joined after this one left heard its totals only so.
  const gossiped = known?.gossiped;
  const pagesFetched = Math.max(
    known?.stats?.value.pagesFetched ?? 0,
    load?.pagesFetched ?? 0,
    gossiped?.pagesFetched ?? 0,
  );
  const bytesFetched = Math.max(known?.stats?.value.bytesFetched ?? 0, gossiped?.bytesFetched ?? 0);
  const pagesRecovered = Math.max(known?.stats?.value.pagesRecovered ?? 0, gossiped?.pagesRecovered ?? 0);
  const errors = highest(known?.stats?.value.errors ?? {}, gossiped?.errors ?? {});
  const newerLoad = load !== undefined && (known?.load?.atMs ?? 0) >= (known?.stats?.atMs ?? 0);
  if (known?.stats) {
    const last = known.stats.value;
    const queuedUrls = newerLoad ? (load?.queuedUrls ?? last.queuedUrls) : last.queuedUrls;
    return {
      ...last,
      status,
      reportedMsAgo,
      pagesFetched,
      bytesFetched,
      pagesRecovered,
      errors,
      queuedUrls,
      idle: false,
      pagesPerSecond: 0,
    };
  }
  return {
    id: member.id,
    address: member.address,
    capacity: member.capacity,
    replicas: 0,
    circleShare: 0,
    view: [],
    hostsOwned: 0,
    hostsKnown: 0,
    hostsActive: 0,
    hostsDone: 0,
    pagesFetched,
    bytesFetched,
    queuedUrls: load?.queuedUrls ?? 0,
    peers: [],
    communicationOverhead: 0,
    linksToOtherAgents: 0,
    pagesRecovered,
    errors,
    pagesPerSecond: 0,
    uptimeMs: 0,
    idle: false,
    paused: false,
    hostsHeld: 0,
    heldFor: [],
    pagesFetchedThisRun: 0,
    status,
    reportedMsAgo,
    waiting: [],
    duplicates: 0,
    duplicateBytes: 0,
    digestMessages: 0,
  };
}

/** Per class, the higher of two readings of counts that only grow. */
export function highest(
  a: Readonly<Record<string, number>>,
  b: Readonly<Record<string, number>>,
): Record<string, number> {
  const result: Record<string, number> = { ...a };
  for (const [name, count] of Object.entries(b)) result[name] = Math.max(result[name] ?? 0, count);
  return result;
}
