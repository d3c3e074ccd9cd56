import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StateStore } from "../../src/storage/index.js";
import {
  crawlMetrics,
  logEvent,
  readCrawlLogSoFar,
  runUbicrawl,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  assignmentOf,
  type ClusterAgent,
  clusterStats,
  FAST_HEARTBEAT,
  hostKeyOf,
  startCluster,
  startClusterAgent,
} from "./cluster-harness.js";

/**
 * Membership changes that waste nothing, with real agent processes over real gRPC: agents joining a
 * running crawl and an agent leaving on SIGTERM make no page be fetched twice, and the whole web is
 * still crawled. Overlap is counted by the test web itself (its recorder), not by the agents.
 */

/** A web whose responses take a little time, so a crawl lasts a few seconds. */
const WEB = { hosts: 40, pages: 2500, seed: 11, responseDelayMs: 4 };
/** Few hosts at once and a small politeness delay: the crawl outlasts the leave and the restart. */
const SLOW = ["--max-active-hosts", "6", "--delay-ms", "30"];
/**
 * For joins: more hosts, more of them crawled at once, so that many are in flight when the view
 * changes (on a web of 4,000 pages, with page recovery by URL, 92 pages were fetched twice). 2,000
 * pages: the crawl lasts ~25 s (not ~50), five times the ~5 s the three joins take.
 */
const JOIN_WEB = { hosts: 100, pages: 2000, seed: 11, responseDelayMs: 2 };
/** 16 hosts at a time, ~45 requests a second each: the crawl outlasts the three joins (at 10 ms one could miss it). */
const JOIN_FLAGS = ["--max-active-hosts", "16", "--delay-ms", "20", "--takeover-delay-ms", "10000"];
/** No agent dies here: one falsely suspected on a loaded machine keeps its hosts for a while. */
const NO_TAKEOVER = ["--takeover-delay-ms", "10000"];
const FLAGS = [...SLOW, ...NO_TAKEOVER];

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

async function waitForExits(agents: readonly ClusterAgent[]): Promise<void> {
  for (const agent of agents) {
    const result = await agent.process.waitForExit(90_000);
    expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
  }
}

/** Who logged each URL fetched more than once, for a failure message. */
async function whoFetched(agents: readonly ClusterAgent[], urls: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const agent of agents) {
    for (const entry of await readCrawlLogSoFar(agent.dataDir)) {
      if (urls.includes(entry.url)) lines.push(`${entry.url}: ${agent.id} at ${entry.ts} (${entry.status})`);
    }
  }
  return lines.sort().join("\n");
}

/** URLs an agent (stopped) has in its outbox for `peer`: handed to it and not re-sent elsewhere. */
async function outboxOf(dataDir: string, peer: string): Promise<number> {
  const store = await StateStore.open(join(dataDir, "state"));
  try {
    let count = 0;
    for await (const _ of store.outboxEntries(peer)) count++;
    return count;
  } finally {
    await store.close();
  }
}

async function expectNoWaste(agents: readonly ClusterAgent[]): Promise<void> {
  const current = fixture as WebFixture;
  const metrics = crawlMetrics(servedPages(current.web.recorder), current.truth().urls);
  expect(metrics.missing).toEqual([]);
  expect(metrics.repeated, await whoFetched(agents, metrics.repeated.slice(0, 20))).toEqual([]);
  expect(metrics.overlap).toBe(0);
}

