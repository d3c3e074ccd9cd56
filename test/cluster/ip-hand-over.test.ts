import { describe, expect, it } from "vitest";
import type { IpHandOver } from "../../src/cluster/ip-grant.js";
import { IpHandOvers, previousAuthorityOf } from "../../src/cluster/ip-hand-over.js";
import { Assignment } from "../../src/hashing/index.js";

it("asks the live previous authority, holds a crashed one's addresses for the grace", () => {
  const alive = new Set(["a"]);
  const handOvers = new IpHandOvers(1_000, (id) => alive.has(id));
  expect(handOvers.takeOverOf("1.1.1.1", 0)).toEqual({
    askFrom: undefined,
    askAlso: [],
    holdUntilMs: -Infinity,
  });
  handOvers.viewChanged(100, (ip) => (ip === "1.1.1.1" ? "a" : "dead"));
  expect(handOvers.takeOverOf("1.1.1.1", 200)).toEqual({ askFrom: "a", askAlso: [], holdUntilMs: -Infinity });
  expect(handOvers.takeOverOf("2.2.2.2", 200)).toEqual({
    askFrom: undefined,
    askAlso: [],
    holdUntilMs: 1_100,
  });
  // Past the grace, the change is no longer a take-over.
  expect(handOvers.takeOverOf("2.2.2.2", 1_100)).toEqual({
    askFrom: undefined,
    askAlso: [],
    holdUntilMs: -Infinity,
  });
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
    askAlso: [],
    holdUntilMs: -Infinity,
    handedOver: { held: new Map([["c", 2]]), untilMs: 300, blockedForMs: 100, spacedForMs: 0 },
  });
  expect(handOvers.takeOverOf("2.2.2.2", 200)).toEqual({
    askFrom: undefined,
    askAlso: [],
    holdUntilMs: -Infinity,
  });
});

it("takes a leaver's hand-over though an earlier change of the view made it the address's previous authority", () => {
  // "a" joined learning of the others one by one: its first change named "b" the previous authority of
  // 1.1.1.1 (a view of itself alone); "b" then left handing over from the whole view.
  const alive = new Set(["a", "c"]);
  const handOvers = new IpHandOvers(1_000, (id) => alive.has(id));
  handOvers.viewChanged(0, () => "b", ["a"], ["a", "b", "c"]);
  const handOff: IpHandOver = { held: new Map([["c", 1]]), untilMs: 400, blockedForMs: 0, spacedForMs: 0 };
  handOvers.leftHandingOver("b", new Map([["1.1.1.1", handOff]]), ["a", "b", "c"], 100);
  handOvers.viewChanged(100, () => "b", ["a", "b", "c"], ["a", "c"]);
  // Neither held for the grace nor awaiting a crash's reports; and taken once, not once per change.
  expect(handOvers.takeOverOf("1.1.1.1", 200)).toEqual({
    askFrom: undefined,
    askAlso: [],
    holdUntilMs: -Infinity,
    handedOver: { held: new Map([["c", 1]]), untilMs: 300, blockedForMs: 0, spacedForMs: 0 },
  });
  expect(handOvers.takeOverOf("2.2.2.2", 200)).toEqual({
    askFrom: undefined,
    askAlso: [],
    holdUntilMs: -Infinity,
  });
});

it("does not take a leaver's hand-over for a change that took it out before it handed over: a suspicion, refuted", () => {
  const alive = new Set(["a", "l", "m"]);
  const handOvers = new IpHandOvers(10_000, (id) => alive.has(id));
  handOvers.viewChanged(0, () => "l", ["a", "l", "m"], ["a", "m"]);
  handOvers.viewChanged(100, () => undefined, ["a", "m"], ["a", "l", "m"]);
  // m leaves (a crash, here), then l, handing over from its view of a, l and m: the address went to m.
  alive.delete("m");
  handOvers.viewChanged(200, () => "m", ["a", "l", "m"], ["a", "l"]);
  handOvers.leftHandingOver("l", new Map(), ["a", "l", "m"], 300);
  alive.delete("l");
  handOvers.viewChanged(300, () => "l", ["a", "l"], ["a"]);
  expect(handOvers.takeOverOf("1.1.1.1", 400).holdUntilMs).toBe(10_300);
});

it("grants again at an address handed off to an agent that leaves and hands its addresses back", () => {
  const handOvers = new IpHandOvers(1_000, () => true);
  handOvers.handOff("1.1.1.1", "b", 0);
  handOvers.handOff("2.2.2.2", "c", 0);
  handOvers.leftHandingOver("b", new Map(), ["a", "b"], 100);
  expect(handOvers.isHandedOff("1.1.1.1", 200)).toBe(false);
  expect(handOvers.isHandedOff("2.2.2.2", 200)).toBe(true);
});

describe("previousAuthorityOf", () => {
  const view = (...ids: string[]) => Assignment.load(ids.map((id) => ({ id })));
  const ips = Array.from({ length: 400 }, (_, i) => `127.1.${i >> 8}.${i & 255}`);

  it("names the owner before after a shrink: the agent gone, whose grants the reports account for", async () => {
    const [before, after] = await Promise.all([view("a", "b", "c", "d"), view("a", "b", "c")]);
    const previousOf = previousAuthorityOf("a", before, after);
    const moved = ips.filter((ip) => before.ownerOfRareKey(ip) === "d" && after.ownerOfRareKey(ip) === "a");
    expect(moved.length).toBeGreaterThan(10);
    for (const ip of moved) expect(previousOf(ip)).toBe("d");
    // Its own before as after: nothing to take over.
    for (const ip of ips.filter((ip) => before.ownerOfRareKey(ip) === "a"))
      expect(previousOf(ip)).toBeUndefined();
  });

  it("names the cluster's authority before a join, not the owner in the joining agent's partial view", async () => {
    // d joins a cluster of a, b and c, learning of b first: its view grows from {b, d} to {a, b, c, d}.
    const [partial, after, cluster] = await Promise.all([
      view("b", "d"),
      view("a", "b", "c", "d"),
      view("a", "b", "c"),
    ]);
    const previousOf = previousAuthorityOf("d", partial, after);
    const mine = ips.filter((ip) => after.ownerOfRareKey(ip) === "d");
    const misread = mine.filter((ip) => partial.ownerOfRareKey(ip) !== cluster.ownerOfRareKey(ip));
    expect(misread.length, "addresses the partial view gives to another").toBeGreaterThan(10);
    for (const ip of mine) expect(previousOf(ip)).toBe(cluster.ownerOfRareKey(ip));
    // From a view of itself alone, the same.
    const alone = previousAuthorityOf("d", await view("d"), after);
    for (const ip of mine) expect(alone(ip)).toBe(cluster.ownerOfRareKey(ip));
  });

  it("names the owner gone when the view grew and shrank at once (a crash while it joins)", async () => {
    const [before, after] = await Promise.all([view("b", "d", "e"), view("a", "b", "c", "d")]);
    const previousOf = previousAuthorityOf("d", before, after);
    const fromGone = ips.filter(
      (ip) => before.ownerOfRareKey(ip) === "e" && after.ownerOfRareKey(ip) === "d",
    );
    expect(fromGone.length).toBeGreaterThan(0);
    for (const ip of fromGone) expect(previousOf(ip)).toBe("e");
  });
});
