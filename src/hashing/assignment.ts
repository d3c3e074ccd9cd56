import { ErrorCode, invalidArgument, UbiError } from "../errors.js";
import { type AgentReplicas, Circle } from "./circle.js";
import { DEFAULT_CAPACITY, DEFAULT_REPLICAS_PER_UNIT } from "./constants.js";
import { sortedReplicaPositions } from "./replicas.js";
import { type Hasher64, loadHasher64 } from "./xxhash64.js";

/** An agent as the assignment sees it: its unique id and its capacity. */
export interface AgentSpec {
  /** The agent's unique identifier; it seeds the agent's replicas. */
  readonly id: string;
  /** A positive integer; the agent gets `capacity` times the replicas, hence that share of hosts. @default 1 */
  readonly capacity?: number;
}

/** Options of {@link Assignment.build}. */
export interface AssignmentOptions {
  /** Replicas per unit of capacity; more replicas balance better but cost memory and build time. @default 1600 */
  readonly replicasPerUnit?: number;
  /**
   * Most replicas on the circle, over all agents: a set asking for more is refused (at 2^25 a circle
   * takes hundreds of MB; it is surely a configuration error). @default 2^25
   */
  readonly maxTotalReplicas?: number;
}

const MAX_TOTAL_REPLICAS = 1 << 25;
const CIRCLE_SIZE = 2 ** 64;
/** Hosts whose owner an assignment remembers; past this the memo starts over (a few hundred KiB). */
const OWNER_CACHE_ENTRIES = 4096;

/**
 * δ(host, alive set): identifier-seeded consistent hashing. An immutable snapshot for one set of agents;
 * a new membership view builds a new one. Owners are found by binary search over the sorted replicas.
 */
export class Assignment {
  /** The agents of this snapshot, sorted by id, with capacities filled in. */
  readonly agents: readonly Required<AgentSpec>[];
  private readonly indexById: ReadonlyMap<string, number>;
  private readonly counts: Uint32Array;
  private shares: Float64Array | undefined;
  /** Owners already looked up: a crawl asks for the same few hosts' owners for every link it finds. */
  private readonly ownerCache = new Map<string, string>();

  private constructor(
    agents: Required<AgentSpec>[],
    private readonly circle: Circle,
    private readonly hasher: Hasher64,
    replicasPerUnit: number,
  ) {
    this.agents = Object.freeze(agents.map((agent) => Object.freeze(agent)));
    this.indexById = new Map(agents.map((agent, index) => [agent.id, index]));
    this.counts = Uint32Array.from(agents, (agent) => agent.capacity * replicasPerUnit);
  }

  /**
   * Places every agent's `replicasPerUnit × capacity` replicas on the circle. Throws
   * {@link ErrorCode.IdConflict} on a duplicate id or a replica collision between two agents, and
   * {@link ErrorCode.InvalidArgument} on an empty set or a bad capacity or option.
   */
  static build(agents: readonly AgentSpec[], options: AssignmentOptions, hasher: Hasher64): Assignment {
    const replicasPerUnit = options.replicasPerUnit ?? DEFAULT_REPLICAS_PER_UNIT;
    if (!Number.isInteger(replicasPerUnit) || replicasPerUnit < 1) {
      invalidArgument(`replicasPerUnit must be a positive integer, got ${replicasPerUnit}`);
    }
    const maxTotal = options.maxTotalReplicas ?? MAX_TOTAL_REPLICAS;
    if (!Number.isInteger(maxTotal) || maxTotal < 1) {
      invalidArgument(`maxTotalReplicas must be a positive integer, got ${maxTotal}`);
    }
    if (agents.length === 0) invalidArgument("an assignment needs at least one agent");
    const normalized: Required<AgentSpec>[] = [];
    const seen = new Set<string>();
    let total = 0;
    for (const agent of agents) {
      const capacity = agent.capacity ?? DEFAULT_CAPACITY;
      if (typeof agent.id !== "string" || agent.id.length === 0)
        invalidArgument("agent ids must be non-empty");
      if (!Number.isInteger(capacity) || capacity < 1) {
        invalidArgument(`capacity of agent "${agent.id}" must be a positive integer, got ${capacity}`);
      }
      if (seen.has(agent.id)) throw new UbiError(ErrorCode.IdConflict, `duplicate agent id "${agent.id}"`);
      seen.add(agent.id);
      total += capacity * replicasPerUnit;
      normalized.push({ id: agent.id, capacity });
    }
    if (total > maxTotal) invalidArgument(`${total} replicas exceed the limit of ${maxTotal}`);
    // Sorting makes the snapshot (and which agent a collision error names first) independent of input order.
    normalized.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const replicas: AgentReplicas[] = normalized.map((agent) => ({
      id: agent.id,
      ...sortedReplicaPositions(agent.id, agent.capacity * replicasPerUnit, hasher),
    }));
    return new Assignment(normalized, Circle.build(replicas), hasher, replicasPerUnit);
  }

