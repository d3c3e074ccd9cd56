/** What an agent reports about its work, in every heartbeat (the proto's `AgentLoad`). */
export interface WorkLoad {
  readonly idle: boolean;
  readonly urlBatchesSent: number;
  readonly urlBatchesReceived: number;
  readonly pagesFetched: number;
  readonly queuedUrls: number;
}

interface Observation {
  readonly load: WorkLoad;
  readonly atMs: number;
}

/**
 * Distributed termination detection over heartbeat loads. Once some agent has had work, the crawl is
 * complete when, in two
 * consecutive rounds with a fresh report from every live agent, every agent was idle, the batches
 * delivered equal the batches received across the cluster (no batch in transit), and no counter moved
 * between the rounds (so no work slipped between two reports).
 */
export class TerminationDetector {
  private readonly latest = new Map<string, Observation>();
  private previous: { signature: string; atMs: number } | undefined;
  /** Latched once any agent reported work: an idle cluster that never had any is waiting, not done. */
  private started = false;

  /** Records the load `agentId` reported at local time `atMs`. */
  observe(agentId: string, load: WorkLoad, atMs: number): void {
    this.latest.set(agentId, { load, atMs });
    if (load.pagesFetched > 0 || load.queuedUrls > 0) this.started = true;
  }

  /** Marks the crawl as started (this agent was given seeds). */
  markStarted(): void {
    this.started = true;
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
    let sent = 0;
    let received = 0;
    let oldestMs = Number.POSITIVE_INFINITY;
    const parts: string[] = [];
    for (const id of [...aliveIds].sort()) {
      const observed = this.latest.get(id);
      if (!observed?.load.idle) {
        this.previous = undefined;
        return false;
      }
      const { load } = observed;
      sent += load.urlBatchesSent;
      received += load.urlBatchesReceived;
      oldestMs = Math.min(oldestMs, observed.atMs);
      parts.push(
        `${id}:${load.urlBatchesSent}:${load.urlBatchesReceived}:${load.pagesFetched}:${load.queuedUrls}`,
      );
    }
    if (sent !== received) {
      this.previous = undefined;
      return false;
    }
    const signature = parts.join("|");
    if (this.previous && this.previous.signature === signature && oldestMs > this.previous.atMs) return true;
    if (!this.previous || this.previous.signature !== signature) {
      this.previous = { signature, atMs: maxAt(this.latest, aliveIds) };
    }
    return false;
  }
}

function maxAt(latest: ReadonlyMap<string, Observation>, ids: readonly string[]): number {
  let max = 0;
  for (const id of ids) max = Math.max(max, latest.get(id)?.atMs ?? 0);
  return max;
}

/**
 * URL batches delivered to and received from each peer, per life of that peer: a restarted peer
 * starts counting from zero, so the counters of its earlier life are dropped here too.
 */
export class BatchCounters {
  private readonly peers = new Map<string, { incarnation: number; sent: number; received: number }>();

  /** A batch to `peer` (in its life `incarnation`) was acknowledged. */
  delivered(peer: string, incarnation: number): void {
    const counters = this.countersOf(peer, incarnation);
    if (counters) counters.sent++;
  }

  /** A batch from `peer` (sent in its life `incarnation`) was received for the first time. */
  received(peer: string, incarnation: number): void {
    const counters = this.countersOf(peer, incarnation);
    if (counters) counters.received++;
  }

  /** Sums over `members` (their current lives only). */
  totals(members: readonly { id: string; incarnation: number }[]): { sent: number; received: number } {
    let sent = 0;
    let received = 0;
    for (const member of members) {
      const counters = this.peers.get(member.id);
      if (!counters || counters.incarnation !== member.incarnation) continue;
      sent += counters.sent;
      received += counters.received;
    }
    return { sent, received };
  }

  private countersOf(peer: string, incarnation: number) {
    const counters = this.peers.get(peer);
    if (!counters || incarnation > counters.incarnation) {
      const fresh = { incarnation, sent: 0, received: 0 };
      this.peers.set(peer, fresh);
      return fresh;
    }
    // A batch of an earlier life arriving late does not count for the current one.
    return incarnation === counters.incarnation ? counters : undefined;
  }
}

/** The sender's incarnation in a batch id (`<id>.<incarnation>.<serial>`), or 0 when absent. */
export function incarnationInBatchId(batchId: string): number {
  const parts = batchId.split(".");
  const value = Number(parts.at(-2));
  return Number.isSafeInteger(value) ? value : 0;
}