describe("membership changes", () => {
  it("one agent, then three joining a second apart early in the crawl: nothing fetched twice", async () => {
    fixture = await startWebFixture(JOIN_WEB);
    const recorder = fixture.web.recorder;
    const first = await startClusterAgent(fixture, { id: "agent-1", seeds: true, flags: JOIN_FLAGS });
    const agents = [first];
    await waitFor(() => servedPages(recorder).size >= 20, "the crawl to start", 30_000);
    for (const id of ["agent-2", "agent-3", "agent-4"]) {
      const started = performance.now();
      agents.push(await startClusterAgent(fixture, { id, join: [first.address], flags: JOIN_FLAGS }));
      const wait = 1000 - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await waitForExits(agents);
    await expectNoWaste(agents);
    // Host by host, its crawl moved from agent to agent and never back: once another agent fetched a
    // page of it, its earlier crawlers fetched no more there (a host done before its owner changed
    // ends with its earlier crawler).
    const fetches: { host: string; id: string; ts: string }[] = [];
    for (const agent of agents) {
      for (const entry of await readCrawlLogSoFar(agent.dataDir)) {
        if (entry.status > 0) fetches.push({ host: hostKeyOf(entry.url), id: agent.id, ts: entry.ts });
      }
    }
    fetches.sort((a, b) => a.ts.localeCompare(b.ts));
    const crawlers = new Map<string, string[]>();
    for (const { host, id } of fetches) {
      const order = crawlers.get(host) ?? [];
      if (order.at(-1) !== id) order.push(id);
      crawlers.set(host, order);
    }
    // The agents joined in id order: a later crawler of a host owned it once it had joined.
    const ids = agents.map((agent) => agent.id);
    const views = await Promise.all(ids.map((_, i) => assignmentOf(ids.slice(0, i + 1))));
    let moved = 0;
    for (const [host, order] of crawlers) {
      expect(new Set(order).size, `${host} crawled by ${order.join(" → ")}`).toBe(order.length);
      for (const id of order.slice(1)) {
        expect(views[ids.indexOf(id)]?.ownerOf(host), `${host} crawled by ${order.join(" → ")}`).toBe(id);
      }
      if (order.length > 1) moved++;
    }
    expect(moved, "hosts whose crawl moved mid-way").toBeGreaterThan(0);
    // The newcomers did crawl: the join is real, not a crawl the first agent finished alone.
    for (const agent of agents.slice(1)) {
      const fetched = (await readCrawlLogSoFar(agent.dataDir)).filter((entry) => entry.status > 0);
      expect(fetched.length, agent.id).toBeGreaterThan(0);
    }
  }, 120_000);

  it("SIGTERM is a graceful leave: exit 0, its hosts handed over, nothing refetched, even after it comes back", async () => {
    fixture = await startWebFixture(WEB);
    const recorder = fixture.web.recorder;
    const truth = fixture.truth();
    const agents = await startCluster(fixture, 4, FLAGS);
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
    const leaver = agents[1] as ClusterAgent;
    const before = (await readCrawlLogSoFar(leaver.dataDir)).filter((entry) => entry.status > 0).length;
    expect(before, "the leaver crawled before its leave").toBeGreaterThan(0);
    const signalledAt = performance.now();
    leaver.process.kill("SIGTERM");
    const exit = await leaver.process.waitForExit(30_000);
    expect(exit.code, exit.stderr).toBe(0);
    // Within its leave timeout (the default, 20 s), and saying what it handed over.
    expect(performance.now() - signalledAt).toBeLessThan(20_000 + 2_000);
    expect(exit.stderr).toMatch(/left: [1-9]\d* hosts handed over/);
    expect(exit.stderr).not.toMatch(/not in time/);

    // It comes back on its data while the others are still crawling, and takes its hosts back.
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.6, "60% of the crawl", 60_000);
    const back = await startClusterAgent(fixture, {
      id: leaver.id,
      join: [(agents[0] as ClusterAgent).address],
      flags: FLAGS,
    });
    const all = [agents[0], back, agents[2], agents[3]] as ClusterAgent[];
    await waitForExits(all);
    await expectNoWaste(all);
    // Each agent's count of pages goes on across its restart: it equals its crawl log's fetches (both
    // lives for the one that left and came back), and all together the pages the test web served.
    let sum = 0;
    for (const agent of all) {
      const summary = (await agent.process.waitForExit()).stderr;
      const since = Number(/(\d+) since the crawl began/.exec(summary)?.[1]);
      const logged = (await readCrawlLogSoFar(agent.dataDir)).filter((entry) => entry.status > 0).length;
      expect(since, `${agent.id}: ${summary}`).toBe(logged);
      sum += since;
    }
    const served = [...servedPages(recorder).values()].reduce((total, count) => total + count, 0);
    expect(sum).toBe(served);
  });
});

