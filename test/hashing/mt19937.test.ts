import { beforeAll, describe, expect, it } from "vitest";
import { Mt19937 } from "../../src/hashing/mt19937.js";
import { replicaPositions } from "../../src/hashing/replicas.js";
import { type Hasher64, loadHasher64 } from "../../src/hashing/xxhash64.js";

describe("Mt19937", () => {
  it("reproduces the reference outputs of mt19937ar.c for init_by_array({0x123, 0x234, 0x345, 0x456})", () => {
    const generator = new Mt19937(Uint32Array.of(0x123, 0x234, 0x345, 0x456));
    const outputs = Array.from({ length: 1000 }, () => generator.next());
    expect(outputs.slice(0, 10)).toEqual([
      1067595299, 955945823, 477289528, 4107218783, 4228976476, 3344332714, 3355579695, 227628506, 810200273,
      2591290167,
    ]);
    expect(outputs.slice(995)).toEqual([2643151863, 3896204135, 2416995901, 1397735321, 3460025646]);
  });

  it("refuses an empty key", () => {
    expect(() => new Mt19937(new Uint32Array(0))).toThrow(
      new RangeError("an MT19937 key needs at least one word"),
    );
  });
});

describe("replicaPositions", () => {
  let hasher: Hasher64;
  beforeAll(async () => {
    hasher = await loadHasher64();
  });

  // Positions drawn by earlier versions (with @stdlib/random-base-mt19937): agents of any version must
  // place their replicas identically, or they would disagree on who owns what.
  it("places replicas exactly where earlier versions did", () => {
    const words = (id: string) => {
      const { hi, lo } = replicaPositions(id, 3, hasher);
      return [Array.from(hi), Array.from(lo)];
    };
    expect(words("agent-1")).toEqual([
      [3281819327, 1124382138, 1762558964],
      [1933300173, 3249968197, 3856557088],
    ]);
    expect(words("a")).toEqual([
      [3232611268, 74095600, 923244345],
      [1722438160, 1385015427, 1861903784],
    ]);
    expect(words("ubicrawl-7")).toEqual([
      [1568530487, 2472726333, 1487885727],
      [4267287384, 1373224455, 861885837],
    ]);
    const many = replicaPositions("agent-2", 1600, hasher);
    expect([many.hi[1599], many.lo[1599]]).toEqual([993098968, 3983078790]);
  });
});
