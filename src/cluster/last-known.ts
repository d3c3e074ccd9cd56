import type { Clock } from "../clock.js";
import type { AgentStats, MemberFigures } from "../transport/index.js";
import { highest, type LastKnown } from "./partition-stats.js";
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
