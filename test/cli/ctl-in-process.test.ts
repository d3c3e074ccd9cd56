import { appendFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { LogRecord } from "../../src/logging/index.js";
import { readCrawlLogSoFar, traceRequests, type WebFixture, waitFor } from "../agent/harness.js";
import { assignmentOf, hostKeyOf } from "../cluster/cluster-harness.js";
import { inProcessScope, type MemoryCluster, OPERATOR } from "../cluster/memory-cluster-harness.js";
import { SMALL_WEB, STEERABLE } from "./ctl-harness.js";
import { crawlEnd, IN_PROCESS_AGENT, memoryCtl, startRecorded } from "./ctl-in-process-harness.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `ubicrawl ctl`'s commands steering real agents, all in this process (see ctl-in-process-harness.ts):
 * the command's own code against agents on a MemoryNetwork, in seconds instead of a minute of
 * processes. The CLI as a process, over gRPC, is in ctl-command.test.ts.
 */
describe("ubicrawl ctl, in process", () => {
  const scope = inProcessScope();
  let cluster: MemoryCluster | undefined;
  let orphan: Server | undefined;

  afterEach(async () => {
    orphan?.closeAllConnections();
    await new Promise((resolve) => (orphan ? orphan.close(resolve) : resolve(undefined)));
    orphan = undefined;
  });

  /**
   * Starts agents `ids` in order on `web` (each joining the first), the last with the web's seeds;
   * `virtual`: on virtual time (test/support/virtual-time.ts), every wait of the agents in turns of the
   * event loop.
   */
  async function startAgents(
    web: WebFixture,
    ids: readonly string[],
    virtual = false,
  ): Promise<Map<string, LogRecord[]>> {
    const agents = scope.cluster(
      web,
      virtual ? { agent: IN_PROCESS_AGENT, clock: scope.virtualTime().clock } : { agent: IN_PROCESS_AGENT },
    );
    cluster = agents;
    const records = new Map<string, LogRecord[]>();
    for (const id of ids) {
      const seeds = id === ids[ids.length - 1] ? web.web.seeds : [];
      records.set(id, await startRecorded(agents, id, { seeds }));
    }
    return records;
  }

  const controls = (records: readonly LogRecord[] | undefined) =>
    (records ?? []).filter((record) => record.event === "control");

  it("reaches every agent through the one named, when the operator can reach no other", async () => {
    const fixture = await scope.web(STEERABLE);
    const ids = ["agent-1", "agent-2", "agent-3"];
    const records = await startAgents(fixture, ids);
    const agents = cluster as MemoryCluster;
    await waitFor(
      () => agents.viewsAre(ids),
      () => `three live agents: ${agents.views().join("; ")}`,
      20_000,
    );
    // The operator reaches agent-1 only: its calls to the others are lost.
    for (const id of ["agent-2", "agent-3"])
      agents.network.setLink(OPERATOR, agents.addressOf(id), { cut: true });
    // A lost call fails at its deadline (through the real test's proxy it was refused at once): 500 ms.
    const alone = await memoryCtl(agents, "agent-2", "--timeout-ms", "500", "pause");
    expect(alone.code, "agent-2 is out of the operator's reach").toBe(1);
    const paused = await memoryCtl(agents, "agent-1", "--cluster", "pause");
    expect(paused.code, paused.stdout).toBe(0);
    for (const id of ids) {
      expect(paused.stdout).toContain(`${id} (${agents.addressOf(id)}): paused`);
      expect(controls(records.get(id))[0]).toMatchObject({ action: "PAUSE", ok: true });
    }
  });

  it("pauses and resumes every agent, and adds a seed no link leads to, fetched by its host's owner", async () => {
    const fixture = await scope.web(SMALL_WEB);
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
    const ids = ["agent-1", "agent-2"];
    const records = await startAgents(fixture, ids, true);
    const agents = cluster as MemoryCluster;
    const { recorder } = fixture.web;
    await waitFor(() => recorder.totalServed > 100, "100 pages served", 30_000);

    const paused = await memoryCtl(agents, "agent-1", "--cluster", "pause");
    expect(paused.code, paused.stdout).toBe(0);
    expect(paused.stdout).toContain(`agent-1 (${agents.addressOf("agent-1")}): paused`);
    expect(paused.stdout).toContain(`agent-2 (${agents.addressOf("agent-2")}): paused`);
    // Each agent keeps an audit record of the command.
    for (const id of ids) {
      expect(controls(records.get(id))[0]).toMatchObject({ level: "info", action: "PAUSE", ok: true });
    }
    await sleep(500); // the requests in flight (5 ms each) end
    const servedWhenPaused = recorder.totalServed;
    // A second, of real time: 20 s of the agents' (virtual) time, their politeness delays many times over.
    await sleep(1000);
    expect(recorder.totalServed, "requests while paused").toBe(servedWhenPaused);

    const resumed = await memoryCtl(agents, "agent-1", "--cluster", "resume");
    expect(resumed.code, resumed.stdout).toBe(0);
    await waitFor(() => recorder.totalServed > servedWhenPaused, "requests again after resume", 10_000);

    const added = await memoryCtl(agents, "agent-1", "add-seeds", orphanUrl);
    expect(added.code, added.stdout).toBe(0);
    const owner = (await assignmentOf(ids)).ownerOf(hostKeyOf(orphanUrl));
    // The agent told says where the seed went: queued there, or sent to its host's owner.
    expect(added.stdout).toMatch(
      owner === "agent-1"
        ? /1 seed: 1 of this agent's hosts, queued here, 0 sent/
        : /1 seed: 0 of this agent's hosts, queued here, 1 sent to the agents that own their hosts/,
    );
    const bad = await memoryCtl(agents, "agent-1", "add-seeds", "no-such-file");
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(
      /^ubicrawl ctl: add-seeds: "no-such-file" is neither a readable file nor a URL/m,
    );
    await waitFor(() => orphanPaths.includes("/alone.html"), "the added seed fetched", 20_000);
    for (const id of ids) {
      const dataDir = agents.dataDirOf(id);
      await waitFor(
        async () =>
          id !== owner ||
          (await readCrawlLogSoFar(dataDir)).some((entry) => entry.url === orphanUrl && entry.status === 200),
        `${owner}'s crawl log to list the added seed`,
        10_000,
      );
      const logged = (await readCrawlLogSoFar(dataDir)).some((entry) => entry.url === orphanUrl);
      expect(logged, `${id} fetched the seed (its owner is ${owner})`).toBe(id === owner);
    }

    expect((await memoryCtl(agents, "agent-1", "add-seeds", "ftp://orphan.ubi.test/")).code).toBe(2);
    expect((await memoryCtl(agents, "agent-1", "reboot")).code).toBe(2);
    expect((await memoryCtl(agents, "agent-1", "pause", "now")).code).toBe(2);
    // The crawl ends (where each agent's process would exit), and the seed was fetched once.
    await crawlEnd(agents, 60_000);
    expect(orphanPaths.filter((path) => path === "/alone.html")).toHaveLength(1);
  });

  it("changes the politeness delay of a running agent, and refuses settings that cannot change", async () => {
    const web = await scope.web(STEERABLE);
    const trace = traceRequests(web.web.recorder);
    await startAgents(web, ["agent-1"]);
    const agents = cluster as MemoryCluster;
    await waitFor(() => web.web.recorder.totalServed > 100, "100 pages served", 30_000);
    const slower = await memoryCtl(agents, "agent-1", "set", "delay-ms=800");
    const returnedAt = performance.now();
    expect(slower.code, slower.stdout).toBe(0);
    expect(slower.stdout).toMatch(/delay-ms is now 800/);
    // Requests to a host that both began after the change, by host: the gaps checked below. Waited for
    // until there are enough of them (a fixed 4 s gave ~20), not for a fixed time.
    const gapsSinceChange = () => {
      const byHost = new Map<string, number[]>();
      for (const request of trace.requests) {
        if (request.beganAtMs < returnedAt) continue;
        const list = byHost.get(request.host) ?? [];
        list.push(request.beganAtMs);
        byHost.set(request.host, list);
      }
      return [...byHost].flatMap(([host, starts]) =>
        starts.slice(2).map((start, i) => ({ host, gap: start - (starts[i + 1] as number) })),
      );
    };
    await waitFor(() => gapsSinceChange().length > 10, "more than 10 gaps after the change", 20_000, 100);
    const refused = await memoryCtl(agents, "agent-1", "set", "fetch-timeout-ms=10");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/cannot change at runtime: only delay-ms, max-active-hosts/);
    const outOfRange = await memoryCtl(agents, "agent-1", "set", "max-active-hosts=0");
    expect(outOfRange.code).toBe(1);
    expect(outOfRange.stdout).toMatch(/max-active-hosts must be an integer from 1/);
    expect((await memoryCtl(agents, "agent-1", "set", "delay-ms")).code).toBe(2);
    const notANumber = await memoryCtl(agents, "agent-1", "set", "delay-ms=1.5");
    expect(notANumber.code).toBe(2);
    expect(notANumber.stdout).toContain('the value must be a whole number of 0 or more, got "1.5"');
    trace.stop();
    // Requests to a host that both began after the change are 800 ms apart at least (after the first
    // one, which may have been waiting out the old delay). Measured start to start: the agent starts a
    // request 800 ms after it has the previous answer, which the server sent after it began that
    // request, so the gap cannot be shorter, however loaded the machine (the agent's clock is read in
    // whole ms; 795 leaves that and the two clocks' drift). The end of a request, as the server records
    // it, can come after the agent had the answer on a loaded machine: end to start once measured 781.
    const gaps = gapsSinceChange();
    for (const { host, gap } of gaps) {
      expect(gap, `${host}: a request ${gap} ms after the one before began`).toBeGreaterThan(795);
    }
    expect(gaps.length).toBeGreaterThan(10);
  });

  it("makes an agent leave mid-crawl: it stops, and the crawl ends complete with no page fetched twice", async () => {
    const web = await scope.web(SMALL_WEB);
    await startAgents(web, ["agent-1", "agent-2", "agent-3"], true);
    const agents = cluster as MemoryCluster;
    // A quarter into the crawl, as in the real-process test (500 of ~1,800 pages).
    await waitFor(() => web.web.recorder.totalServed > 250, "250 pages served", 30_000);
    const left = await memoryCtl(agents, "agent-2", "leave");
    expect(left.code, left.stdout).toBe(0);
    expect(left.stdout).toMatch(/leaving/);
    // Its leave done, the agent stops (the agent command's process exits then: ctl-command.test.ts).
    await waitFor(() => !agents.nodes.has("agent-2"), "agent-2 to stop after its leave", 60_000);
    await crawlEnd(agents, 60_000);
    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
    expect(metrics.overlap).toBe(0);
  });

  it("refuses add-seeds with --cluster, asking no agent: the agent named already routes each seed to its owner", async () => {
    const fixture = await scope.web(SMALL_WEB);
    const records = await startAgents(fixture, ["agent-1"]);
    const agents = cluster as MemoryCluster;
    const seed = fixture.truth().urls[0] as string;
    const refused = await memoryCtl(agents, "agent-1", "--cluster", "add-seeds", seed);
    expect(refused.code, refused.stdout).toBe(2);
    expect(refused.stdout).toContain(
      "add-seeds takes no --cluster: the agent named sends each seed to its host's owner, so seeds given to any one agent reach every owner; drop --cluster [UBI_ERR_INVALID_ARGUMENT]",
    );
    // Without --cluster the same seed is taken (already seen here: the crawl started from it).
    const taken = await memoryCtl(agents, "agent-1", "add-seeds", seed);
    expect(taken.code, taken.stdout).toBe(0);
    // Every record is in already: a command sent is logged before it is answered (the real-process
    // test waited for the agent's exit to read its whole standard error).
    expect(controls(records.get("agent-1")).map((record) => record.action)).toEqual(["ADD_SEEDS"]);
  });
});
