import { beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { Circle, findCollision, sortPositions } from "../../src/hashing/circle.js";
import { replicaPositions, replicaSeed, sortedReplicaPositions } from "../../src/hashing/replicas.js";
import { type Hasher64, loadHasher64 } from "../../src/hashing/xxhash64.js";

const agent = (id: string, positions: bigint[]) => ({
  id,
  hi: Uint32Array.from(positions, (p) => Number(p >> 32n)),
  lo: Uint32Array.from(positions, (p) => Number(BigInt.asUintN(32, p))),
});

describe("Circle", () => {
  it("sorts replicas across all 64 bits and finds the first one at or after a position, wrapping", () => {
    const circle = Circle.build([
      agent("a", [0xffff_0000_0000_0000n, 5n]),
      agent("b", [0x0000_0001_0000_0000n, 0x0000_0000_ffff_ffffn]),
    ]);
    const positions = Array.from(circle.hi, (h, i) => (BigInt(h) << 32n) | BigInt(circle.lo[i]));
    expect(positions).toEqual([5n, 0xffff_ffffn, 0x1_0000_0000n, 0xffff_0000_0000_0000n]);
    expect(Array.from(circle.owners)).toEqual([0, 1, 1, 0]);
    expect(circle.replicaAtOrAfter(0, 0)).toBe(0);
    expect(circle.replicaAtOrAfter(0, 5)).toBe(0);
    expect(circle.replicaAtOrAfter(0, 6)).toBe(1);
    expect(circle.replicaAtOrAfter(1, 0)).toBe(2);
    expect(circle.replicaAtOrAfter(1, 1)).toBe(3);
    expect(circle.replicaAtOrAfter(0xffff_ffff, 0)).toBe(0);
  });

  it("matches a plain sort on many random positions", () => {
    const values = Array.from({ length: 5000 }, (_, i) =>
      BigInt.asUintN(64, BigInt(i) * 0x9e37_79b9_7f4a_7c15n),
    );
    const circle = Circle.build([agent("a", values.slice(0, 2500)), agent("b", values.slice(2500))]);
    const sorted = [...values].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const positions = Array.from(circle.hi, (h, i) => (BigInt(h) << 32n) | BigInt(circle.lo[i]));
    expect(positions).toEqual(sorted);
    for (let i = 0; i < positions.length; i += 97) {
      expect(circle.owners[i]).toBe(values.indexOf(positions[i]) < 2500 ? 0 : 1);
    }
  });

  it("throws an id conflict when two agents share a replica position", () => {
    let caught: unknown;
    try {
      Circle.build([agent("x", [1n, 42n]), agent("y", [7n, 42n])]);
    } catch (error) {
      caught = error;
    }
    expect(isUbiError(caught, ErrorCode.IdConflict)).toBe(true);
    // The agent listed first is named first, whichever run the merge took the position from.
    expect((caught as Error).message).toMatch(/^agent "x" collides with agent "y"/);
  });

  it("sorts an agent's replicas that differ only in their low words", () => {
    const circle = Circle.build([agent("a", [0x1_0000_0005n, 0x1_0000_0003n, 0x2_0000_0000n])]);
    const positions = Array.from(circle.hi, (h, i) => (BigInt(h) << 32n) | BigInt(circle.lo[i]));
    expect(positions).toEqual([0x1_0000_0003n, 0x1_0000_0005n, 0x2_0000_0000n]);
  });

  it("sorts an agent's replicas that share their high word and descend in their low words", () => {
    const circle = Circle.build([agent("a", [0x1_0000_0005n, 0x1_0000_0003n])]);
    const positions = Array.from(circle.hi, (h, i) => (BigInt(h) << 32n) | BigInt(circle.lo[i]));
    expect(positions).toEqual([0x1_0000_0003n, 0x1_0000_0005n]);
    expect(circle.replicaAtOrAfter(1, 4)).toBe(1);
  });

  it("builds an empty circle from no agents", () => {
    expect(Circle.build([]).size).toBe(0);
  });

  it("tolerates an agent repeating its own position", () => {
    const circle = Circle.build([agent("x", [42n, 42n]), agent("y", [7n])]);
    expect(circle.size).toBe(3);
  });
});

describe("findCollision", () => {
  const words = (values: number[]) => Uint32Array.from(values);

  it("names the two agents of the first shared position", () => {
    expect(findCollision(words([0, 0, 1]), words([3, 3, 9]), words([0, 1, 2]))).toEqual([0, 1]);
    // A run of three where only the last differs is still caught.
    expect(findCollision(words([5, 5, 5]), words([1, 1, 1]), words([2, 2, 4]))).toEqual([2, 4]);
  });

  it("ignores equal high words with different low words and an agent's own repeats", () => {
    expect(findCollision(words([0, 0, 0]), words([1, 2, 3]), words([0, 1, 2]))).toBeUndefined();
    expect(findCollision(words([4, 4]), words([8, 8]), words([1, 1]))).toBeUndefined();
    expect(findCollision(words([]), words([]), words([]))).toBeUndefined();
  });
});

describe("replica positions", () => {
  let hasher: Hasher64;
  beforeAll(async () => {
    hasher = await loadHasher64();
  });

  it("are seeded with the xxhash64 words of the id and drawn from MT19937 two words at a time", () => {
    const hash = hasher.hashString("agent-a");
    expect(Array.from(replicaSeed("agent-a", hasher))).toEqual([
      Number(hash >> 32n),
      Number(hash & 0xffff_ffffn),
    ]);
    // Pinned once (mt19937ar init_by_array): a change of generator or draw order breaks these.
    const { hi, lo } = replicaPositions("agent-a", 2, hasher);
    expect(Array.from(hi)).toEqual([570480919, 3892580706]);
    expect(Array.from(lo)).toEqual([3284754691, 387991588]);
  });

  it("are a prefix-stable stream, different for different ids", () => {
    const few = replicaPositions("agent-a", 3, hasher);
    const many = replicaPositions("agent-a", 300, hasher);
    expect(Array.from(many.hi.subarray(0, 3))).toEqual(Array.from(few.hi));
    expect(Array.from(replicaPositions("agent-b", 3, hasher).hi)).not.toEqual(Array.from(few.hi));
  });

  it("sorted, are drawn once per id and count and kept for the 256 most recently used", () => {
    const own: Hasher64 = { ...hasher }; // a hasher of its own: a cache of its own
    const first = sortedReplicaPositions("agent-0", 2, own);
    const drawn = replicaPositions("agent-0", 2, hasher);
    const expected = sortPositions(drawn.hi, drawn.lo);
    expect(Array.from(first.hi)).toEqual(Array.from(expected.hi));
    expect(Array.from(first.lo)).toEqual(Array.from(expected.lo));
    // The same id and count give the very same (shared) arrays.
    expect(sortedReplicaPositions("agent-0", 2, own)).toBe(first);
    // 256 sets kept: agent-0 .. agent-255, agent-0 used again last.
    const second = sortedReplicaPositions("agent-1", 2, own);
    for (let i = 2; i < 256; i++) sortedReplicaPositions(`agent-${i}`, 2, own);
    expect(sortedReplicaPositions("agent-0", 2, own)).toBe(first);
    // A 257th set drops the least recently used one (agent-1), not agent-0.
    sortedReplicaPositions("agent-256", 2, own);
    expect(sortedReplicaPositions("agent-0", 2, own)).toBe(first);
    const again = sortedReplicaPositions("agent-1", 2, own);
    expect(again).not.toBe(second);
    expect(Array.from(again.hi)).toEqual(Array.from(second.hi));
    // Another count is another set.
    expect(sortedReplicaPositions("agent-0", 3, own).hi).toHaveLength(3);
  });
});
