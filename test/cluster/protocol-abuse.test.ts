import { credentials, Client as GrpcClient, Metadata, status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { TRAP_HOST_NAME } from "../../src/testweb/model.js";
import {
  type AgentStats,
  grpcStatusOf,
  INSECURE,
  MAX_URLS_PER_BATCH,
  PeerClient,
} from "../../src/transport/index.js";
import {
  crawlMetrics,
  readCrawlLogSoFar,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, hostKeyOf, startClusterAgent } from "./cluster-harness.js";

/** A small web whose responses take a little time, so the crawl lasts a few seconds. */
const WEB = { hosts: 30, pages: 1500, seed: 5, responseDelayMs: 8 };
const SLOW = ["--max-active-hosts", "4"];

let fixture: WebFixture | undefined;
const clients: PeerClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await fixture?.stop();
  fixture = undefined;
});

function clientOf(agent: ClusterAgent): PeerClient {
  const client = new PeerClient(agent.address, { security: INSECURE, requestDeadlineMs: 10_000 });
  clients.push(client);
  return client;
}

/** Deterministic pseudo-random bytes (xorshift32), so a failure can be replayed. */
function noise(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let x = seed || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/** Sends raw bytes as the request of `method` and resolves with the status code of the answer. */
function rawCall(address: string, method: string, bytes: Buffer): Promise<status> {
  const client = new GrpcClient(address, credentials.createInsecure());
  return new Promise<status>((resolve) => {
    client.makeUnaryRequest(
      `/ubicrawl.v1.Agent/${method}`,
      (request: Buffer) => request,
      (reply: Buffer) => reply,
      bytes,
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      (error) => {
        client.close();
        resolve(error ? error.code : status.OK);
      },
    );
  });
}

/** The `UbiError` code and gRPC status a failed call rejected with. */
async function failureOf(
  call: Promise<unknown>,
): Promise<{ code: string; grpc: status | undefined; message: string }> {
  try {
    await call;
  } catch (error) {
    if (!isUbiError(error)) throw error;
    return { code: error.code, grpc: grpcStatusOf(error), message: error.message };
  }
  throw new Error("the call succeeded");
}

async function statsOf(client: PeerClient): Promise<AgentStats> {
  const [stats] = (await client.getStats({ cluster: false })).agents;
  if (!stats) throw new Error("no stats");
  return stats;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a 2-agent cluster under protocol abuse", () => {
  it("refuses garbage, oversize, invalid and conflicting messages, obeys control, and still covers the web", async () => {
    fixture = await startWebFixture(WEB);
    const truth = fixture.truth();
    const recorder = fixture.web.recorder;
    // Started without seeds: nothing is crawled until the test has blacklisted the trap host.
    const one = await startClusterAgent(fixture, { id: "agent-1", flags: SLOW });
    const two = await startClusterAgent(fixture, { id: "agent-2", join: [one.address], flags: SLOW });
    const c1 = clientOf(one);
    const c2 = clientOf(two);
    await waitFor(
      async () => {
        const views = await Promise.all([statsOf(c1), statsOf(c2)]);
        return views.every((stats) => stats.view.filter((peer) => peer.status === "ALIVE").length === 2);
      },
      "both agents to see each other alive",
      20_000,
      100,
    );

    // BLACKLIST_ADD (host keys are matched case-insensitively), on both agents before the seeds.
    const trapKey = `${TRAP_HOST_NAME}:${fixture.web.port}`;
    const trapUrls = truth.urls.filter((url) => hostKeyOf(url) === trapKey);
    expect(trapUrls.length).toBeGreaterThan(0);
    for (const client of [c1, c2]) {
      expect(
        await client.control({ action: "BLACKLIST_ADD", argument: trapKey.toUpperCase() }),
      ).toMatchObject({
        ok: true,
      });
    }
    // The seeds, handed to agent-1 as a batch from an outside sender: it forwards agent-2's.
    const seeded = await c1.submitUrls({
      batchId: "tester.1.1",
      fromId: "tester",
      urls: fixture.web.seeds.map((url) => ({ url, depth: 0 })),
    });
    expect(seeded.accepted + seeded.forwarded).toBe(fixture.web.seeds.length);

    // Let agent-1 fetch something and have more queued, then pause it: the crawl cannot end while it
    // is paused, so every check below runs against a live cluster.
    await waitFor(
      async () => {
        const stats = await statsOf(c1);
        return stats.pagesFetched > 0 && stats.queuedUrls > 0;
      },
      "agent-1 to be crawling",
      30_000,
      20,
    );
    expect(await c1.control({ action: "PAUSE", argument: "" })).toMatchObject({ ok: true });
    const pausedStats = await statsOf(c1);
    expect(pausedStats.paused).toBe(true);
    expect(pausedStats.idle).toBe(false);
    // Fetches in flight at the pause finish; then the count must stay still.
    let frozen = -1;
    await waitFor(
      async () => {
        const before = (await statsOf(c1)).pagesFetched;
        await delay(300);
        frozen = (await statsOf(c1)).pagesFetched;
        return frozen === before;
      },
      "agent-1's fetches in flight to finish",
      10_000,
      0,
    );
    const assignment = await assignmentOf(["agent-1", "agent-2"]);
    const servedOfOne = () =>
      [...servedPages(recorder)]
        .filter(([url]) => assignment.ownerOf(hostKeyOf(url)) === "agent-1")
        .reduce((sum, [, count]) => sum + count, 0);
    const servedAtPause = servedOfOne();
    const pausedAtMs = performance.now();

    // (a) raw garbage → INVALID_ARGUMENT, never a crash.
    for (const method of ["SubmitUrls", "Heartbeat"]) {
      const garbage = [Buffer.alloc(0), Buffer.alloc(64, 0xff), noise(7, 1), noise(300, 2), noise(5000, 3)];
      for (const [i, bytes] of garbage.entries()) {
        expect(await rawCall(one.address, method, bytes), `${method} garbage #${i}`).toBe(
          status.INVALID_ARGUMENT,
        );
      }
    }
    // (b) a message over 4 MiB → RESOURCE_EXHAUSTED.
    expect(await rawCall(two.address, "SubmitUrls", noise(4 * 1024 * 1024 + 100, 4))).toBe(
      status.RESOURCE_EXHAUSTED,
    );
    // (c) a well-formed batch with no valid URL → BadMessage.
    const invalid = await failureOf(
      c2.submitUrls({
        batchId: "tester.1.2",
        fromId: "tester",
        urls: [
          "not a url",
          "ftp://example.com/file",
          "mailto:x@example.com",
          "javascript:void(0)",
          "http://",
        ].map((url) => ({ url, depth: 0 })),
      }),
    );
    expect(invalid).toMatchObject({ code: ErrorCode.BadMessage, grpc: status.INVALID_ARGUMENT });
    // (d) one URL over the batch limit → refused.
    const tooMany = await failureOf(
      c2.submitUrls({
        batchId: "tester.1.3",
        fromId: "tester",
        urls: Array.from({ length: MAX_URLS_PER_BATCH + 1 }, (_, i) => ({
          url: `http://nowhere.invalid/${i}`,
          depth: 0,
        })),
      }),
    );
    expect(tooMany).toMatchObject({ code: ErrorCode.BadMessage, grpc: status.INVALID_ARGUMENT });
    // (e) a newcomer claiming a live agent's id from another address → IdConflict.
    for (const [client, claimed] of [
      [c1, "agent-2"],
      [c2, "agent-2"],
      [c2, "agent-1"],
    ] as const) {
      const conflict = await failureOf(
        client.join({
          member: {
            id: claimed,
            address: "127.0.0.1:9",
            capacity: 1,
            incarnation: Date.now() + 1_000_000,
            status: "ALIVE",
            lastHeardMsAgo: 0,
          },
        }),
      );
      expect(conflict, `${claimed} claimed at ${client.address}`).toMatchObject({
        code: ErrorCode.IdConflict,
        grpc: status.ALREADY_EXISTS,
      });
      expect(conflict.message).toMatch(/choose another (agent )?id/);
    }
    // (f) ClaimHosts: the host of a page agent-1 logged is agent-1's, and held there: NOT_YOURS to a
    // claimant that does not own it, naming agent-1, with none of its done set (the claimant records
    // what any answer carries, and a done set leaves its holder only with the host); a host nobody has
    // seen is NOT_HELD.
    const logged = (await readCrawlLogSoFar(one.dataDir)).filter((entry) => entry.status > 0);
    const fetchedUrl = logged.find((entry) => assignment.ownerOf(hostKeyOf(entry.url)) === "agent-1")?.url;
    expect(fetchedUrl).toBeDefined();
    const fetchedHost = hostKeyOf(fetchedUrl as string);
    // agent-2 as agent-1 knows it, with an old incarnation: heard of, it changes nothing there.
    const claimant = {
      id: "agent-2",
      address: two.address,
      capacity: 1,
      incarnation: 0,
      status: "ALIVE" as const,
      lastHeardMsAgo: 0,
    };
    const answer = (
      await c1.claimHosts({
        claimant,
        hosts: [
          { host: fetchedHost, skip: 0 },
          { host: `never-linked.${TRAP_HOST_NAME}:1`, skip: 0 },
        ],
      })
    ).hosts;
    expect(answer.map((host) => [host.host, host.status])).toEqual([
      [fetchedHost, "NOT_YOURS"],
      [`never-linked.${TRAP_HOST_NAME}:1`, "NOT_HELD"],
    ]);
    expect(answer[0]?.holder?.id).toBe("agent-1");
    expect(answer[0]?.done.length).toBe(0);
    expect(answer[0]?.pages).toEqual([]);
    expect(answer[1]?.done.length).toBe(0);
    // (g) the cluster's stats, through either agent: both alive, shares summing to 1.
    for (const client of [c1, c2]) {
      const agents = (await client.getStats({ cluster: true })).agents;
      expect(agents.map((stats) => stats.id).sort()).toEqual(["agent-1", "agent-2"]);
      expect(agents.reduce((sum, stats) => sum + stats.circleShare, 0)).toBeCloseTo(1, 6);
      for (const stats of agents) {
        expect(stats.address).toBe(stats.id === "agent-1" ? one.address : two.address);
        expect(stats.capacity).toBe(1);
        expect(stats.replicas).toBeGreaterThan(0);
        expect(stats.circleShare).toBeGreaterThan(0.2);
        expect(stats.view.map((peer) => [peer.id, peer.address, peer.status])).toEqual([
          ["agent-1", one.address, "ALIVE"],
          ["agent-2", two.address, "ALIVE"],
        ]);
        expect(stats.hostsKnown).toBeGreaterThanOrEqual(stats.hostsOwned);
        for (const key of [
          "pagesFetched",
          "bytesFetched",
          "queuedUrls",
          "hostsActive",
          "hostsDone",
          "pagesRecovered",
          "uptimeMs",
        ] as const) {
          expect(Number.isInteger(stats[key]) && stats[key] >= 0, key).toBe(true);
        }
        expect(Number.isFinite(stats.pagesPerSecond) && Number.isFinite(stats.communicationOverhead)).toBe(
          true,
        );
        expect(typeof stats.errors).toBe("object");
        expect(typeof stats.idle).toBe("boolean");
      }
      const first = agents.find((stats) => stats.id === "agent-1");
      expect(first?.paused).toBe(true);
      expect(first?.pagesFetched).toBe(frozen);
    }

    // (h) still paused after all that: not one more page from agent-1 for at least a second.
    const waited = performance.now() - pausedAtMs;
    if (waited < 1000) await delay(1000 - waited);
    expect((await statsOf(c1)).pagesFetched).toBe(frozen);
    expect(servedOfOne()).toBe(servedAtPause);
    expect(await c1.control({ action: "RESUME", argument: "" })).toMatchObject({ ok: true });
    expect((await statsOf(c1)).paused).toBe(false);
    await waitFor(
      async () => (await statsOf(c1)).pagesFetched > frozen,
      "agent-1 to fetch again",
      20_000,
      50,
    );

    for (const agent of [one, two]) {
      const result = await agent.process.waitForExit(90_000);
      expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
    }
    // Everything but the blacklisted host, exactly once; the blacklisted host never contacted at all.
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(metrics.missing).toEqual(trapUrls);
    expect(metrics.extra).toEqual([]);
    expect(metrics.repeated).toEqual([]);
    expect(metrics.unique).toBe(truth.urls.length - trapUrls.length);
    expect([...recorder.servedCounts().keys()].filter((url) => hostKeyOf(url) === trapKey)).toEqual([]);
  });
});
