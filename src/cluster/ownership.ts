import { isUbiError } from "../errors.js";
import { type AgentSpec, Assignment, type Hasher64 } from "../hashing/index.js";

/** Past assignments kept for page recovery; older views are forgotten. */
const HISTORY_LENGTH = 16;

/**
 * This agent's current answer to "who owns host X", rebuilt from the alive set on every view change,
 * plus the few previous answers, so page recovery can ask the agents that owned a host before.
 */
export class Ownership {
  private current: Assignment;
  private readonly history: Assignment[] = [];
  private signature: string;
  /** Set when this agent joined other agents: every host it owns may have had another owner first. */
  private joinedRunningCrawl = false;

  constructor(
    private readonly selfId: string,
    selfCapacity: number,
    private readonly replicasPerUnit: number | undefined,
    private readonly hasher: Hasher64,
  ) {
    const self = [{ id: selfId, capacity: selfCapacity }];
    this.current = this.build(self);
    this.signature = signatureOf(self);
  }

  /** The current assignment. */
  get assignment(): Assignment {
    return this.current;
  }

  /** Owner of `host` in the current view. */
  ownerOf(host: string): string {
    return this.current.ownerOf(host);
  }

  /**
   * Rebuilds the assignment for `alive` (self included); returns true when it changed. Agents whose
   * replicas collide with an existing agent's are left out (they were refused at join).
   */
  update(alive: readonly AgentSpec[]): boolean {
    const signature = signatureOf(alive);
    if (signature === this.signature) return false;
    let next: Assignment;
    try {
      next = this.build(alive);
    } catch (error) {
      if (!isUbiError(error)) throw error;
      const known = new Set(this.current.agents.map((agent) => agent.id));
      next = this.build(alive.filter((agent) => known.has(agent.id) || agent.id === this.selfId));
    }
    this.history.unshift(this.current);
    if (this.history.length > HISTORY_LENGTH) this.history.pop();
    this.current = next;
    this.signature = signature;
    return true;
  }

  /** Marks that this agent joined a running cluster: its hosts may have had other owners. */
  markJoinedRunningCrawl(): void {
    this.joinedRunningCrawl = true;
  }

  /**
   * Up to `k` other agents that may have fetched pages of `host` before this agent owned it, most
   * likely first: its owners in previous views, then (after joining a running crawl) the agents that
   * would own it if this agent were absent — UbiCrawler's successors.
   */
  previousOwners(host: string, k: number, isAlive: (id: string) => boolean): string[] {
    const result: string[] = [];
    const consider = (id: string) => {
      if (result.length < k && id !== this.selfId && isAlive(id) && !result.includes(id)) result.push(id);
    };
    for (const past of this.history) consider(past.ownerOf(host));
    if (this.joinedRunningCrawl && this.current.ownerOf(host) === this.selfId) {
      for (const id of this.current.successors(host, k)) consider(id);
    }
    return result;
  }

  /** Fraction of the circle this agent owns. */
  get share(): number {
    return this.current.share(this.selfId);
  }

  /** Replicas of this agent on the circle. */
  get replicas(): number {
    return this.current.replicaCount(this.selfId);
  }

  /** Checks that `candidate` can join the current set; throws `IdConflict` on a replica collision. */
  checkNewcomer(candidate: AgentSpec): void {
    if (this.current.has(candidate.id)) return;
    this.build([...this.current.agents, candidate]);
  }

  private build(agents: readonly AgentSpec[]): Assignment {
    return Assignment.build(agents, { replicasPerUnit: this.replicasPerUnit }, this.hasher);
  }
}

function signatureOf(agents: readonly AgentSpec[]): string {
  return agents
    .map((agent) => `${agent.id}*${agent.capacity ?? 1}`)
    .sort()
    .join(",");
}
