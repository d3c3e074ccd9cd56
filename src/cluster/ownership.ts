import { isUbiError } from "../errors.js";
import { type AgentSpec, Assignment, type Hasher64 } from "../hashing/index.js";

/**
 * How URLs are spread over the agents: by the hash of their host (`host`, the crawler's design: one
 * agent crawls each host, alone, so it can be polite), or by the hash of the URL itself (`url`, for
 * experiments: Cho and Garcia-Molina's URL-hash partitioning, where several agents crawl one host).
 */
export const PARTITIONINGS = ["host", "url"] as const;

/** One of {@link PARTITIONINGS}. */
export type Partitioning = (typeof PARTITIONINGS)[number];

/** The partitioning an agent uses unless told otherwise. */
export const DEFAULT_PARTITIONING: Partitioning = "host";

/** The key whose owner on the circle owns `url`, of host `host`, under `partitioning`. */
export function partitionKey(partitioning: Partitioning, url: string, host: string): string {
  return partitioning === "url" ? url : host;
}

/**
 * This agent's current answer to "who owns host X" (and, under URL partitioning, "who owns URL X"),
 * rebuilt from the alive set on every view change.
 *
 * Under URL partitioning a URL's owner is the owner of the URL's own hash, and every agent may crawl
 * every host, holding there only the URLs it owns. Hand-overs, page recovery and takeover grace are per
 * host, so they are not done: the membership should stay fixed while crawling (as in the laboratory,
 * which starts every agent before the first seed). After a view change URLs already queued stay where
 * they are; a dead agent's are lost but for those its peers sent it, which they send again; a leaving
 * agent hands each of its queued URLs to the URL's next owner.
 */
export class Ownership {
  private current: Assignment;
  private signature: string;

  constructor(
    private readonly selfId: string,
    selfCapacity: number,
    private readonly replicasPerUnit: number | undefined,
    private readonly hasher: Hasher64,
    /** How URLs are spread over the agents. */
    readonly partitioning: Partitioning = DEFAULT_PARTITIONING,
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

  /** Owner of payload digest `digest` in the current view: digests are spread over the agents like hosts. */
  ownerOfDigest(digest: string): string {
    return this.current.ownerOfRareKey(digest);
  }

  /** The authority of IP address `ip` in the current view: addresses are spread over the agents like hosts. */
  ownerOfIp(ip: string): string {
    return this.current.ownerOfRareKey(ip);
  }

  /** Owner of `url`, of host `host`, in the current view: its host's owner, or its own under URL partitioning. */
  ownerOfUrl(url: string, host: string): string {
    return this.partitioning === "url" ? this.current.ownerOfRareKey(url) : this.current.ownerOf(host);
  }

  /**
   * Whether this agent may hold and crawl URLs of `host`: it owns the host, or, under URL partitioning,
   * it is in its own view (it holds there only URLs it owns; once it leaves, it holds nothing).
   */
  holdsHost(host: string): boolean {
    return this.partitioning === "url"
      ? this.current.has(this.selfId)
      : this.current.ownerOf(host) === this.selfId;
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

  /**
   * Who would own `host` were both this agent and agent `holder` gone: the keeper of a URL `holder`
   * holds for this agent once it leaves (none when no third agent is alive).
   */
  keeperFor(host: string, holder: string): string | undefined {
    return [this.current.ownerOf(host), ...this.current.successors(host, 2)].find(
      (id) => id !== this.selfId && id !== holder,
    );
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
