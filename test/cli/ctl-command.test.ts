import { appendFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  logEvent,
  logRecords,
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
  hostKeyOf,
  startCluster,
  startClusterAgent,
} from "../cluster/cluster-harness.js";
import { AGENT_FLAGS, ctl, STEERABLE } from "./ctl-harness.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * STEERABLE with no host over `articles` articles: its crawl lasts about as long as its biggest host
 * takes at 10 requests a second (~1.3 × `articles` URLs), instead of ~40 s for STEERABLE's 384. For the
 * tests that wait for the crawl's end: each gets a crawl three times as long as it takes to steer it on
 * a loaded machine.
 */
const capped = (articles: number) => ({ ...STEERABLE, maxArticlesPerHost: articles }) as const;

describe("ubicrawl ctl", () => {
  let fixture: WebFixture | undefined;
  let orphan: Server | undefined;

  afterEach(async () => {
    await fixture?.stop();
    orphan?.closeAllConnections();
    await new Promise((resolve) => (orphan ? orphan.close(resolve) : resolve(undefined)));
    fixture = undefined;
    orphan = undefined;
  });

  it("reaches every agent through the one named, when the operator can reach no other", async () => {
    fixture = await startWebFixture(STEERABLE);
    const current = fixture;
    const first = await startClusterAgent(current, { id: "agent-1", flags: AGENT_FLAGS });
    const others = await Promise.all(
      [2, 3].map((n) =>
        startClusterAgent(current, {
          id: `agent-${n}`,
          join: [first.address],
          listen: `127.0.0.${n}:0`,
          flags: AGENT_FLAGS,
        }),
      ),
    );
    const agents = [first, ...others];
    await waitFor(
      async () => {
        const { agents: seen } = await new Promise<{ agents: { status: string }[] }>((resolve, reject) => {
          runUbicrawl(["stats", "--agent", first.address, "--insecure", "--cluster", "--json"])
            .waitForExit(20_000)
            .then((result) => resolve(JSON.parse(result.stdout)), reject);
        });
        return seen.filter((agent) => agent.status === "ALIVE").length === 3;
      },
      "three live agents",
      20_000,
    );
    // The operator's gRPC goes through a proxy that answers nothing, but to agent-1 (127.0.0.1).
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const deadPort = (dead.address() as AddressInfo).port;
    await new Promise((resolve) => dead.close(resolve));
    const env = { grpc_proxy: `http://127.0.0.1:${deadPort}`, no_grpc_proxy: "127.0.0.1" };
    const alone = await runUbicrawl(["ctl", "--agent", others[0]?.address ?? "", "--insecure", "pause"], {
      env,
    }).waitForExit(30_000);
    expect(alone.code, "agent-2 is out of the operator's reach").toBe(1);
    const paused = await runUbicrawl(["ctl", "--agent", first.address, "--insecure", "--cluster", "pause"], {
      env,
    }).waitForExit(30_000);
    expect(paused.code, paused.stdout + paused.stderr).toBe(0);
    for (const agent of agents) {
      expect(paused.stdout).toContain(`${agent.id} (${agent.address}): paused`);
      expect(logEvent(agent.process.stderr(), "control")).toMatchObject({ action: "PAUSE", ok: true });
    }
    for (const agent of agents) agent.process.kill("SIGKILL");
  });

  it("pauses and resumes every agent, and adds a seed no link leads to, fetched by its host's owner", async () => {
    // Its added seed is fetched after ~6 s of crawling (~9 s on a loaded machine): a ~30 s crawl.
    fixture = await startWebFixture(capped(200));
    // A host of its own that no page of the test web links to.
    const orphanPaths: string[] = [];
    orphan = createServer((request, response) => {
      orphanPaths.push(request.url ?? "");
      if (request.url === "/robots.txt") response.writeHead(404).end();
      else response.writeHead(200, { "content-type": "text/html" }).end("<html><body>orphan</body></html>");
    });
    await new Promise<void>((resolve) => orphan?.listen(0, "127.0.0.1", resolve));
    const orphanUrl = `http://orphan.ubi.test:${(orphan.address() as AddressInfo).port}/alone.html`;
    await appendFile(fixture.hostsFile, "127.0.0.1 orphan.ubi.test\n");
    const agents = await startCluster(fixture, 2, AGENT_FLAGS);
    const [first] = agents as [ClusterAgent];
    const { recorder } = fixture.web;
    await waitFor(() => recorder.totalServed > 100, "100 pages served", 30_000);

    const paused = await ctl(first, "--cluster", "pause");
    expect(paused.code, paused.stdout).toBe(0);
    expect(paused.stdout).toMatch(/agent-1 \(127\.0\.0\.1:\d+\): paused/);
    expect(paused.stdout).toMatch(/agent-2 \(127\.0\.0\.1:\d+\): paused/);
    // Each agent keeps an audit record of the command.
    for (const agent of agents) {
      expect(logEvent(agent.process.stderr(), "control")).toMatchObject({
        level: "info",
        action: "PAUSE",
        ok: true,
      });
    }
    await sleep(500); // the requests in flight (5 ms each) end
    const servedWhenPaused = recorder.totalServed;
    await sleep(3000);
    expect(recorder.totalServed, "requests while paused").toBe(servedWhenPaused);

    const resumed = await ctl(first, "--cluster", "resume");
    expect(resumed.code, resumed.stdout).toBe(0);
    await waitFor(() => recorder.totalServed > servedWhenPaused, "requests again after resume", 10_000);

    const added = await ctl(first, "add-seeds", orphanUrl);
    expect(added.code, added.stdout).toBe(0);
    const owner = (await assignmentOf(agents.map((agent) => agent.id))).ownerOf(hostKeyOf(orphanUrl));
    // The agent told says where the seed went: queued there, or sent to its host's owner.
    expect(added.stdout).toMatch(
      owner === first.id
        ? /1 seed: 1 of this agent's hosts, queued here, 0 sent/
        : /1 seed: 0 of this agent's hosts, queued here, 1 sent to the agents that own their hosts/,
    );
    const bad = await ctl(first, "add-seeds", "no-such-file");
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(
      /^ubicrawl ctl: add-seeds: "no-such-file" is neither a readable file nor a URL/m,
    );
    await waitFor(() => orphanPaths.includes("/alone.html"), "the added seed fetched", 20_000);
    for (const agent of agents) {
      await waitFor(
        async () =>
          agent.id !== owner ||
          (await readCrawlLogSoFar(agent.dataDir)).some(
            (entry) => entry.url === orphanUrl && entry.status === 200,
          ),
        `${owner}'s crawl log to list the added seed`,
        10_000,
      );
      const logged = (await readCrawlLogSoFar(agent.dataDir)).some((entry) => entry.url === orphanUrl);
      expect(logged, `${agent.id} fetched the seed (its owner is ${owner})`).toBe(agent.id === owner);
    }

    expect((await ctl(first, "add-seeds", "ftp://orphan.ubi.test/")).code).toBe(2);
    expect((await ctl(first, "reboot")).code).toBe(2);
    expect((await ctl(first, "pause", "now")).code).toBe(2);
    for (const agent of agents) expect((await agent.process.waitForExit(90_000)).code).toBe(0);
    expect(orphanPaths.filter((path) => path === "/alone.html")).toHaveLength(1);
  }, 180_000);

  it("changes the politeness delay of a running agent, and refuses settings that cannot change", async () => {
    fixture = await startWebFixture(STEERABLE);
    const trace = traceRequests(fixture.web.recorder);
    const [agent] = (await startCluster(fixture, 1, AGENT_FLAGS)) as [ClusterAgent];
    await waitFor(
      () => fixture !== undefined && fixture.web.recorder.totalServed > 100,
      "100 pages served",
      30_000,
    );
    const slower = await ctl(agent, "set", "delay-ms=800");
    const returnedAt = performance.now();
    expect(slower.code, slower.stdout).toBe(0);
    expect(slower.stdout).toMatch(/delay-ms is now 800/);
    await sleep(4000);
    const refused = await ctl(agent, "set", "fetch-timeout-ms=10");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/cannot change at runtime: only delay-ms, max-active-hosts/);
    const outOfRange = await ctl(agent, "set", "max-active-hosts=0");
    expect(outOfRange.code).toBe(1);
    expect(outOfRange.stdout).toMatch(/max-active-hosts must be an integer from 1/);
    expect((await ctl(agent, "set", "delay-ms")).code).toBe(2);
    const notANumber = await ctl(agent, "set", "delay-ms=1.5");
    expect(notANumber.code).toBe(2);
    expect(notANumber.stdout).toContain('the value must be a whole number of 0 or more, got "1.5"');
    // Requests to a host that both began after the change are 800 ms apart at least (after the first
    // one, which may have been waiting out the old delay).
    const byHost = new Map<string, number[][]>();
    for (const request of trace.requests) {
      if (request.beganAtMs < returnedAt || request.endedAtMs === undefined) continue;
      const list = byHost.get(request.host) ?? [];
      list.push([request.beganAtMs, request.endedAtMs]);
      byHost.set(request.host, list);
    }
    let gaps = 0;
    for (const [host, requests] of byHost) {
      for (let i = 2; i < requests.length; i++) {
        const gap = (requests[i] as number[])[0] as number;
        const previousEnd = (requests[i - 1] as number[])[1] as number;
        expect(
          gap - previousEnd,
          `${host}: a request ${gap - previousEnd} ms after the one before`,
        ).toBeGreaterThan(790);
        gaps++;
      }
    }
    expect(gaps).toBeGreaterThan(10);
    trace.stop();
  }, 120_000);

  it("makes an agent leave mid-crawl: it exits 0, and the crawl ends complete with no page fetched twice", async () => {
    // It leaves ~5 s into a ~22 s crawl.
    fixture = await startWebFixture(capped(150));
    const agents = await startCluster(fixture, 3, AGENT_FLAGS);
    const [, leaver] = agents as [ClusterAgent, ClusterAgent, ClusterAgent];
    await waitFor(
      () => fixture !== undefined && fixture.web.recorder.totalServed > 500,
      "500 pages served",
      30_000,
    );
    const left = await ctl(leaver, "leave");
    expect(left.code, left.stdout).toBe(0);
    expect(left.stdout).toMatch(/leaving/);
    const exit = await leaver.process.waitForExit(60_000);
    expect(exit.code, exit.stderr).toBe(0);
    for (const agent of agents) expect((await agent.process.waitForExit(90_000)).code).toBe(0);
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), fixture.truth().urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
    expect(metrics.overlap).toBe(0);
  }, 180_000);

  it("refuses add-seeds with --cluster, asking no agent: the agent named already routes each seed to its owner", async () => {
    // Its two commands take ~2-4 s of a ~17 s crawl.
    fixture = await startWebFixture(capped(100));
    const [agent] = (await startCluster(fixture, 1, AGENT_FLAGS)) as [ClusterAgent];
    const seed = fixture.truth().urls[0] as string;
    const refused = await ctl(agent, "--cluster", "add-seeds", seed);
    expect(refused.code, refused.stdout).toBe(2);
    expect(refused.stdout).toContain(
      "add-seeds takes no --cluster: the agent named sends each seed to its host's owner, so seeds given to any one agent reach every owner; drop --cluster [UBI_ERR_INVALID_ARGUMENT]",
    );
    // Without --cluster the same seed is taken (already seen here: the crawl started from it).
    const taken = await ctl(agent, "add-seeds", seed);
    expect(taken.code, taken.stdout).toBe(0);
    expect((await agent.process.waitForExit(90_000)).code).toBe(0);
    const controls = logRecords(agent.process.stderr()).filter((record) => record.event === "control");
    expect(controls.map((record) => record.action)).toEqual(["ADD_SEEDS"]);
  }, 120_000);
});
