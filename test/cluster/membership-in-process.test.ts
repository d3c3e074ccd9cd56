import { appendFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ClusterNode } from "../../src/cluster/index.js";
import { outboxEntries, StateStore } from "../../src/storage/index.js";
import type { TestWebOptions } from "../../src/testweb/index.js";
import { readCrawlLogSoFar, servedPages, traceRequests, type WebFixture, waitFor } from "../agent/harness.js";
import { recordingLogger } from "../support/recording-logger.js";
import { assignmentOf, hostKeyOf } from "./cluster-harness.js";
import {
  inProcessScope,
  type MemoryCluster,
  type MemoryClusterOptions,
  NO_TAKEOVER,
} from "./memory-cluster-harness.js";

/**
 * Membership changes that waste nothing, with real agents in this process on a MemoryNetwork (see
 * memory-cluster-harness.ts): joins, graceful leaves, crashes and restarts on the same data make no page
 * be fetched twice (or, after a crash, only the dead agent's), and the whole web is still crawled.
 * Overlap is counted by the test web itself (its recorder), not by the agents. What only a real process
 * shows (SIGTERM's exit and words, `--join` and the data dir's remembered agents, the CLI's refusal of a
 * taken id) is in membership.test.ts.
 */

/**
 * A web whose responses take a little time, and few hosts at once with a politeness delay: the crawl
 * (about 4 s for three agents) outlasts a leave and a restart.
 */
const WEB: TestWebOptions = { hosts: 20, pages: 500, maxArticlesPerHost: 50, seed: 11, responseDelayMs: 4 };
/**
 * A fetch's time is short (the test web answers in milliseconds): after a crash, an IP authority counts
 * the dead agent's own requests at its addresses for a lease and a fetch's time (ip-crash-reports.ts).
 */
const SLOW: MemoryClusterOptions["agent"] = { maxActiveHosts: 6, delayMs: 30, fetchTimeoutMs: 4_000 };
/** More hosts, more of them crawled at once, so that many are in flight when the view changes. */
const BUSY_WEB: TestWebOptions = {
  hosts: 40,
  pages: 450,
  maxArticlesPerHost: 30,
  seed: 11,
  responseDelayMs: 2,
};
const BUSY_AGENTS: MemoryClusterOptions = {
  agent: { maxActiveHosts: 16, delayMs: 40 },
  cluster: NO_TAKEOVER,
};
const scope = inProcessScope();

/** A cluster of agents `agent-1` … `agent-<count>` on `web`: the others join the first, the last gets the seeds. */
async function startCluster(
  web: WebFixture,
  count: number,
  options: MemoryClusterOptions,
): Promise<{ agents: MemoryCluster; ids: string[] }> {
  const agents = scope.cluster(web, options);
  const ids = Array.from({ length: count }, (_, i) => `agent-${i + 1}`);
  await agents.startAll(ids, web.web.seeds);
  return { agents, ids };
}

/** The fetches (a response, not a failure) in agent `id`'s crawl log so far. */
async function fetchesOf(agents: MemoryCluster, id: string) {
  return (await readCrawlLogSoFar(agents.dataDirOf(id))).filter((entry) => entry.status > 0);
}

/** Who logged each URL fetched more than once, for a failure message. */
async function whoFetched(agents: MemoryCluster, ids: readonly string[], urls: readonly string[]) {
  const lines: string[] = [];
  for (const id of ids) {
    for (const entry of await readCrawlLogSoFar(agents.dataDirOf(id))) {
      if (urls.includes(entry.url)) lines.push(`${entry.url}: ${id} at ${entry.ts} (${entry.status})`);
    }
  }
  return lines.sort().join("\n");
}

/** Every page of the web fetched, none twice. */
async function expectNoWaste(agents: MemoryCluster, ids: readonly string[]): Promise<void> {
  const metrics = agents.metrics();
  expect(metrics.missing).toEqual([]);
  expect(metrics.repeated, await whoFetched(agents, ids, metrics.repeated.slice(0, 20))).toEqual([]);
  expect(metrics.overlap).toBe(0);
}

