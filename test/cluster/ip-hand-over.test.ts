import { expect, it } from "vitest";
import type { IpHandOver } from "../../src/cluster/ip-grant.js";
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
  handOvers.handOff("1.1.1.1", "b", 0);
  expect(handOvers.isHandedOff("1.1.1.1", 999)).toBe(true);
  expect(handOvers.isHandedOff("2.2.2.2", 999)).toBe(false);
  expect(handOvers.isHandedOff("1.1.1.1", 1_000)).toBe(false);
});

it("takes what an agent that left handed over, aged since it came, and no wait where it handed nothing", () => {
  const handOvers = new IpHandOvers(1_000, () => false);
  const handOff: IpHandOver = {
    held: new Map([["c", 2]]),
    untilMs: 500,
    blockedForMs: 300,
    spacedForMs: 100,
  };
  handOvers.leftHandingOver("b", new Map([["1.1.1.1", handOff]]), ["a", "b"], 0);
  handOvers.viewChanged(100, () => "b", ["a", "b"]);
  expect(handOvers.takeOverOf("1.1.1.1", 200)).toEqual({
    askFrom: undefined,
    holdUntilMs: -Infinity,
    handedOver: { held: new Map([["c", 2]]), untilMs: 300, blockedForMs: 100, spacedForMs: 0 },
  });
  expect(handOvers.takeOverOf("2.2.2.2", 200)).toEqual({ askFrom: undefined, holdUntilMs: -Infinity });
});

it("grants again at an address handed off to an agent that leaves and hands its addresses back", () => {
  const handOvers = new IpHandOvers(1_000, () => true);
  handOvers.handOff("1.1.1.1", "b", 0);
  handOvers.handOff("2.2.2.2", "c", 0);
  handOvers.leftHandingOver("b", new Map(), ["a", "b"], 100);
  expect(handOvers.isHandedOff("1.1.1.1", 200)).toBe(false);
  expect(handOvers.isHandedOff("2.2.2.2", 200)).toBe(true);
});
