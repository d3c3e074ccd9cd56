import { afterEach, describe, expect, it, vi } from "vitest";
import { HostBlacklist } from "../../src/agent/host-blacklist.js";
import { BLACKLIST_SYNC_INTERVAL_MS, BlacklistGossip } from "../../src/cluster/blacklist-gossip.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { silentLogger } from "../../src/logging/index.js";
import type { BlacklistSync } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";

/** An agent's blacklist as the gossip sees it. */
function blacklistOf(list: HostBlacklist) {
  return {
    entries: () => list.entries(),
    merge: async (entries: readonly Parameters<HostBlacklist["merge"]>[0][number][]) => list.merge(entries),
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
        blacklist: blacklistOf(here),
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

  it("logs what a sync brought, nothing when it brought nothing, and a failure at debug only", async () => {
    const { logger, records } = await recordingLogger({ level: "debug" });
    const here = new HostBlacklist();
    const there = new HostBlacklist();
    there.add("spam.test", { atMs: 10, by: "agent-b" });
    let down = false;
    const gossip = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        blacklist: blacklistOf(here),
        peers: () => ["agent-b"],
        sync: async (_peer, request) => {
          if (down) throw new UbiError(ErrorCode.PeerUnreachable, "agent-b is down");
          there.merge(request.entries);
          return { entries: there.entries() };
        },
        logger,
      },
    );
    await gossip.pushChange();
    there.remove("spam.test", { atMs: 20, by: "agent-b" });
    await gossip.pushChange();
    await gossip.pushChange(); // nothing new
    down = true;
    await gossip.pushChange();
    gossip.stop();
    expect(records.map((record) => [record.level, record.event, record.msg])).toEqual([
      ["info", "blacklist-synced", "blacklist from agent-b: +spam.test"],
      ["info", "blacklist-synced", "blacklist from agent-b: -spam.test"],
      ["debug", "blacklist-sync-failed", "blacklist sync with agent-b failed"],
    ]);
    expect(records[0]).toMatchObject({ peer: "agent-b", added: ["spam.test"], removed: [] });
    expect(records[1]).toMatchObject({ peer: "agent-b", added: [], removed: ["spam.test"] });
    expect(records[2]).toMatchObject({ peer: "agent-b", err: { message: "agent-b is down" } });
  });

  it("names every pattern a sync brought in its log line, additions first", async () => {
    const { logger, records } = await recordingLogger({ level: "info" });
    const here = new HostBlacklist();
    here.add("gone.test", { atMs: 10, by: "agent-a" });
    const there = new HostBlacklist();
    there.add("gone.test", { atMs: 10, by: "agent-a" });
    there.add("ads.test", { atMs: 20, by: "agent-b" });
    there.add("spam.test", { atMs: 20, by: "agent-b" });
    there.remove("gone.test", { atMs: 20, by: "agent-b" });
    const gossip = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        blacklist: blacklistOf(here),
        peers: () => ["agent-b"],
        sync: async (_peer, request) => {
          there.merge(request.entries);
          return { entries: there.entries() };
        },
        logger,
      },
    );
    await gossip.pushChange();
    expect(records.map((record) => record.msg)).toEqual([
      "blacklist from agent-b: +ads.test +spam.test -gone.test",
    ]);
  });

  describe("without an injected pick", () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it("syncs periodically with a live agent drawn at random, any of them", async () => {
      const clock = new ManualClock();
      const calls: string[] = [];
      const gossip = new BlacklistGossip(
        { intervalMs: 1000 },
        {
          clock,
          blacklist: blacklistOf(new HostBlacklist()),
          peers: () => ["agent-b", "agent-c", "agent-d"],
          sync: async (peer) => {
            calls.push(peer);
            return { entries: [] };
          },
          logger: silentLogger,
        },
      );
      await gossip.start();
      calls.length = 0;
      const random = vi.spyOn(Math, "random");
      for (const draw of [0.99, 0, 0.5]) {
        random.mockReturnValueOnce(draw);
        clock.advance(1000);
        await flush();
      }
      gossip.stop();
      expect(calls).toEqual(["agent-d", "agent-b", "agent-c"]);
    });
  });

  it("schedules no further sync once stopped, even when stopped during one", async () => {
    const clock = new ManualClock();
    let release: (() => void) | undefined;
    let syncs = 0;
    const gossip = new BlacklistGossip(
      { intervalMs: 1000 },
      {
        clock,
        blacklist: blacklistOf(new HostBlacklist()),
        peers: () => ["agent-b", "agent-c"],
        sync: async () => {
          syncs++;
          if (syncs > 2) await new Promise<void>((resolve) => (release = resolve));
          return { entries: [] };
        },
        logger: silentLogger,
        pick: (count) => count - 1,
      },
    );
    await gossip.start();
    expect(syncs).toBe(2);
    expect(clock.pendingDelays).toEqual([1000]);
    clock.advance(1000);
    await flush();
    expect(syncs).toBe(3); // in flight
    gossip.stop();
    release?.();
    await flush();
    await flush();
    expect(clock.pendingDelays).toEqual([]);
    clock.advance(10_000);
    await flush();
    expect(syncs).toBe(3);
  });

  it("does not sync periodically while no other agent is alive", async () => {
    const clock = new ManualClock();
    let syncs = 0;
    const gossip = new BlacklistGossip(
      { intervalMs: 1000 },
      {
        clock,
        blacklist: blacklistOf(new HostBlacklist()),
        peers: () => [],
        sync: async () => {
          syncs++;
          return { entries: [] };
        },
        logger: silentLogger,
      },
    );
    await gossip.start();
    clock.advance(1000);
    await flush();
    clock.advance(1000);
    await flush();
    expect(syncs).toBe(0);
    // Still scheduled: an agent that joins later is synced with.
    expect(clock.pendingDelays).toEqual([1000]);
    gossip.stop();
  });

  it("answers a peer's sync with its entries after merging the peer's", async () => {
    const here = new HostBlacklist();
    here.add("a.test", { atMs: 5, by: "agent-a" });
    const gossip = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        blacklist: blacklistOf(here),
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

describe("BlacklistGossip and the URLs kept aside", () => {
  const restored = {
    hosts: 1,
    queuedHere: 7,
    sentToOwners: 2,
    outOfLimits: 0,
    doneMeanwhile: 1,
    beyondCap: 3,
  };

  it("answers a sync with what its merge gave back, and a push sums what every peer gave back", async () => {
    const here = new HostBlacklist();
    here.add("spam.test", { atMs: 10, by: "agent-a" });
    // A peer whose merge takes the pattern off, restoring the URLs it kept aside.
    const peer = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        blacklist: {
          entries: () => [],
          merge: async () => ({ added: [], removed: ["spam.test"], restore: restored }),
        },
        peers: () => [],
        sync: async () => ({ entries: [] }),
        logger: silentLogger,
      },
    );
    const answer = await peer.answer({ entries: here.entries() });
    expect(answer.restored).toEqual(restored);
    // Nothing given back: no `restored` at all (as from an agent that predates it).
    const quiet = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        blacklist: blacklistOf(new HostBlacklist()),
        peers: () => [],
        sync: async () => ({ entries: [] }),
        logger: silentLogger,
      },
    );
    expect((await quiet.answer({ entries: [] })).restored).toBeUndefined();

    here.remove("spam.test", { atMs: 20, by: "agent-a" });
    const gossip = new BlacklistGossip(
      {},
      {
        clock: new ManualClock(),
        blacklist: blacklistOf(here),
        peers: () => ["agent-b", "agent-c", "agent-d"],
        sync: async (name) => {
          if (name === "agent-d") throw new UbiError(ErrorCode.PeerUnreachable, "down");
          return name === "agent-b" ? { entries: [], restored } : { entries: [] };
        },
        logger: silentLogger,
      },
    );
    expect(await gossip.pushChange()).toEqual(restored);
  });
});