/** URLs agent `id` (stopped) has in its outbox for `peer`: handed to it and not re-sent elsewhere. */
async function outboxOf(agents: MemoryCluster, id: string, peer: string): Promise<number> {
  const store = await StateStore.open(join(agents.dataDirOf(id), "state"));
  try {
    let count = 0;
    for await (const _ of outboxEntries(store, peer)) count++;
    return count;
  } finally {
    await store.close();
  }
}

describe("membership changes", () => {
  it("one agent, then three joining half a second apart early in the crawl: nothing fetched twice", async () => {
    const web = await scope.web(BUSY_WEB);
    const agents = scope.cluster(web, BUSY_AGENTS);
    const ids = ["agent-1", "agent-2", "agent-3", "agent-4"];
    await agents.start("agent-1", { seeds: web.web.seeds });
    await waitFor(() => servedPages(web.web.recorder).size >= 20, "the crawl to start", 10_000);
    // Half a second apart (the real-process test's second, scaled as its membership timing is here).
    for (const id of ids.slice(1)) {
      const started = performance.now();
      await agents.start(id);
      const wait = 500 - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const joinedWithLeft = agents.missing().length;
    await agents.runToEnd(ids);
    await expectNoWaste(agents, ids);
    expect(joinedWithLeft, "pages left when the last agent joined").toBeGreaterThan(0);
    // Host by host, its crawl moved from agent to agent and never back: once another agent fetched a
    // page of it, its earlier crawlers fetched no more there (a host done before its owner changed
    // ends with its earlier crawler).
    const fetches: { host: string; id: string; ts: string }[] = [];
    for (const id of ids) {
      for (const entry of await fetchesOf(agents, id))
        fetches.push({ host: hostKeyOf(entry.url), id, ts: entry.ts });
    }
    fetches.sort((a, b) => a.ts.localeCompare(b.ts));
    const crawlers = new Map<string, string[]>();
    for (const { host, id } of fetches) {
      const order = crawlers.get(host) ?? [];
      if (order.at(-1) !== id) order.push(id);
      crawlers.set(host, order);
    }
    // The agents joined in id order: a later crawler of a host owned it once it had joined.
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
    for (const id of ids.slice(1)) expect((await fetchesOf(agents, id)).length, id).toBeGreaterThan(0);
  });

  it("a newcomer that cannot reach an agent yet takes none of its hosts: nothing fetched twice", async () => {
    // A newcomer's view fills in as the agents it learnt of by gossip answer it; one that has not yet
    // (a loaded machine, a slow link: here a cut one) may hold hosts the newcomer owns. The agents asked
    // name it as the hosts' owner before the newcomer, so the newcomer waits for it, not refetches.
    const web = await scope.web(BUSY_WEB);
    const agents = scope.cluster(web, BUSY_AGENTS);
    const ids = ["agent-1", "agent-2", "agent-3", "agent-4"];
    await agents.startAll(ids.slice(0, 3), web.web.seeds);
    await waitFor(() => servedPages(web.web.recorder).size >= 40, "the crawl to start", 10_000);
    agents.network.partition([agents.addressOf("agent-4")], [agents.addressOf("agent-3")]);
    await agents.start("agent-4");
    const newcomerView = agents.node("agent-4").alive.map((member) => member.id);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    agents.network.heal();
    const joinedWithLeft = agents.missing().length;
    await agents.runToEnd(ids);
    expect(newcomerView, "agent-4 joined without hearing from agent-3").not.toContain("agent-3");
    expect(joinedWithLeft, "pages left when the link healed").toBeGreaterThan(0);
    await expectNoWaste(agents, ids);
    expect((await fetchesOf(agents, "agent-4")).length, "agent-4 crawled").toBeGreaterThan(0);
  });

  it("a graceful leave hands its hosts over, and nothing is refetched, even after it comes back", async () => {
    const web = await scope.web(WEB);
    const recorder = web.web.recorder;
    const truth = web.truth();
    // On virtual time: the leave's and the crawl's end's waits pass in turns of the event loop.
    const { agents, ids } = await startCluster(web, 4, {
      agent: SLOW,
      cluster: NO_TAKEOVER,
      clock: scope.virtualTime().clock,
    });
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 20_000);
    const leaver = "agent-2";
    expect((await fetchesOf(agents, leaver)).length, "the leaver crawled before its leave").toBeGreaterThan(
      0,
    );
    const leftAt = performance.now();
    const outcome = await agents.leave(leaver);
    // Within its leave timeout (the default, 20 s), every host and queued URL handed over: what the
    // agent command reports as "left: N hosts handed over", with no "not in time".
    expect(performance.now() - leftAt).toBeLessThan(20_000 + 2_000);
    expect(outcome.hostsHanded).toBeGreaterThan(0);
    expect(outcome).toMatchObject({ hostsNotHanded: 0, urlsNotHanded: 0 });

    // It comes back on its data while the others are still crawling, and takes its hosts back.
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.6, "60% of the crawl", 20_000);
    expect(agents.missing().length, "pages left when it came back").toBeGreaterThan(0);
    await agents.start(leaver, { join: [agents.addressOf("agent-1")] });
    const nodes = ids.map((id) => agents.node(id));
    await agents.runToEnd(ids);
    await expectNoWaste(agents, ids);
    // Each agent's count of pages goes on across its restart: it equals its crawl log's fetches (both
    // lives for the one that left and came back), and all together the pages the test web served.
    let sum = 0;
    for (const node of nodes) {
      const since = node.agent.stats.pagesFetched;
      expect(since, node.agent.id).toBe((await fetchesOf(agents, node.agent.id)).length);
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

  it("a URL that always fails is tried maxFetchAttempts times in all, though its host changes owner twice", async () => {
    // One host: its home page links /fail, whose connection is dropped before any header (a failure
    // that may pass, so it is retried). The fixture's web is not crawled: only its folder and hosts
    // file are used, with the host added.
    server = createServer((request, response) => {
      if (request.url === "/robots.txt") response.writeHead(404).end();
      else if (request.url === "/")
        response.writeHead(200, { "content-type": "text/html" }).end('<a href="/fail">x</a>');
      else request.socket.destroy();
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const web = await scope.web({ hosts: 5, pages: 50, seed: 3 });
    await appendFile(web.hostsFile, "127.0.0.1 flaky.test\n");
    const failing = `http://flaky.test:${port}/fail`;
    const agents = scope.cluster(web, {
      agent: { maxFetchAttempts: 3, fetchRetryMs: 1500 },
      cluster: NO_TAKEOVER,
    });
    const ids = ["agent-1", "agent-2", "agent-3", "agent-4"];
    await agents.startAll(ids, [`http://flaky.test:${port}/`]);
    const attempts = async () => {
      const found: { id: string; willRetry: boolean; ts: string }[] = [];
      for (const id of ids) {
        for (const entry of await readCrawlLogSoFar(agents.dataDirOf(id))) {
          if (entry.url === failing) found.push({ id, willRetry: entry.willRetry === true, ts: entry.ts });
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
        10_000,
      );
      expect(tried.length, JSON.stringify(tried)).toBe(round);
      const last = tried[round - 1] as { id: string; willRetry: boolean };
      expect(last.willRetry).toBe(true);
      expect(await agents.leave(last.id)).toMatchObject({ hostsNotHanded: 0, urlsNotHanded: 0 });
      left.push(last.id);
    }
    await agents.runToEnd(ids.filter((id) => !left.includes(id)));
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
    const web = await scope.web(WEB);
    const recorder = web.web.recorder;
    const truth = web.truth();
    // No grace: the survivors take the dead agent's hosts as soon as they suspect it. On virtual time:
    // the IP authorities' wait for the dead agent's requests passes in turns of the event loop.
    const { agents, ids } = await startCluster(web, 3, {
      agent: SLOW,
      cluster: { takeoverDelayMs: 0 },
      clock: scope.virtualTime().clock,
    });
    const trace = traceRequests(recorder);
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 20_000);
    const victim = "agent-1";
    await agents.crash(victim);
    // Taken once the victim is stopped: a request it sent before still counts as in flight.
    const crashedAtMs = performance.now();
    expect(agents.missing().length, "pages left at the crash").toBeGreaterThan(0);
    const survivors = ids.filter((id) => id !== victim);
    await agents.runToEnd(survivors);
    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    // Every page served twice was the dead agent's, logged or in flight at the crash: its record of
    // what it fetched went with it.
    const victimPages = new Set((await fetchesOf(agents, victim)).map((entry) => entry.url));
    const owners = await assignmentOf(ids);
    const inFlightAtCrash = new Set(
      trace.requests
        .filter((r) => r.beganAtMs < crashedAtMs && owners.ownerOf(hostKeyOf(r.url)) === victim)
        .map((r) => r.url),
    );
    const notTheVictims = metrics.repeated.filter(
      (url) => !victimPages.has(url) && !inFlightAtCrash.has(url),
    );
    expect(notTheVictims, await whoFetched(agents, ids, notTheVictims.slice(0, 20))).toEqual([]);
  });
});

describe("a restart after another agent died meanwhile", () => {
  it("re-sends the URLs the restarted agent had handed the dead one, so the survivors cover the web", async () => {
    const web = await scope.web(WEB);
    const recorder = web.web.recorder;
    const truth = web.truth();
    const { agents } = await startCluster(web, 3, {
      agent: SLOW,
      cluster: { takeoverDelayMs: 500 },
      clock: scope.virtualTime().clock,
    });
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 20_000);
    // The first goes down; while it is down the second dies for good. Only the third sees the second
    // crash: it re-sends what it had handed the second, but the first's outbox is on the first's disk.
    await agents.crash("agent-1");
    await agents.crash("agent-2");
    expect(await outboxOf(agents, "agent-1", "agent-2")).toBeGreaterThan(0);
    await agents.start("agent-1", { join: [agents.addressOf("agent-3")] });
    await agents.runToEnd(["agent-1", "agent-3"]);
    expect(agents.missing()).toEqual([]);
    // Re-sent: the restarted agent's outbox for the dead one is done (the web alone cannot tell, as
    // the dead agent's hosts are found again from pages of other hosts).
    expect(await outboxOf(agents, "agent-1", "agent-2")).toBe(0);
  });
});

describe("an agent's id", () => {
  it("is taken back by the agent restarted at once on a new address, once the others suspect its earlier life", async () => {
    // On virtual time (test/support/virtual-time.ts): the suspicion, and the crawl's end that waits for
    // twice it, pass in turns of the event loop, not in seconds.
    const SUSPECT_AFTER_MS = 20_000;
    const time = scope.virtualTime();
    const web = await scope.web(WEB);
    const recorder = web.web.recorder;
    const truth = web.truth();
    const { agents, ids } = await startCluster(web, 3, {
      agent: SLOW,
      cluster: { ...NO_TAKEOVER, heartbeatIntervalMs: 100, suspectAfterMs: SUSPECT_AFTER_MS },
      clock: time.clock,
    });
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 20_000);
    const victim = "agent-2";
    const earlier = agents.node(victim).address;
    const viewsBefore = agents.views().join("; ");
    // About real time from the crash to the join's refusal: a restart "at once", however long the
    // machine takes to stop one agent and open another's store.
    time.pace(1);
    const crashedAtMs = time.elapsedMs;
    await agents.crash(victim);
    // Restarted on another address: the others still take its earlier life for alive. Its start ends
    // once it joined, after they suspect that earlier life.
    const { logger, records } = await recordingLogger({ level: "info" });
    const restarted = agents.start(victim, { address: `${victim}.memory:7001`, deps: { logger } });
    // Its join was refused while they did, and it waits for them to suspect that earlier life.
    await waitFor(
      () => records.some((record) => record.event === "id-conflict-wait"),
      () =>
        `views before the crash: ${viewsBefore}; the restart said ${records.map((record) => record.event).join(", ")}`,
      20_000,
    );
    const refusedAfterMs = time.elapsedMs - crashedAtMs;
    time.pace();
    expect(records.find((record) => record.event === "id-conflict-wait")?.msg).toMatch(
      /is already used by a live agent at .*: if that is an earlier life of this agent, the others will suspect it/,
    );
    expect(refusedAfterMs, "virtual ms from the crash to the refusal").toBeLessThan(SUSPECT_AFTER_MS);
    const back: ClusterNode = await restarted;
    expect(back.address).not.toBe(earlier);
    await waitFor(
      () =>
        ids.every(
          (id) => agents.node(id).alive.find((member) => member.id === victim)?.address === back.address,
        ),
      () => `every view with the new life: ${agents.views().join("; ")}`,
      20_000,
    );
    // The crawl ends once no suspicion younger than twice the suspicion timeout stands (crawl-end.ts).
    await agents.runToEnd(ids, 60_000);
    expect(agents.missing()).toEqual([]);
  }, 150_000);
});
