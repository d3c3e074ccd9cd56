import { describe, expect, it } from "vitest";
import { HostBlacklist } from "../../src/agent/host-blacklist.js";
import { BLACKLIST_SYNC_INTERVAL_MS, BlacklistGossip } from "../../src/cluster/blacklist-gossip.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { silentLogger } from "../../src/logging/index.js";
import type { BlacklistSync } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** An agent's blacklist as the gossip sees it. */
function agentWith(list: HostBlacklist) {
  return {
    blacklistEntries: () => list.entries(),
    mergeBlacklist: async (entries: readonly Parameters<HostBlacklist["merge"]>[0][number][]) =>
      list.merge(entries),
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("BlacklistGossip", () => {
  it("pulls from every live agent at start, then syncs with one every interval, repairing a lost push", async () => {
    const clock = new ManualClock();
    const here = new HostBlacklist();
    const lists = new Map([
      ["agent-b", new HostBlacklist()],
      ["agent-c", new HostBlacklist()],
    ]);
    lists.get("agent-b")?.add("spam.test", { atMs: 10, by: "agent-b" });
    const calls: string[] = [];
    let unreachable = new Set<string>();
    const gossip = new BlacklistGossip(
      {},
      {
        clock,
        agent: agentWith(here),
        peers: () => [...lists.keys()],
        sync: async (peer, request: BlacklistSync) => {
          calls.push(peer);
          if (unreachable.has(peer)) throw new UbiError(ErrorCode.PeerUnreachable, `${peer} is down`);
          const list = lists.get(peer) as HostBlacklist;
          list.merge(request.entries);
          return { entries: list.entries() };
        },
        logger: silentLogger,
        pick: () => 1,
      },
    );
    await gossip.start();
    expect(calls.sort()).toEqual(["agent-b", "agent-c"]);
    expect(here.toJSON()).toEqual(["spam.test"]);
    // A change made here is pushed to every live agent; agent-c, down for the push, gets it from the
    // periodic sync.
    unreachable = new Set(["agent-c"]);
    here.add("ads.test", { atMs: 20, by: "agent-a" });
    await gossip.pushChange();
    expect(lists.get("agent-b")?.toJSON()).toEqual(["ads.test", "spam.test"]);
    expect(lists.get("agent-c")?.toJSON()).not.toContain("ads.test");
    unreachable = new Set();
    calls.length = 0;
    clock.advance(BLACKLIST_SYNC_INTERVAL_MS);
    await flush();
    expect(calls).toEqual(["agent-c"]);
    expect(lists.get("agent-c")?.toJSON()).toEqual(["ads.test", "spam.test"]);
    gossip.stop();
    clock.advance(10 * BLACKLIST_SYNC_INTERVAL_MS);
    await flush();
    expect(calls).toEqual(["agent-c"]);
  });

  it("answers a peer's sync with its entries after merging the peer's", async () => {
    const here = new HostBlacklist();
    here.add("a.test", { atMs: 5, by: "agent-a" });
    const gossip = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        agent: agentWith(here),
        peers: () => [],
        sync: async () => ({ entries: [] }),
        logger: silentLogger,
      },
    );
    const reply = await gossip.answer({
      entries: [{ pattern: "b.test", blocked: true, changedAtMs: 6, changedBy: "agent-b" }],
    });
    expect(reply.entries.map((entry) => entry.pattern)).toEqual(["a.test", "b.test"]);
  });
});