  /** Like {@link Assignment.build}, loading the shared xxhash64 first. */
  static async load(agents: readonly AgentSpec[], options: AssignmentOptions = {}): Promise<Assignment> {
    return Assignment.build(agents, options, await loadHasher64());
  }

  /** The agent owning `hostKey`: the owner of the first replica clockwise at or after the host's position. */
  ownerOf(hostKey: string): string {
    let owner = this.ownerCache.get(hostKey);
    if (owner === undefined) {
      owner = this.agents[this.circle.owners[this.replicaOf(hostKey)]].id;
      if (this.ownerCache.size >= OWNER_CACHE_ENTRIES) this.ownerCache.clear();
      this.ownerCache.set(hostKey, owner);
    }
    return owner;
  }

  /**
   * The owner of a key asked about once or rarely (a payload digest, a URL under URL partitioning),
   * like {@link ownerOf} but not memoized: a stream of such keys would push out the hosts the memo is
   * for (with cluster dedup, a digest a page cleared the host memo every 4,096 pages).
   */
  ownerOfRareKey(key: string): string {
    return this.ownerCache.get(key) ?? this.agents[this.circle.owners[this.replicaOf(key)]].id;
  }

  /**
   * The next `k` distinct agents clockwise after the owner of `hostKey`: who would own it if the owner
   * were absent, then if that one were absent too, and so on. Fewer than `k` when there are fewer agents.
   */
  successors(hostKey: string, k: number): string[] {
    if (!Number.isInteger(k) || k < 0) invalidArgument(`k must be a non-negative integer, got ${k}`);
    const owners = this.circle.owners;
    const size = owners.length;
    const wanted = Math.min(k, this.agents.length - 1);
    const start = this.replicaOf(hostKey);
    const found: number[] = [owners[start]];
    for (let step = 1; step < size && found.length <= wanted; step++) {
      const owner = owners[(start + step) % size];
      if (!found.includes(owner)) found.push(owner);
    }
    return found.slice(1).map((index) => this.agents[index].id);
  }

  /** True when `id` is one of this snapshot's agents. */
  has(id: string): boolean {
    return this.indexById.has(id);
  }

  /** Number of replicas agent `id` has on the circle (0 when absent). */
  replicaCount(id: string): number {
    const index = this.indexById.get(id);
    return index === undefined ? 0 : this.counts[index];
  }

  /** Fraction of the circle (hence of hosts, in expectation) owned by agent `id` (0 when absent). */
  share(id: string): number {
    const index = this.indexById.get(id);
    if (index === undefined) return 0;
    this.shares ??= this.computeShares();
    return this.shares[index];
  }

  private replicaOf(hostKey: string): number {
    const position = this.hasher.hashString(hostKey);
    return this.circle.replicaAtOrAfter(Number(position >> 32n), Number(BigInt.asUintN(32, position)));
  }

  /** Replica i owns the arc (position[i-1], position[i]]; doubles are precise enough for fractions. */
  private computeShares(): Float64Array {
    const { hi, lo, owners } = this.circle;
    const shares = new Float64Array(this.agents.length);
    const last = hi.length - 1;
    let previous = hi[last] * 2 ** 32 + lo[last] - CIRCLE_SIZE;
    for (let i = 0; i <= last; i++) {
      const position = hi[i] * 2 ** 32 + lo[i];
      shares[owners[i]] += (position - previous) / CIRCLE_SIZE;
      previous = position;
    }
    return shares;
  }
}
