import type { Clock } from "../clock.js";
import type { MemberEntry } from "../failure-detector/index.js";
import type { AgentStats, MemberFigures } from "../transport/index.js";
import { toWireMember } from "./members.js";
import type { WorkLoad } from "./termination.js";

/**
 * What this agent last knew of each member — its last stats, its last heartbeat load, and the fetch
 * totals gossiped by the others — so a member that cannot be asked (suspected, left, crashed) still
 * counts with its last figures. The totals travel with every heartbeat, the highest winning (they only
 * grow), so an agent that joined after another left counts that agent's pages as every other agent
 * does: `GetStats` with `cluster` gives the same totals through any agent.
 */
export class LastKnownFigures {
  private readonly known = new Map<string, LastKnown>();

  constructor(
    private readonly selfId: string,
    private readonly clock: Clock,
  ) {}

  /** What is known of member `id`; undefined when nothing is. */
  of(id: string): LastKnown | undefined {
    return this.known.get(id);
  }

  /** Member `id`'s stats, as it answered them now. */
  noteStats(id: string, stats: AgentStats): void {
    this.entry(id).stats = { value: stats, atMs: this.clock.now() };
  }

  /** Member `id`'s load, from its heartbeat. */
  noteLoad(id: string, load: WorkLoad): void {
    this.entry(id).load = { value: load, atMs: this.clock.now() };
  }

  /** Totals gossiped by a peer (undefined from an agent that predates them): the highest are kept. */
  noteGossip(figures: readonly MemberFigures[] | undefined): void {
    for (const heard of figures ?? []) {
      if (heard.id === this.selfId) continue;
      const entry = this.entry(heard.id);
      const kept = entry.gossiped;
      entry.gossiped = {
        pagesFetched: Math.max(kept?.pagesFetched ?? 0, heard.pagesFetched),
        bytesFetched: Math.max(kept?.bytesFetched ?? 0, heard.bytesFetched),
        pagesRecovered: Math.max(kept?.pagesRecovered ?? 0, heard.pagesRecovered),
        errors: highest(kept?.errors ?? {}, heard.errors),
      };
    }
  }

  /** The totals to gossip: this agent's own, and the best known of each of `memberIds` but itself. */
  gossip(own: MemberFigures, memberIds: readonly string[]): MemberFigures[] {
    const table: MemberFigures[] = [own];
    for (const id of memberIds) {
      if (id === this.selfId) continue;
      const entry = this.known.get(id);
      if (!entry) continue;
      const { stats, load, gossiped } = entry;
      table.push({
        id,
        pagesFetched: Math.max(
          stats?.value.pagesFetched ?? 0,
          load?.value.pagesFetched ?? 0,
          gossiped?.pagesFetched ?? 0,
        ),
        bytesFetched: Math.max(stats?.value.bytesFetched ?? 0, gossiped?.bytesFetched ?? 0),
        pagesRecovered: Math.max(stats?.value.pagesRecovered ?? 0, gossiped?.pagesRecovered ?? 0),
        errors: highest(stats?.value.errors ?? {}, gossiped?.errors ?? {}),
      });
    }
    return table;
  }

  private entry(id: string): LastKnown {
    let entry = this.known.get(id);
    if (!entry) {
      entry = {};
      this.known.set(id, entry);
    }
    return entry;
  }
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
      // What it did at addresses lately is not known now: it is not asked.
      busiestIps: [],
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
    revisits: null,
    payloadCopies: 0,
    payloadsUnchecked: 0,
    busiestIps: [],
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
