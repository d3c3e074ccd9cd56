/** What an agent reports about its work, in every heartbeat (the proto's `AgentLoad`). */
export interface WorkLoad {
  readonly idle: boolean;
  readonly urlBatchesSent: number;
  readonly urlBatchesReceived: number;
  readonly pagesFetched: number;
  readonly queuedUrls: number;
  /** Hosts the agent could start visiting now but has no URL of (0 from agents that predate it). */
  readonly spareHostSlots: number;
  /** Pages whose revisits it plans by change rate, sharing its revisit budget (0 if none, or from agents that predate it). */
  readonly revisitPages: number;
  /** Its own `--recrawl-budget`, revisits a second (0 without a budget, or from agents that predate it). */
  readonly revisitBudget: number;
}

interface Observation {
  readonly load: WorkLoad;
  readonly atMs: number;
}

/**
 * Distributed termination detection over heartbeat loads. Once some agent has had work, the crawl is
 * complete when two consecutive rounds, each with a report from every live agent made after the
 * previous round, show every agent idle and no counter moved (pages fetched, URLs queued, URL batches
 * delivered and received).
 *
 * Why that is enough: an agent with a batch not yet acknowledged is not idle, and a receiver counts a
 * batch (or queues its URLs) before acknowledging it. So a batch in transit at the first round shows
 * at the second as a busy sender, a busy receiver or a moved counter.
 *
 * An agent gone from the view between the two rounds does not restart them: it was idle with nothing
 * unacknowledged at the first, so it took nothing away that the others' counters would not show. (Else
 * the agents of a finished crawl, each leaving as it sees the end, would reset the others' rounds one by
 * one and exit a heartbeat apart.) An agent new in the view does: nothing is known of its past.
 */
export class TerminationDetector {
  private readonly latest = new Map<string, Observation>();
  /** The first round: each agent's counters then, and the local time of its freshest report. */
  private previous: { counters: ReadonlyMap<string, string>; atMs: number } | undefined;
  /** Latched once any agent reported work: an idle cluster that never had any is waiting, not done. */
  private started = false;

  /** Records the load `agentId` measured no earlier than local time `atMs` (a reply to a request sent then). */
  observe(agentId: string, load: WorkLoad, atMs: number): void {
    this.latest.set(agentId, { load, atMs });
    if (load.pagesFetched > 0 || load.queuedUrls > 0) this.started = true;
  }

  /** Latches "started" from a load whose freshness is unknown (it does not count as a report). */
  noteStarted(load: WorkLoad): void {
    if (load.pagesFetched > 0 || load.queuedUrls > 0) this.started = true;
  }

  /** Marks the crawl as started (this agent was given seeds). */
  markStarted(): void {
    this.started = true;
  }

  /** True once any agent reported work (or this one was given seeds). */
  get hasStarted(): boolean {
    return this.started;
  }

  /** True when a report from `agentId` was observed (a reply, so measured after its request). */
  hasReportFrom(agentId: string): boolean {
    return this.latest.has(agentId);
  }

  /**
   * True when the last round found every agent idle: only fresher reports are missing, so asking
   * everyone now (rather than at the next heartbeat round) ends the crawl sooner.
   */
  get awaitsFreshReports(): boolean {
    return this.previous !== undefined;
  }

  /**
   * Weighs a load of unknown freshness (a heartbeat request's) against the last observed one: true
   * when `agentId` now says idle but was last observed busy, or never, so a fresh report may end it.
   */
  isNewlyIdle(agentId: string, load: WorkLoad): boolean {
    return load.idle && this.latest.get(agentId)?.load.idle !== true;
  }

  /** Forgets an agent that left the view. */
  forget(agentId: string): void {
    this.latest.delete(agentId);
  }

  /**
   * Evaluates one round over `aliveIds` (this agent's own load must have been observed just before).
   * Returns true once the condition held for two consecutive rounds.
   */
  check(aliveIds: readonly string[]): boolean {
    if (!this.started) return false;
    let oldestMs = Number.POSITIVE_INFINITY;
    const counters = new Map<string, string>();
    for (const id of aliveIds) {
      const observed = this.latest.get(id);
      if (!observed?.load.idle) {
        this.previous = undefined;
        return false;
      }
      const { load } = observed;
      oldestMs = Math.min(oldestMs, observed.atMs);
      counters.set(
        id,
        `${load.urlBatchesSent}:${load.urlBatchesReceived}:${load.pagesFetched}:${load.queuedUrls}`,
      );
    }
    // The same agents as the first round (or some of them), none of whose counters moved.
    const first = this.previous;
    if (first !== undefined && [...counters].every(([id, now]) => first.counters.get(id) === now)) {
      return oldestMs > first.atMs;
    }
    this.previous = { counters, atMs: maxAt(this.latest, aliveIds) };
    return false;
  }
}

function maxAt(latest: ReadonlyMap<string, Observation>, ids: readonly string[]): number {
  let max = 0;
  for (const id of ids) max = Math.max(max, latest.get(id)?.atMs ?? 0);
  return max;
}
