import { afterEach, describe, expect, it } from "vitest";
import { formatStats } from "../../src/cli/stats-command.js";
import type { ClusterTotals } from "../../src/cluster/index.js";
import { type AgentStats, INSECURE, PeerClient } from "../../src/transport/index.js";
import {
  readCrawlLogSoFar,
  runUbicrawl,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { STATS } from "../transport/helpers.js";
import { type ClusterAgent, startCluster } from "./cluster-harness.js";

const WEB = { hosts: 20, pages: 800, seed: 9, responseDelayMs: 5 };
const SLOW = ["--max-active-hosts", "4"];

/** Every field of `AgentStats`, as documented in `proto/ubicrawl.proto`. */
const STATS_FIELDS = [
  "id",
  "address",
  "capacity",
  "replicas",
  "circleShare",
  "view",
  "hostsOwned",
  "hostsKnown",
  "hostsActive",
  "hostsDone",
  "pagesFetched",
  "bytesFetched",
  "queuedUrls",
  "peers",
  "communicationOverhead",
  "linksToOtherAgents",
  "pagesRecovered",
  "errors",
  "pagesPerSecond",
  "uptimeMs",
  "idle",
  "paused",
  "hostsHeld",
  "heldFor",
  "pagesFetchedThisRun",
  "status",
  "reportedMsAgo",
  "waiting",
  "duplicates",
  "duplicateBytes",
  "digestMessages",
  "revisits",
  "payloadCopies",
  "payloadsUnchecked",
  "busiestIps",
] as const satisfies readonly (keyof AgentStats)[];

let fixture: WebFixture | undefined;
const clients: PeerClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await fixture?.stop();
  fixture = undefined;
});

async function statsOf(client: PeerClient): Promise<AgentStats> {
  const [stats] = (await client.getStats({ cluster: false })).agents;
  if (!stats) throw new Error("no stats");
  return stats;
}

