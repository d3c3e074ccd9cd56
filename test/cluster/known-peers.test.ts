import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ChosenSeeds,
  chooseSeeds,
  KNOWN_PEERS_FILE,
  KnownPeers,
  MAX_KNOWN_PEERS,
  REMEMBERED_ONLY_WAIT_MS,
  readKnownPeers,
  type SeedProbe,
} from "../../src/cluster/index.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import type { GossipEntry, MemberStatus } from "../../src/failure-detector/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";

/**
 * The agents a data dir remembers (peers.json) and the choice of whom a restart joins through: a
 * restarted agent whose --join agents are down rejoins through any agent it saw alive.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-known-peers-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function member(id: string, status: MemberStatus = "alive", port = 7000): GossipEntry {
  return { id, address: `127.0.0.1:${port}`, capacity: 1, incarnation: 1, status };
}

async function fileIds(): Promise<string[]> {
  const parsed = JSON.parse(await readFile(join(dir, KNOWN_PEERS_FILE), "utf8")) as {
    peers: { id: string }[];
  };
  return parsed.peers.map((peer) => peer.id);
}

describe("readKnownPeers", () => {
  it("reads none from a data dir without the file, and none, saying so, from a damaged one", async () => {
    const { logger, records } = await recordingLogger();
    expect(await readKnownPeers(dir, logger)).toEqual([]);
    expect(records).toEqual([]);
    await writeFile(join(dir, KNOWN_PEERS_FILE), '{"peers": [{"id": "a", "addr');
    expect(await readKnownPeers(dir, logger)).toEqual([]);
    expect(records.map((r) => r.event)).toEqual(["known-peers-damaged"]);
    expect(String(records[0]?.msg)).toContain(join(dir, KNOWN_PEERS_FILE));
  });

  it("keeps the well-formed entries only", async () => {
    const { logger } = await recordingLogger();
    const good = { id: "a", address: "10.0.0.1:7000", lastSeenAlive: "2026-11-28T10:00:00.000Z" };
    await writeFile(
      join(dir, KNOWN_PEERS_FILE),
      JSON.stringify({
        peers: [
          good,
          { id: "", address: "10.0.0.2:7000", lastSeenAlive: good.lastSeenAlive },
          { id: "b", address: "no port", lastSeenAlive: good.lastSeenAlive },
          { id: "c", address: "10.0.0.3:7000", lastSeenAlive: "yesterday" },
          null,
        ],
      }),
    );
    expect(await readKnownPeers(dir, logger)).toEqual([good]);
  });
});

describe("KnownPeers", () => {
  async function recorder(initial = [] as Parameters<typeof KnownPeers.prototype.note>[0]) {
    const { logger, records } = await recordingLogger();
    const peers = new KnownPeers({ dataDir: dir, selfId: "me", initial: [], now: () => 0, logger });
    peers.note(initial);
    await peers.flush();
    return { peers, records, logger };
  }

  it("lists the agents seen alive, newest first, never itself; drops one that left, keeps a suspected one", async () => {
    const { peers } = await recorder([member("me"), member("a", "alive", 7001), member("b", "alive", 7002)]);
    expect(await fileIds()).toEqual(["a", "b"]);
    peers.note([member("a", "suspected", 7001), member("b", "left", 7002), member("c", "alive", 7003)]);
    await peers.flush();
    expect(await fileIds()).toEqual(["c", "a"]);
    // Back on another port: its latest address, at the front.
    peers.note([member("a", "alive", 7101), member("c", "alive", 7003)]);
    await peers.flush();
    expect(peers.list.map((p) => p.address)).toEqual(["127.0.0.1:7101", "127.0.0.1:7003"]);
    expect(await readKnownPeers(dir, (await recordingLogger()).logger)).toEqual(peers.list);
  });

  it(`keeps the ${MAX_KNOWN_PEERS} most recently seen`, async () => {
    const { peers } = await recorder(
      Array.from({ length: MAX_KNOWN_PEERS + 5 }, (_, i) => member(`a${i}`, "alive", 7000 + i)),
    );
    expect(peers.list).toHaveLength(MAX_KNOWN_PEERS);
    expect(await fileIds()).toHaveLength(MAX_KNOWN_PEERS);
  });

  it("writes only when ids or addresses change, one write at a time, the last view winning", async () => {
    const { logger } = await recordingLogger();
    const writes: string[] = [];
    let release: () => void = () => {};
    const peers = new KnownPeers({
      dataDir: dir,
      selfId: "me",
      initial: [],
      now: () => 0,
      logger,
      write: (_path, text) => {
        writes.push(text);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    });
    peers.note([member("a")]);
    peers.note([member("a"), member("b", "alive", 7001)]);
    peers.note([member("a"), member("b", "alive", 7001), member("c", "alive", 7002)]);
    expect(writes).toHaveLength(1);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1] as string).peers.map((p: { id: string }) => p.id)).toEqual(["a", "b", "c"]);
    release();
    await peers.flush();
    peers.note([member("a"), member("b", "alive", 7001), member("c", "alive", 7002)]);
    await peers.flush();
    expect(writes).toHaveLength(2);
  });

  it("reports a failed write once, goes on, and writes at the next change", async () => {
    const { logger, records } = await recordingLogger();
    let fail = true;
    const written: string[] = [];
    const peers = new KnownPeers({
      dataDir: dir,
      selfId: "me",
      initial: [],
      now: () => 0,
      logger,
      write: async (_path, text) => {
        if (fail) throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
        written.push(text);
      },
    });
    peers.note([member("a")]);
    await peers.flush();
    peers.note([member("a"), member("b", "alive", 7001)]);
    await peers.flush();
    expect(records.filter((r) => r.event === "known-peers-not-written")).toHaveLength(1);
    fail = false;
    peers.note([member("b", "alive", 7001), member("a")]);
    await peers.flush();
    expect(written).toHaveLength(1);
  });
});

describe("chooseSeeds", () => {
  const answered: SeedProbe = { ok: true };
  const refused: SeedProbe = { ok: false, reason: "refused", message: "refused for good", retryable: false };
  const silent: SeedProbe = {
    ok: false,
    reason: "connection refused",
    message: "nothing there",
    retryable: true,
  };

  /** Runs a choice on a manual clock, moving time until it settles; the time it took, and its outcome. */
  async function choose(
    named: string[],
    remembered: string[],
    probe: (address: string, atMs: number) => SeedProbe,
    founder = named.length === 0,
  ): Promise<{ result?: ChosenSeeds; error?: unknown; tookMs: number }> {
    const clock = new ManualClock();
    const startMs = clock.now();
    const { logger } = await recordingLogger();
    let outcome: { result?: ChosenSeeds; error?: unknown } | undefined;
    chooseSeeds({
      named,
      remembered,
      founder,
      timeoutMs: 30_000,
      probe: async (address) => probe(address, clock.now() - startMs),
      logger,
      clock,
    }).then(
      (result) => {
        outcome = { result };
      },
      (error: unknown) => {
        outcome = { error };
      },
    );
    while (outcome === undefined) {
      await new Promise((resolve) => setImmediate(resolve));
      if (outcome === undefined) clock.advance(100);
    }
    return { ...outcome, tookMs: clock.now() - startMs };
  }

  it("joins through --join and the remembered agents, whichever answers", async () => {
    const { result } = await choose(["a:1"], ["a:1", "b:1"], (address) =>
      address === "b:1" ? answered : silent,
    );
    expect(result?.seeds).toEqual(["a:1", "b:1"]);
  });

  it("waits through a remembered agent's refusal (a stale hint), but not through a --join address's", async () => {
    const late = await choose(["a:1"], ["b:1"], (address, atMs) =>
      address === "b:1" ? refused : atMs >= 2000 ? answered : silent,
    );
    expect(late.result?.seeds).toEqual(["a:1", "b:1"]);
    expect(late.tookMs).toBeGreaterThanOrEqual(2000);
    const wrong = await choose(["a:1"], ["b:1"], (address) => (address === "a:1" ? refused : silent));
    expect(isUbiError(wrong.error, ErrorCode.PeerUnreachable)).toBe(true);
  });

  it(`without --join, starts alone once no remembered agent answered within ${REMEMBERED_ONLY_WAIT_MS} ms`, async () => {
    const alone = await choose([], ["b:1", "c:1"], () => silent);
    expect(alone.result?.seeds).toEqual([]);
    expect(alone.tookMs).toBeGreaterThanOrEqual(REMEMBERED_ONLY_WAIT_MS);
    expect(alone.tookMs).toBeLessThan(REMEMBERED_ONLY_WAIT_MS + 1000);
    const back = await choose([], ["b:1", "c:1"], (address) => (address === "c:1" ? answered : silent));
    expect(back.result?.seeds).toEqual(["b:1", "c:1"]);
    expect((await choose([], [], () => answered)).result?.seeds).toEqual([]);
  });

  it("as the first --join address, tries the others (refusals as hints) before starting the cluster", async () => {
    // The others of a deployment started at once wait for it: they do not answer yet.
    const fresh = await choose(["b:1", "c:1"], [], (address) => (address === "b:1" ? refused : silent), true);
    expect(fresh.result?.seeds).toEqual([]);
    expect(fresh.tookMs).toBeGreaterThanOrEqual(REMEMBERED_ONLY_WAIT_MS);
    expect(fresh.tookMs).toBeLessThan(REMEMBERED_ONLY_WAIT_MS + 1000);
    // Restarted while the others run: it joins them rather than start a cluster of its own.
    const back = await choose(["b:1", "c:1"], [], (address) => (address === "c:1" ? answered : silent), true);
    expect(back.result?.seeds).toEqual(["b:1", "c:1"]);
  });

  it("as any other --join address, waits for the others past that and never starts alone", async () => {
    const waiting = await choose(["a:1", "c:1"], [], () => silent, false);
    expect(isUbiError(waiting.error, ErrorCode.PeerUnreachable)).toBe(true);
    expect(waiting.tookMs).toBeGreaterThanOrEqual(30_000);
    const late = await choose(["a:1", "c:1"], [], (address, atMs) =>
      address === "a:1" && atMs >= 10_000 ? answered : silent,
    );
    expect(late.result?.seeds).toEqual(["a:1", "c:1"]);
  });
});
