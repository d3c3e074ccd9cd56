import { describe, expect, it } from "vitest";
import type { Hasher64 } from "../../src/hashing/index.js";
import { circleOrder, hasher, SimAgent } from "./hand-over-sim.js";

/**
 * Host hand-overs between agents in one process (real claims, desks, tenures and ownerships; the views,
 * the requests in flight and the wire in the test's hands): the interleavings that lost a host's crawl
 * or gave it to two agents at once in a review of the protocol. A host is held by at most one agent
 * that owns it, and one that has work to do there always gets it.
 */

/** Simulated agents `ids`, all on one wire. */
function agents(h64: Hasher64, ids: readonly string[]): SimAgent[] {
  const net = new Map<string, SimAgent>();
  const all = ids.map((id) => new SimAgent(id, h64, net));
  for (const agent of all) net.set(agent.id, agent);
  return all;
}

/** A host whose owners along the circle, for the agents of `order`, are in that order. */
function hostOrdered(h64: Hasher64, order: readonly string[]): string {
  const probe = new SimAgent(order[0] as string, h64, new Map());
  for (const id of order.slice(1)) probe.addAlive(id);
  for (let i = 0; i < 50_000; i++) {
    const host = `h${i}.test:80`;
    if (circleOrder(probe.ownership, host).join() === order.join()) return host;
  }
  throw new Error(`no host ordered ${order.join(",")}`);
}

/** A request of `agent` to `host` in flight, and the function that ends it. */
function inFlight(agent: SimAgent, host: string): () => void {
  let end!: () => void;
  agent.flights.set(
    host,
    new Promise<void>((resolve) => {
      end = resolve;
    }),
  );
  return () => {
    end();
    agent.flights.delete(host);
  };
}

const holders = (all: readonly SimAgent[], host: string) =>
  all.filter((agent) => agent.tenure.holds(host)).map((agent) => agent.id);

describe("host hand-overs", () => {
  it("a claim granted to an agent that lost the host meanwhile still reaches the new owner", async () => {
    const h64 = await hasher();
    const all = agents(h64, ["a1", "a2", "a3"]);
    const [a1, a2, a3] = all as [SimAgent, SimAgent, SimAgent];
    const host = hostOrdered(h64, ["a3", "a2", "a1"]);
    // a1 crawled the host alone, a request in flight; a2 joins and claims it.
    a1.tenure.take(host);
    const end = inFlight(a1, host);
    a2.addAlive("a1");
    const first = a2.claims.admit(host);
    await new Promise((resolve) => setTimeout(resolve, 30));
    // a3 joins before a1's request ends: a2 is granted a host it no longer owns.
    for (const agent of [a1, a2]) agent.addAlive("a3");
    a3.addAlive("a1");
    a3.addAlive("a2");
    end();
    await first;
    expect(holders(all, host)).toEqual(["a2"]);
    // a2 pushes it to a3 (its view changed), or a3 claims it: a3 ends up crawling it, alone.
    const pushed = a2.desk.pushLost((peer, request) => a2.push(peer, request));
    const claimed = a3.claims.admit(host);
    await pushed;
    expect(await claimed).toBe(0);
    expect(holders(all, host)).toEqual(["a3"]);
  });

  it("goes on along the circle when the agent a host was passed to is gone, instead of waiting for it", async () => {
    const h64 = await hasher();
    const all = agents(h64, ["a1", "a2", "a3"]);
    const [a1, a2, a3] = all as [SimAgent, SimAgent, SimAgent];
    const host = hostOrdered(h64, ["k", "a3", "a1", "a2"]);
    for (const agent of all) for (const other of all) agent.addAlive(other.id);
    // a1 passed the host to k, which has left since (its push failed).
    a1.known.set("k", a1.entry("k", "left"));
    a1.tenure.pass(host, "k");
    expect(await a3.claims.admit(host)).toBe(0);
    expect(holders(all, host)).toEqual(["a3"]);
    expect(a2.tenure.holds(host)).toBe(false);
  });

  it("tells a newcomer whose view lacks the host's owner that it is not its own", async () => {
    const h64 = await hasher();
    const all = agents(h64, ["s", "h", "n"]);
    const [s, h, n] = all as [SimAgent, SimAgent, SimAgent];
    const host = hostOrdered(h64, ["h", "n", "s"]);
    s.addAlive("h");
    h.addAlive("s");
    h.tenure.take(host);
    s.addAlive("n");
    n.addAlive("s");
    // n knows h by gossip only (suspected): n thinks it owns the host; s knows better.
    n.known.set("h", n.entry("h", "suspected"));
    expect(n.ownership.ownerOf(host)).toBe("n");
    const result = await n.claims.admit(host);
    expect(result).not.toBe(0);
    expect(holders(all, host)).toEqual(["h"]);
    expect(n.log.join("\n")).toMatch(/NOT_YOURS\(h\)/);
  });

  it("never lets a push and a claim both pass the same host", async () => {
    const h64 = await hasher();
    const all = agents(h64, ["a", "o", "x"]);
    const [a, o, x] = all as [SimAgent, SimAgent, SimAgent];
    const host = hostOrdered(h64, ["x", "o", "a"]);
    a.addAlive("o");
    o.addAlive("a");
    a.tenure.take(host);
    const end = inFlight(a, host);
    // a's view changed (o joined): it pushes the host to o, waiting for its request in flight.
    const push = a.desk.pushLost((peer, request) => a.push(peer, request));
    // x joins through a and knows o by gossip only: it claims the host from a meanwhile.
    x.addAlive("a");
    x.known.set("o", x.entry("o", "suspected"));
    const claim = x.claims.admit(host);
    await new Promise((resolve) => setTimeout(resolve, 30));
    end();
    await Promise.all([push, claim]);
    expect(holders(all, host).length).toBeLessThanOrEqual(1);
  });

  it("pushes a leaving agent's hosts to their owners once it is gone, those it does not own included", async () => {
    const h64 = await hasher();
    const all = agents(h64, ["o", "l", "p"]);
    const l = all[1] as SimAgent;
    for (const agent of all) for (const other of all) agent.addAlive(other.id);
    const mine = hostOrdered(h64, ["l", "p", "o"]);
    const notMine = hostOrdered(h64, ["o", "l", "p"]);
    l.tenure.take(mine);
    l.tenure.take(notMine);
    const outcome = await l.desk.pushAll((peer, request) => l.push(peer, request));
    expect(outcome).toEqual({ handed: 2, failed: 0 });
    expect(holders(all, mine)).toEqual(["p"]);
    expect(holders(all, notMine)).toEqual(["o"]);
  });

  it("stops claiming when it leaves: what it is granted meanwhile goes to the next claimant", async () => {
    const h64 = await hasher();
    const all = agents(h64, ["a1", "a2", "l"]);
    const [, a2, l] = all as [SimAgent, SimAgent, SimAgent];
    const host = hostOrdered(h64, ["l", "a2", "a1"]);
    for (const agent of all) for (const other of all) agent.addAlive(other.id);
    a2.tenure.take(host);
    const end = inFlight(a2, host);
    const claim = l.claims.admit(host);
    await new Promise((resolve) => setTimeout(resolve, 30));
    // SIGTERM on l: it stops claiming, then announces its leave.
    l.claims.stop();
    for (const agent of all) agent.remove("l", "left");
    end();
    expect(await claim).not.toBe(0);
    expect(l.tenure.holds(host)).toBe(false);
    // a2 owns it again: it takes it back (a1 does not hold it, and a2's pass to l is void).
    expect(await a2.claims.admit(host)).toBe(0);
    expect(holders(all, host)).toEqual(["a2"]);
  });
});