/** Runs `ubicrawl stats <args>` and returns its stdout (it must exit 0). */
async function stats(args: readonly string[]): Promise<string> {
  const result = await runUbicrawl(["stats", ...args]).waitForExit(20_000);
  expect(result.code, `ubicrawl stats ${args.join(" ")}; stderr:\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/**
 * `ubicrawl stats` as a process against agent processes: its report, cluster table and JSON. What the
 * stats say through a crash, a leave and a join is in stats-in-process.test.ts.
 */
describe("ubicrawl stats on a running 2-agent cluster", () => {
  it("prints every documented field, as a report, a cluster table and JSON", async () => {
    fixture = await startWebFixture(WEB);
    const [one, two] = (await startCluster(fixture, 2, SLOW)) as [ClusterAgent, ClusterAgent];
    const c1 = new PeerClient(one.address, { security: INSECURE });
    clients.push(c1);
    // Once agent-1 has fetched pages and received URLs from agent-2, pause it: the cluster stays up
    // (and agent-1's counters stay still) while the command runs.
    await waitFor(
      async () => {
        const current = await statsOf(c1);
        return current.pagesFetched > 0 && current.peers.some((peer) => peer.urlsReceived > 0);
      },
      "agent-1 to crawl and receive URLs",
      30_000,
      20,
    );
    await c1.control({ action: "PAUSE", argument: "" });
    let frozen: AgentStats | undefined;
    await waitFor(
      async () => {
        const before = await statsOf(c1);
        await new Promise((resolve) => setTimeout(resolve, 300));
        frozen = await statsOf(c1);
        return frozen.pagesFetched === before.pagesFetched;
      },
      "agent-1's fetches in flight to finish",
      10_000,
      0,
    );
    const pages = frozen?.pagesFetched ?? -1;

    const [single, cluster, json] = await Promise.all([
      stats(["--agent", one.address, "--insecure"]),
      stats(["--agent", two.address, "--insecure", "--cluster"]),
      stats(["--agent", one.address, "--insecure", "--cluster", "--json"]),
    ]);

    // One agent's report: identity, circle, view, hosts, pages, exchange, errors, rate, uptime, state.
    const address = one.address.replaceAll(".", "\\.");
    expect(single).toMatch(new RegExp(`^agent agent-1 at ${address} \\(paused\\)$`, "m"));
    expect(single).not.toMatch(/^agent agent-2/m);
    expect(single).toMatch(/^ {2}capacity 1, 1600 replicas, \d+\.\d\d% of the circle$/m);
    expect(single).toMatch(/^ {2}view: agent-1=alive\(\d+ms\) agent-2=alive\(\d+ms\)$/m);
    expect(single).toMatch(/^ {2}hosts: \d+ owned, \d+ known, \d+ active, \d+ done$/m);
    expect(single).toMatch(
      new RegExp(
        `^  pages: ${pages} fetched \\(${pages} this run, \\d+\\.\\d/s\\), .+, \\d+ distinct URLs queued, \\d+ recovered from previous owners$`,
        "m",
      ),
    );
    expect(single).toMatch(
      /^ {2}duplicates: \d+ pages stored as revisits, \d+(\.\d)? [KMG]?B not stored again, \d+ digest messages sent; \d+ copies stored by races, \d+ payloads stored unchecked$/m,
    );
    expect(single).toMatch(
      /^ {2}waiting hosts: (none|\d+ \S+ \(next in \d+ s\)(, \d+ \S+ \(next in \d+ s\))*)$/m,
    );
    // The figure is the agent's own crawl log's, read independently: one line per page fetched.
    const logged = (await readCrawlLogSoFar(one.dataDir)).filter((entry) => entry.status > 0);
    expect(logged.length).toBe(pages);
    expect(single).toMatch(
      /^ {2}exchange: overhead \d+\.\d{3} URLs sent per page; .*agent-2 sent \d+ URLs in \d+ batches, received \d+ in \d+/m,
    );
    expect(single).toMatch(
      /^ {2}links to other agents' hosts: [1-9]\d* \(a URL handed away is not sent again\)$/m,
    );
    // The addresses its requests went to lately (each host of this web has its own), and the agent
    // keeping each one's requests at once: either (CI once paused agent-1 after 4 pages, all to one
    // host whose address agent-2 keeps).
    expect(single).toMatch(/^ {2}busiest addresses \(last minute\):$/m);
    expect(single).toMatch(
      /^ {4}127\.\d+\.\d+\.\d+: 1 host \(\S+\), kept by agent-[12]; \d+ in flight, \d+ waiting, /m,
    );
    expect(single).toMatch(/^ {2}errors: \S.*$/m);
    expect(single).toMatch(/^ {2}uptime \d+\.\d s, idle no, paused yes$/m);

    // The cluster report: both agents' blocks, then a table with totals.
    expect(cluster).toMatch(/^agent agent-1 at .* \(paused\)$/m);
    expect(cluster).toMatch(/^agent agent-2 at /m);
    const header = cluster
      .split("\n")
      .find((line) => line.trim().startsWith("agent ") && line.includes("pages/s"));
    expect(header?.trim().split(/\s+/)).toEqual([
      "agent",
      "status",
      "pages",
      "queued",
      "hosts",
      "pages/s",
      "overhead",
      "idle",
    ]);
    const row = (name: string) =>
      cluster
        .split("\n")
        .map((line) => line.trim().split(/\s+/))
        .find((cells) => cells[0] === name);
    expect(row("agent-1")?.slice(1, 3)).toEqual(["alive", String(pages)]);
    expect(row("agent-2")).toHaveLength(8);
    const total = row("TOTAL");
    expect(total?.slice(1, 3)).toEqual(["2/2", "alive"]);
    expect(Number(total?.[3])).toBe(Number(row("agent-1")?.[2]) + Number(row("agent-2")?.[2]));
    expect(total?.at(-1)).toBe("no");

    // JSON: the reply as is, every documented field of both agents.
    const reply = JSON.parse(json) as { agents: AgentStats[]; totals: ClusterTotals };
    expect(reply.agents.map((agent) => agent.id).sort()).toEqual(["agent-1", "agent-2"]);
    expect(reply.totals).toMatchObject({ agents: 2, alive: 2, suspected: 0, left: 0 });
    expect(reply.totals.pagesFetched).toBe(reply.agents.reduce((sum, agent) => sum + agent.pagesFetched, 0));
    for (const agent of reply.agents) {
      expect(Object.keys(agent).sort()).toEqual([...STATS_FIELDS].sort());
      expect(agent.view.map((peer) => peer.status)).toEqual(["ALIVE", "ALIVE"]);
      expect(agent.peers.map((peer) => peer.peerId)).toContain(
        agent.id === "agent-1" ? "agent-2" : "agent-1",
      );
    }
    expect(reply.agents.reduce((sum, agent) => sum + agent.circleShare, 0)).toBeCloseTo(1, 6);
    expect(reply.agents.find((agent) => agent.id === "agent-1")).toMatchObject({
      address: one.address,
      paused: true,
      idle: false,
      pagesFetched: pages,
    });

    await c1.control({ action: "RESUME", argument: "" });
    for (const agent of [one, two]) {
      const result = await agent.process.waitForExit(90_000);
      expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
    }
  });
});

describe("ubicrawl stats' table of the cluster's busiest addresses", () => {
  const [sample] = STATS.busiestIps;
  if (!sample) throw new Error("STATS lists a busy address");
  /** Two live agents listing 127.2.0.1, each with `figures` there, and the table row of the address. */
  const rowOf = (figures: (id: string) => Partial<typeof sample>) => {
    const agents = ["agent-a", "agent-b"].map((id) => ({
      ...STATS,
      id,
      busiestIps: [{ ...sample, ...figures(id) }],
    }));
    const lines = formatStats(agents, true)
      .split("\n")
      .map((line) => line.trim());
    const header = lines.find((line) => line.startsWith("address"));
    const row = lines.find((line) => line.startsWith("127.2.0.1 "));
    return { header, row };
  };

  it("gives the line its own column only, the back-off column the block, delay and refusals", () => {
    const { header, row } = rowOf((id) => ({ keeper: "agent-b", line: id === "agent-b" ? 4 : 1 }));
    expect(header).toMatch(/\bline\s+back-off$/);
    expect(row).toMatch(/\s4\s+blocked 0\.5 s more, 200 ms between starts, 2 refused \(429\/503\)$/);
    expect(row).not.toContain("line");
  });

  it("says each agent keeps the address under --ip-limit agent, and gives hosts that may overlap as a range", () => {
    const { row } = rowOf((id) => ({ keeper: id }));
    // Both count the same three hosts, as under --partition url: 3 at least, 6 at most.
    expect(row?.split(/\s{2,}/).slice(0, 4)).toEqual(["127.2.0.1", "3–6", "agent-a,agent-b", "each agent"]);
  });
});
