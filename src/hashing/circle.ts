import { ErrorCode, UbiError } from "../errors.js";

/** The replica positions of one agent, as parallel high/low 32-bit words. */
export interface AgentReplicas {
  /** The agent's id, used to name it in a collision error. */
  readonly id: string;
  /** High 32 bits of each replica position. */
  readonly hi: Uint32Array;
  /** Low 32 bits of each replica position, same length as `hi`. */
  readonly lo: Uint32Array;
}

/** Replica positions in ascending order with the index of each one's agent. */
interface Run {
  readonly hi: Uint32Array;
  readonly lo: Uint32Array;
  readonly owners: Uint32Array;
}

/**
 * The discretized unit circle: every replica position sorted ascending, with the index of the agent
 * that owns it. Positions are split into two Uint32Arrays so lookups compare plain numbers.
 */
export class Circle {
  private constructor(
    /** High words of the sorted positions. */
    readonly hi: Uint32Array,
    /** Low words of the sorted positions. */
    readonly lo: Uint32Array,
    /** `owners[i]` is the index (into the build input) of the agent owning replica `i`. */
    readonly owners: Uint32Array,
  ) {}

  /**
   * Sorts the replicas of `agents` onto one circle. Throws {@link ErrorCode.IdConflict} when two
   * different agents have a replica at the same 64-bit position (an agent's own repeats are harmless).
   */
  static build(agents: readonly AgentReplicas[]): Circle {
    // Each agent's replicas form one sorted run (sorted here unless already sorted, as the assignment's
    // cached ones are); the runs are merged pairwise, so a view change costs a few linear passes and
    // no sort of the whole circle.
    let runs: Run[] = agents.map((agent, owner) => {
      const { hi, lo } = isSorted(agent.hi, agent.lo) ? agent : sortPositions(agent.hi, agent.lo);
      return { hi, lo, owners: new Uint32Array(hi.length).fill(owner) };
    });
    if (runs.length === 0)
      runs = [{ hi: new Uint32Array(0), lo: new Uint32Array(0), owners: new Uint32Array(0) }];
    while (runs.length > 1) {
      const merged: Run[] = [];
      for (let i = 0; i < runs.length; i += 2) {
        const next = runs[i + 1];
        merged.push(next === undefined ? runs[i] : mergeRuns(runs[i], next));
      }
      runs = merged;
    }
    const { hi, lo, owners } = runs[0];

    const collision = findCollision(hi, lo, owners);
    if (collision !== undefined) {
      throw new UbiError(
        ErrorCode.IdConflict,
        `agent "${agents[collision[0]].id}" collides with agent "${agents[collision[1]].id}" on the circle; choose another id`,
      );
    }
    return new Circle(hi, lo, owners);
  }

  /** Number of replicas on the circle. */
  get size(): number {
    return this.hi.length;
  }

  /**
   * Index of the first replica clockwise at or after position `(hi, lo)`, wrapping past the top of the
   * circle to replica 0. The circle must not be empty.
   */
  replicaAtOrAfter(hi: number, lo: number): number {
    const his = this.hi;
    const los = this.lo;
    let left = 0;
    let right = his.length;
    while (left < right) {
      const mid = (left + right) >>> 1;
      const h = his[mid];
      if (h < hi || (h === hi && los[mid] < lo)) left = mid + 1;
      else right = mid;
    }
    return left === his.length ? 0 : left;
  }
}

/**
 * The owners `[a, b]` of the first two adjacent replicas of the sorted circle that share a position
 * but belong to different agents, or undefined. An agent's own repeated positions are harmless.
 */
export function findCollision(
  hi: Uint32Array,
  lo: Uint32Array,
  owners: Uint32Array,
): [number, number] | undefined {
  let runStart = 0; // first replica of the current run of equal positions
  for (let i = 1; i < hi.length; i++) {
    if (hi[i] !== hi[runStart] || lo[i] !== lo[runStart]) runStart = i;
    else if (owners[i] !== owners[runStart]) return [owners[runStart], owners[i]];
  }
  return undefined;
}

/** True when the positions `(hi[i], lo[i])` are in ascending order. */
function isSorted(hi: Uint32Array, lo: Uint32Array): boolean {
  for (let i = 1; i < hi.length; i++) {
    if (hi[i] < hi[i - 1] || (hi[i] === hi[i - 1] && lo[i] < lo[i - 1])) return false;
  }
  return true;
}

/** The positions sorted ascending, as new word arrays (one native sort of 64-bit values). */
export function sortPositions(hi: Uint32Array, lo: Uint32Array): { hi: Uint32Array; lo: Uint32Array } {
  const positions = new BigUint64Array(hi.length);
  for (let i = 0; i < hi.length; i++) positions[i] = (BigInt(hi[i]) << 32n) | BigInt(lo[i]);
  positions.sort();
  const sortedHi = new Uint32Array(hi.length);
  const sortedLo = new Uint32Array(hi.length);
  for (let i = 0; i < positions.length; i++) {
    sortedHi[i] = Number(positions[i] >> 32n);
    sortedLo[i] = Number(BigInt.asUintN(32, positions[i]));
  }
  return { hi: sortedHi, lo: sortedLo };
}

/** One sorted run from two; on equal positions `a`'s replica comes first. */
function mergeRuns(a: Run, b: Run): Run {
  const total = a.hi.length + b.hi.length;
  const hi = new Uint32Array(total);
  const lo = new Uint32Array(total);
  const owners = new Uint32Array(total);
  let i = 0;
  let j = 0;
  for (let k = 0; k < total; k++) {
    const takeA =
      j >= b.hi.length ||
      (i < a.hi.length && (a.hi[i] < b.hi[j] || (a.hi[i] === b.hi[j] && a.lo[i] <= b.lo[j])));
    if (takeA) {
      hi[k] = a.hi[i];
      lo[k] = a.lo[i];
      owners[k] = a.owners[i++];
    } else {
      hi[k] = b.hi[j];
      lo[k] = b.lo[j];
      owners[k] = b.owners[j++];
    }
  }
  return { hi, lo, owners };
}
