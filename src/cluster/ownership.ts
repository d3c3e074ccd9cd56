import { isUbiError } from "../errors.js";
import { type AgentSpec, Assignment, type Hasher64 } from "../hashing/index.js";

/**
 * This agent's current answer to "who owns host X", rebuilt from the alive set on every view change.
 */
export class Ownership {
  private current: Assignment;
  private signature: string;

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
    this.current = next;
    this.signature = signature;
    return true;
  }

  /**
   * Who owns `host` once this agent is gone: its owner now if that is another agent (contravariance:
   * a departure moves only the departing agent's hosts), else the next agent along the circle (none
   * when this agent is alone).
   */
  ownerOnceGone(host: string): string | undefined {
    const owner = this.current.ownerOf(host);
    return owner === this.selfId ? this.current.successors(host, 1)[0] : owner;
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
