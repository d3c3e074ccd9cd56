import { type Clock, sleep } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { FailureDetector } from "../failure-detector/index.js";

/** @default of how long joining keeps trying the seed addresses. */
export const DEFAULT_JOIN_TIMEOUT_MS = 30_000;
/** Wait between two rounds of join attempts. */
const JOIN_RETRY_MS = 500;

/** How {@link joinCluster} joins. */
export interface JoinPlan {
  /** Addresses of live agents to join through (empty: this agent starts a new cluster). */
  readonly seeds: readonly string[];
  /** How long to keep trying the seeds before giving up. */
  readonly joinTimeoutMs: number;
  /** How long to wait at most for every member learned by gossip to answer directly. */
  readonly settleMs: number;
  /** How often to look whether they have. */
  readonly pollMs: number;
  readonly clock: Clock;
}

/**
 * Joins the cluster through `plan.seeds` (retrying until the join timeout; an id conflict fails at
 * once), starts the failure detector and waits until every member learned by gossip has answered
 * directly, so the first links this agent routes already use the whole cluster's view. Returns true
 * when it joined other agents, false when it starts a cluster of its own.
 */
export async function joinCluster(detector: FailureDetector, plan: JoinPlan): Promise<boolean> {
  const { clock, seeds } = plan;
  if (seeds.length > 0) {
    const deadline = clock.now() + plan.joinTimeoutMs;
    for (;;) {
      try {
        await detector.join(seeds);
        break;
      } catch (error) {
        if (isUbiError(error, ErrorCode.IdConflict) || clock.now() >= deadline) throw error;
        await sleep(clock, JOIN_RETRY_MS);
      }
    }
  }
  detector.start();
  if (seeds.length === 0) return false;
  const deadline = clock.now() + plan.settleMs;
  while (clock.now() < deadline) {
    const pending = detector.members().some((member) => member.status === "suspected");
    if (!pending) break;
    await sleep(clock, plan.pollMs);
  }
  return true;
}
