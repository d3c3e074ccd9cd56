import { expect, it } from "vitest";
import { IpHandOvers } from "../../src/cluster/ip-hand-over.js";

it("asks the live previous authority, holds a crashed one's addresses for the grace", () => {
  const alive = new Set(["a"]);
  const handOvers = new IpHandOvers(1_000, (id) => alive.has(id));
  expect(handOvers.takeOverOf("1.1.1.1", 0)).toEqual({ askFrom: undefined, holdUntilMs: -Infinity });
  handOvers.viewChanged(100, (ip) => (ip === "1.1.1.1" ? "a" : "dead"));
  expect(handOvers.takeOverOf("1.1.1.1", 200)).toEqual({ askFrom: "a", holdUntilMs: -Infinity });
  expect(handOvers.takeOverOf("2.2.2.2", 200)).toEqual({ askFrom: undefined, holdUntilMs: 1_100 });
  // Past the grace, the change is no longer a take-over.
  expect(handOvers.takeOverOf("2.2.2.2", 1_100)).toEqual({ askFrom: undefined, holdUntilMs: -Infinity });
});

it("grants nothing at an address handed off until the grace is over", () => {
  const handOvers = new IpHandOvers(1_000, () => true);
  handOvers.handOff("1.1.1.1", 0);
  expect(handOvers.isHandedOff("1.1.1.1", 999)).toBe(true);
  expect(handOvers.isHandedOff("2.2.2.2", 999)).toBe(false);
  expect(handOvers.isHandedOff("1.1.1.1", 1_000)).toBe(false);
});
