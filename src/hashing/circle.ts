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

const RADIX = 1 << 16;
const DIGIT_MASK = RADIX - 1;

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
    let total = 0;
    for (const agent of agents) total += agent.hi.length;
    let hi = new Uint32Array(total);
    let lo = new Uint32Array(total);
    let owners = new Uint32Array(total);
    let at = 0;
    agents.forEach((agent, owner) => {
      hi.set(agent.hi, at);
      lo.set(agent.lo, at);
      owners.fill(owner, at, at + agent.hi.length);
      at += agent.hi.length;
    });

    // LSD radix sort on four 16-bit digits, least significant first: linear time and no boxed
    // 64-bit values, so rebuilding the circle on every view change stays cheap.
    let toHi = new Uint32Array(total);
    let toLo = new Uint32Array(total);
    let toOwners = new Uint32Array(total);
    const counts = new Uint32Array(RADIX + 1);
    for (let pass = 0; pass < 4; pass++) {
      const words = pass < 2 ? lo : hi;
      const shift = pass % 2 === 0 ? 0 : 16;
      counts.fill(0);
      for (let i = 0; i < total; i++) counts[((words[i] >>> shift) & DIGIT_MASK) + 1]++;
      for (let d = 0; d < RADIX; d++) counts[d + 1] += counts[d];
      for (let i = 0; i < total; i++) {
        const slot = counts[(words[i] >>> shift) & DIGIT_MASK]++;
        toHi[slot] = hi[i];
        toLo[slot] = lo[i];
        toOwners[slot] = owners[i];
      }
      [hi, toHi] = [toHi, hi];
      [lo, toLo] = [toLo, lo];
      [owners, toOwners] = [toOwners, owners];
    }

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