describe("retries across hand-overs", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it("a URL that always fails is tried --max-fetch-attempts times in all, though its host changes owner twice", async () => {
    // One host: its home page links /fail, whose connection is dropped before any header (a failure
    // that may pass, so it is retried).
    server = createServer((request, response) => {
      if (request.url === "/robots.txt") response.writeHead(404).end();
      else if (request.url === "/")
        response.writeHead(200, { "content-type": "text/html" }).end('<a href="/fail">x</a>');
      else request.socket.destroy();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const dir = await mkdtemp(join(tmpdir(), "ubicrawl-retries-"));
    const hostsFile = join(dir, "hosts");
    const seedsFile = join(dir, "seeds");
    await writeFile(hostsFile, "127.0.0.1 flaky.test\n");
    await writeFile(seedsFile, `http://flaky.test:${port}/\n`);
    const web = { dir, hostsFile, seedsFile, stop: () => rm(dir, { recursive: true, force: true }) };
    fixture = web as unknown as WebFixture;
    const failing = `http://flaky.test:${port}/fail`;
    const flags = ["--max-fetch-attempts", "3", "--fetch-retry-ms", "3000", ...NO_TAKEOVER];
    const agents = await startCluster(fixture, 4, flags);
    const attempts = async () => {
      const found: { id: string; willRetry: boolean; ts: string }[] = [];
      for (const agent of agents) {
        for (const entry of await readCrawlLogSoFar(agent.dataDir)) {
          if (entry.url === failing)
            found.push({ id: agent.id, willRetry: entry.willRetry === true, ts: entry.ts });
        }
      }
      return found.sort((a, b) => a.ts.localeCompare(b.ts));
    };
    // After each of the first two attempts, the agent that made it leaves: its host goes to another.
    const left: string[] = [];
    for (const round of [1, 2]) {
      let tried: { id: string; willRetry: boolean }[] = [];
      await waitFor(
        async () => {
          tried = await attempts();
          return tried.length >= round;
        },
        `attempt ${round}`,
        30_000,
      );
      expect(tried.length, JSON.stringify(tried)).toBe(round);
      const last = tried[round - 1] as { id: string; willRetry: boolean };
      expect(last.willRetry).toBe(true);
      const leaver = agents.find((agent) => agent.id === last.id) as ClusterAgent;
      leaver.process.kill("SIGTERM");
      expect((await leaver.process.waitForExit(30_000)).code).toBe(0);
      left.push(leaver.id);
    }
    await waitForExits(agents.filter((agent) => !left.includes(agent.id)));
    const all = await attempts();
    expect(
      all.map((attempt) => attempt.willRetry),
      JSON.stringify(all),
    ).toEqual([true, true, false]);
    // Three owners: each leave moved the URL, with its attempts, to the next one.
    expect(new Set(all.map((attempt) => attempt.id)).size).toBe(3);
  });
});

describe("a crash", () => {
  it("past the takeover grace, the survivors refetch at most the dead agent's own pages, and cover the web", async () => {
    fixture = await startWebFixture(WEB);
    const recorder = fixture.web.recorder;
    const truth = fixture.truth();
    // No grace: the survivors take the dead agent's hosts as soon as they suspect it.
    const flags = [...SLOW, "--takeover-delay-ms", "0"];
    const agents = await startCluster(fixture, 3, flags);
    const trace = traceRequests(recorder);
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
    const victim = agents[0] as ClusterAgent;
    victim.process.kill("SIGKILL");
    await victim.process.waitForExit(10_000);
    // Taken once the victim is dead: a request it sent as the signal was on its way still counts as in
    // flight (the test web may see it a few ms after kill() was called).
    const killedAtMs = performance.now();
    const survivors = agents.slice(1);
    await waitForExits(survivors);
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    // Every page served twice was the dead agent's, logged or in flight at the kill: its record of what
    // it fetched died with it.
    const victimPages = new Set(
      (await readCrawlLogSoFar(victim.dataDir)).filter((entry) => entry.status > 0).map((entry) => entry.url),
    );
    const owners = await assignmentOf(agents.map((agent) => agent.id));
    const inFlightAtKill = new Set(
      trace.requests
        .filter((r) => r.beganAtMs < killedAtMs && owners.ownerOf(hostKeyOf(r.url)) === victim.id)
        .map((r) => r.url),
    );
    const notTheVictims = metrics.repeated.filter((url) => !victimPages.has(url) && !inFlightAtKill.has(url));
    expect(notTheVictims, await whoFetched(agents, notTheVictims.slice(0, 20))).toEqual([]);
  });
});

describe("a restart after another agent died meanwhile", () => {
  it("re-sends the URLs the restarted agent had handed the dead one, so the survivors cover the web", async () => {
    fixture = await startWebFixture(WEB);
    const recorder = fixture.web.recorder;
    const truth = fixture.truth();
    const flags = [...SLOW, "--takeover-delay-ms", "500"];
    const [first, second, third] = (await startCluster(fixture, 3, flags)) as [
      ClusterAgent,
      ClusterAgent,
      ClusterAgent,
    ];
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
    // The first goes down; while it is down the second dies for good. Only the third sees the second
    // crash: it re-sends what it had handed the second, but the first's outbox is on the first's disk.
    first.process.kill("SIGKILL");
    await first.process.waitForExit(10_000);
    second.process.kill("SIGKILL");
    await second.process.waitForExit(10_000);
    expect(await outboxOf(first.dataDir, second.id)).toBeGreaterThan(0);
    const back = await startClusterAgent(fixture, { id: first.id, join: [third.address], flags });
    await waitForExits([back, third]);
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    // Re-sent: the restarted agent's outbox for the dead one is done (the web alone cannot tell, as
    // the dead agent's hosts are found again from pages of other hosts).
    expect(await outboxOf(first.dataDir, second.id)).toBe(0);
  });
});

describe("a restart whose --join agents are down", () => {
  it("rejoins through the agents its data dir remembers, with or without --join, and the crawl completes", async () => {
    fixture = await startWebFixture(WEB);
    const recorder = fixture.web.recorder;
    const truth = fixture.truth();
    const [first, second, third] = (await startCluster(fixture, 3, FLAGS)) as [
      ClusterAgent,
      ClusterAgent,
      ClusterAgent,
    ];
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
    first.process.kill("SIGKILL");
    second.process.kill("SIGKILL");
    await first.process.waitForExit(10_000);
    await second.process.waitForExit(10_000);
    // The second joined through the first, which is down: it comes back through the third it remembers.
    const secondBack = await startClusterAgent(fixture, {
      id: second.id,
      join: [first.address],
      flags: FLAGS,
    });
    expect(logEvent(secondBack.process.stderr(), "rejoin-remembered")).toMatchObject({
      remembered: expect.arrayContaining([third.address]),
    });
    // The first started the cluster (no --join): back, it joins the agents it remembers, not a cluster of its own.
    const firstBack = await startClusterAgent(fixture, { id: first.id, flags: FLAGS });
    expect(logEvent(firstBack.process.stderr(), "rejoin-remembered")).toBeDefined();
    await waitFor(
      async () => {
        const own = (await clusterStats(third.address)).find((agent) => agent.id === third.id);
        return [first.id, second.id].every(
          (id) => own?.view.find((peer) => peer.id === id)?.status === "ALIVE",
        );
      },
      "the third to see both back",
      20_000,
    );
    await waitForExits([firstBack, secondBack, third]);
    expect(crawlMetrics(servedPages(recorder), truth.urls).missing).toEqual([]);
  });
});

describe("an agent's id", () => {
  it("is taken back by the agent restarted at once on a new port, once the others suspect its earlier life", async () => {
    fixture = await startWebFixture(WEB);
    const recorder = fixture.web.recorder;
    const truth = fixture.truth();
    const agents = await startCluster(fixture, 3, FLAGS);
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
    const victim = agents[1] as ClusterAgent;
    victim.process.kill("SIGKILL");
    await victim.process.waitForExit(10_000);
    // Restarted at once, on another port: the others still take its earlier life for alive.
    const back = await startClusterAgent(fixture, {
      id: victim.id,
      join: [(agents[0] as ClusterAgent).address],
      flags: FLAGS,
    });
    const all = [agents[0], back, agents[2]] as ClusterAgent[];
    await waitForExits(all);
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
  });

  it("of a live agent is refused to another, saying so, once it is clear it is no earlier life", async () => {
    fixture = await startWebFixture({ hosts: 5, pages: 50, seed: 3 });
    // No seeds: it waits for work, alive, while another agent claims its id.
    const first = await startClusterAgent(fixture, { id: "agent-1", flags: FLAGS });
    const twin = runUbicrawl([
      "agent",
      "--id",
      first.id,
      "--data",
      join(fixture.dir, "twin"),
      "--listen",
      "127.0.0.1:0",
      "--join",
      first.address,
      "--insecure",
      ...FAST_HEARTBEAT,
    ]);
    const result = await twin.waitForExit(30_000);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/is already used by a live agent at .*; choose another agent id/);
    expect(logEvent(result.stderr, "failed")).toMatchObject({ level: "fatal", code: "UBI_ERR_ID_CONFLICT" });
    first.process.kill("SIGTERM");
    await first.process.waitForExit(30_000);
  });
});
