import { describe, expect, it } from "vitest";
import { LinkOrigins } from "../../src/agent/link-origins.js";
import { HandOverDelivery } from "../../src/cluster/hand-over-delivery.js";
import type { QueuedUrl } from "../../src/storage/index.js";

/**
 * What must be with other agents before a host's done set leaves agent "self", over fakes: queues by
 * host, the links found on hosts' pages (a real LinkOrigins), owners and keepers by host, and an
 * exchange that records what it is given and answers deliveries as told.
 */
function delivery() {
  const queues = new Map<string, QueuedUrl[]>();
  const owners = new Map<string, string>();
  const keepers = new Map<string, string>();
  const origins = new LinkOrigins();
  const events: string[] = [];
  const delivered = { ok: true };
  /** Agents some URL handed to is not acknowledged by yet (links to their hosts, under the batch policy). */
  const owed = new Set<string>();
  const link = (url: string) => ({ url, depth: 1, host: new URL(url).host, traits: {} });
  const subject = new HandOverDelivery({
    selfId: "self",
    waitMs: 5_000,
    ownership: {
      holdsHost: (host) => (owners.get(host) ?? "self") === "self",
      ownerOfUrl: (_url, host) => owners.get(host) ?? "self",
      ownerOnceGone: (host) => keepers.get(host),
    },
    agent: {
      handOver: async (host, handOff) => {
        // A drain takes a commit's time before it hands off.
        await new Promise((resolve) => setTimeout(resolve, 5));
        for (const entry of queues.get(host) ?? []) handOff(entry);
        queues.delete(host);
      },
      takeLinksFoundOn: (host) => origins.take(host),
      keepLinks: (keeper, links) => origins.keep(keeper, links),
      takeLinksKeptBy: (keeper) => origins.takeKeptBy(keeper),
    },
    exchange: {
      send: (owner, url) => events.push(`send ${url} > ${owner}`),
      entrust: (keeper, url) => events.push(`entrust ${url} > ${keeper}`),
      unsettledPeers: () => [...owed],
      deliver: async (peers) => {
        events.push(`deliver ${[...peers].sort().join(",")}`);
        return delivered.ok;
      },
    },
  });
  return { subject, queues, owners, keepers, origins, events, delivered, owed, link };
}

describe("HandOverDelivery", () => {
  it("hands a host's queue to its new holder and its pages' links to their keepers, then waits for both", async () => {
    // The view's re-examination may not have drained the queue yet: the URLs must be on their way
    // before the delivery is looked at, or the done set would leave with them still here alone.
    const d = delivery();
    d.owners.set("h.test", "new");
    d.queues.set("h.test", [{ url: "http://h.test/p1", depth: 1 }]);
    d.keepers.set("mine.test", "k");
    d.origins.note("h.test", d.link("http://mine.test/a"));
    expect(await d.subject.before(["h.test"], "new")).toBe(true);
    expect(d.events).toEqual([
      "send http://h.test/p1 > new",
      "entrust http://mine.test/a > k",
      "deliver k,new",
    ]);
  });

  it("waits too for the agents owed URLs: links the hosts' pages gave to their hosts may still wait here", async () => {
    // A link to a third agent's host sits in its outbox under the batch policy (up to 30 s): were the
    // done set to leave first, this agent's crash would lose the link with its outbox.
    const d = delivery();
    d.owners.set("h.test", "new");
    d.owed.add("third");
    d.owed.add("self");
    expect(await d.subject.before(["h.test"], "new")).toBe(true);
    expect(d.events).toEqual(["deliver new,third"]);
  });

  it("drains no queue of a host this agent still owns (a leave's push, before it is announced)", async () => {
    const d = delivery();
    d.queues.set("h.test", [{ url: "http://h.test/p1", depth: 1 }]);
    expect(await d.subject.before(["h.test"], "next")).toBe(true);
    expect(d.events).toEqual(["deliver next"]);
    expect(d.queues.get("h.test")).toHaveLength(1);
  });

  it("waits for the keepers of a hand-over not acknowledged in time again at the next try, which takes no link anew", async () => {
    const d = delivery();
    d.owners.set("h.test", "new");
    d.keepers.set("mine.test", "k");
    d.origins.note("h.test", d.link("http://mine.test/a"));
    d.delivered.ok = false;
    expect(await d.subject.before(["h.test"], "new")).toBe(false);
    d.delivered.ok = true;
    expect(await d.subject.before(["h.test"], "new")).toBe(true);
    expect(await d.subject.before(["h.test"], "new")).toBe(true);
    expect(d.events).toEqual([
      "entrust http://mine.test/a > k",
      "deliver k,new",
      "deliver k,new",
      // Acknowledged: nothing more to wait for.
      "deliver new",
    ]);
  });

  it("gives the links a keeper kept to the next keeper when it is gone, those still waiting here only", async () => {
    const d = delivery();
    d.owners.set("h.test", "new");
    d.keepers.set("mine.test", "k");
    d.origins.note("h.test", d.link("http://mine.test/a"));
    d.origins.note("h.test", d.link("http://mine.test/b"));
    await d.subject.before(["h.test"], "new");
    // One is fetched here meanwhile; the keeper leaves, and another would own the host without this agent.
    d.origins.settled("http://mine.test/a");
    d.keepers.set("mine.test", "k2");
    d.events.length = 0;
    d.subject.keeperGone("k");
    expect(d.events).toEqual(["entrust http://mine.test/b > k2", "deliver k2"]);
    // Noted by the new keeper: its going gives them on again.
    d.keepers.set("mine.test", "k3");
    d.events.length = 0;
    d.subject.keeperGone("k2");
    expect(d.events).toEqual(["entrust http://mine.test/b > k3", "deliver k3"]);
    d.events.length = 0;
    d.subject.keeperGone("k");
    d.subject.keeperGone("new");
    expect(d.events).toEqual([]);
  });
});
