import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Assignment, loadHasher64 } from "../../src/hashing/index.js";
import { EXPERIMENT_TIMEOUT_MS, experimentRunner, fetchesByAgent, table } from "./experiment-runs.js";

/**
 * The experiments that run real agents (processes), as a user runs them on a small web. `modes`: the
 * report's files, the paper's invariants (exchange: coverage 1, overlap 0; firewall: overlap 0, nothing
 * sent), and, from the crawl logs kept with --data, what each mode did that the figures do not say by
 * themselves: whose hosts each agent fetched, and fetch counts recounted line by line. `batching`: the
 * agents take the batch size (one message a URL at 1). The faults experiment, the longest, is in
 * fault-experiment.test.ts, a file of its own so that it runs beside these. `scaling`: the simulation
 * of the real crawls sends the URLs they sent and covers what they covered, and projects to more agents
 * (its checks are of counts and of the simulation's own clock, not of real time, so it runs here). The
 * bandwidth and politeness experiments, which measure rates and times, are in timed-experiments.test.ts;
 * the refusals of bad flags, in this process, in test/commands/experiment.test.ts.
 */

const experiments = experimentRunner();
const runExperiment = experiments.run;

describe("ubicrawl experiment modes", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("runs the three modes with real agents, and each mode does what the paper says", async () => {
    const data = join(experiments.dir, "data");
    const { result, out, rows } = await runExperiment(
      "modes",
      // 491 URLs on 20 hosts (the smallest web the experiment takes): each of 3 agents still owns hosts
      // that link to the others', so the firewall drops links, the cross-over refetches and the exchange
      // sends (181 URLs sent, 549 links dropped, overlap 1.9 when measured).
      ["--agents", "1,3", "--hosts", "20", "--pages", "200", "--seeds-per-agent", "2", "--data", data],
      "report",
    );
    expect(result.stdout).toMatch(/^mode\s+agents\s+coverage\s+overlap\s+communication_overhead\s+quality/m);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (6 files`);
    const report = await readFile(join(out, "report.md"), "utf8");
    for (const plot of ["coverage", "overlap", "overhead", "quality"]) {
      expect(report).toContain(`${plot}-vs-agents.svg`);
      expect(await readFile(join(out, `${plot}-vs-agents.svg`), "utf8")).toMatch(/^<svg/);
    }

    const row = (mode: string, agents: number) => {
      const found = rows.find((r) => r.mode === mode && r.agents === String(agents));
      if (!found) throw new Error(`no row for ${mode} at ${agents} agents`);
      return found;
    };
    expect(rows).toHaveLength(6);
    // One agent: one crawl, reported under every mode.
    expect(
      new Set(["firewall", "cross", "exchange"].map((m) => JSON.stringify({ ...row(m, 1), mode: "" }))).size,
    ).toBe(1);
    expect(Number(row("exchange", 1).coverage)).toBe(1);
    // Exchange: complete, no page twice, links sent between agents.
    expect(Number(row("exchange", 3).coverage)).toBe(1);
    expect(Number(row("exchange", 3).overlap)).toBe(0);
    expect(Number(row("exchange", 3).urls_sent)).toBeGreaterThan(0);
    // Firewall: no page twice, links to other agents' hosts dropped, not sent. (On CI, two test files at
    // once, one URL was sent: an agent suspected for a moment moves a host, and its queued URLs go to
    // the host's new owner. No link is.)
    expect(Number(row("firewall", 3).overlap)).toBe(0);
    expect(Number(row("firewall", 3).urls_sent)).toBeLessThanOrEqual(
      Number(row("exchange", 3).urls_sent) / 20,
    );
    expect(Number(row("firewall", 3).links_dropped)).toBeGreaterThan(0);
    // Cross-over: pages fetched twice, coverage no lower than the firewall's.
    expect(Number(row("cross", 3).overlap)).toBeGreaterThan(0);
    expect(Number(row("cross", 3).coverage)).toBeGreaterThanOrEqual(Number(row("firewall", 3).coverage));

    // The crawl logs, read here: fetch counts as the table says, and whose hosts each agent fetched.
    const owners = Assignment.build(
      ["agent-1", "agent-2", "agent-3"].map((id) => ({ id })),
      {},
      await loadHasher64(),
    );
    const foreignFetches = new Map<string, number>();
    for (const mode of ["firewall", "cross", "exchange"]) {
      const byAgent = await fetchesByAgent(join(data, `${mode}-3`));
      const all = [...byAgent.values()].flat();
      expect(all.length).toBe(Number(row(mode, 3).fetches));
      expect(new Set(all).size).toBe(Number(row(mode, 3).distinct_urls));
      let foreign = 0;
      for (const [agent, urls] of byAgent) {
        foreign += urls.filter((url) => owners.ownerOf(new URL(url).host) !== agent).length;
      }
      foreignFetches.set(mode, foreign);
    }
    // Only the cross-over mode fetches other agents' hosts.
    expect(foreignFetches.get("firewall")).toBe(0);
    expect(foreignFetches.get("exchange")).toBe(0);
    expect(foreignFetches.get("cross")).toBeGreaterThan(0);
    expect(result.stdout).not.toContain("FAILS: Exchange");
    expect(result.stdout).not.toContain("FAILS: Firewall mode: no overlap");
  });
});

describe("ubicrawl experiment batching", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("sends each URL in a message of its own at batch size 1, and fewer messages, not fewer URLs, in batches", async () => {
    const { result, out, rows } = await runExperiment("batching", [
      "--batches",
      "1,100",
      "--agents",
      "3",
      // 491 URLs on 20 hosts, as in the modes experiment: ~180 URLs sent at batch size 1.
      "--hosts",
      "20",
      "--pages",
      "200",
    ]);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (4 files`);
    expect(result.stdout).not.toContain("FAILS");
    const [one, hundred] = rows;
    expect(rows.map((r) => r.batch_urls)).toEqual(["1", "100"]);
    // One URL a message: the agents took --batch-urls 1.
    expect(Number(one?.urls_sent)).toBeGreaterThan(50);
    expect(one?.messages).toBe(one?.urls_sent);
    // Batches of up to 100: the same URLs (each goes once) in fewer messages. How many fewer depends on
    // the machine: a batch leaves when full or when its flush timer fires, so a slow crawl sends more,
    // smaller batches (149 URLs in 34 messages on a loaded CI machine, in under 30 elsewhere).
    expect(hundred?.urls_sent).toBe(one?.urls_sent);
    expect(Number(hundred?.messages)).toBeLessThan(Number(one?.messages) / 2);
    expect(Number(hundred?.urls_per_message)).toBeGreaterThan(2);
    expect(Number(hundred?.urls_per_message)).toBeLessThanOrEqual(100);
    for (const row of rows) {
      expect(Number(row.coverage)).toBe(1);
      expect(Number(row.overlap)).toBe(0);
    }
  });
});

describe("ubicrawl experiment replication", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("sends fewer URLs when the most linked are replicated, and still fetches each of them once", async () => {
    const data = join(experiments.dir, "replication-data");
    const { result, out, rows } = await runExperiment("replication", [
      "--top",
      "0,50",
      "--agents",
      "3",
      // 491 URLs on 20 hosts: the 50 most linked still carry many of the links between agents (191 URLs
      // sent without them, 110 with them, when measured).
      "--hosts",
      "20",
      "--pages",
      "200",
      "--data",
      data,
    ]);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (3 files`);
    const [none, fifty] = rows;
    expect(rows.map((r) => r.top_k)).toEqual(["0", "50"]);
    expect(Number(none?.links_not_sent)).toBe(0);
    expect(Number(fifty?.links_not_sent)).toBeGreaterThan(0);
    expect(Number(fifty?.urls_sent)).toBeLessThan(Number(none?.urls_sent));
    expect(Number(fifty?.saved)).toBeGreaterThan(0);
    for (const row of rows) {
      expect(Number(row.coverage)).toBe(1);
      expect(Number(row.overlap)).toBe(0);
    }
    // The 50 replicated URLs, read back: each fetched once, by the agent that owns its host.
    const top = (await readFile(join(data, "top-50.txt"), "utf8")).split("\n").filter((line) => line !== "");
    expect(top).toHaveLength(50);
    const owners = Assignment.build(
      ["agent-1", "agent-2", "agent-3"].map((id) => ({ id })),
      {},
      await loadHasher64(),
    );
    const byAgent = await fetchesByAgent(join(data, "top-50"));
    for (const url of top) {
      const fetchedBy = [...byAgent].flatMap(([agent, urls]) =>
        urls.filter((u) => u === url).map(() => agent),
      );
      expect([url, fetchedBy]).toEqual([url, [owners.ownerOf(new URL(url).host)]]);
    }
  });
});

describe("ubicrawl experiment partitioning", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("by host, each agent alone on its own hosts; by URL, each on its own URLs of every host, more URLs sent and hosts hit at once", async () => {
    const data = join(experiments.dir, "partitioning-data");
    const { result, out, rows } = await runExperiment("partitioning", [
      "--agents",
      "3",
      "--hosts",
      "30",
      "--pages",
      "300",
      "--response-ms",
      "20",
      "--data",
      data,
    ]);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (5 files`);
    const [byHost, byUrl] = rows;
    expect(rows.map((r) => r.partition)).toEqual(["host", "url"]);
    // The claim's line says how many agents were taken for dead meanwhile, if any.
    const coverageClaim = result.stdout.split("\n").find((line) => line.includes("overlap 0"));
    for (const row of rows) {
      expect(Number(row.coverage)).toBe(1);
      expect(Number(row.overlap), coverageClaim).toBe(0);
    }
    // The test web's own count: one request at a time to a host by host, not by URL; robots.txt once a
    // host (a few hosts' failing robots.txt are asked twice) by host, about once an agent by URL.
    expect(Number(byHost?.peak_requests_per_host)).toBe(1);
    expect(Number(byHost?.hosts_hit_at_once)).toBe(0);
    expect(Number(byHost?.robots_per_host)).toBeLessThan(1.2);
    expect(Number(byUrl?.peak_requests_per_host)).toBeGreaterThanOrEqual(2);
    expect(Number(byUrl?.robots_per_host)).toBeGreaterThan(2);
    expect(Number(byUrl?.communication_overhead)).toBeGreaterThan(2 * Number(byHost?.communication_overhead));

    // The crawl logs: who fetched what. By host, only its own hosts; by URL, only its own URLs, and most
    // hosts by several agents.
    const owners = Assignment.build(
      ["agent-1", "agent-2", "agent-3"].map((id) => ({ id })),
      {},
      await loadHasher64(),
    );
    const hostLogs = await fetchesByAgent(join(data, "host-3"));
    const urlLogs = await fetchesByAgent(join(data, "url-3"));
    for (const [agent, urls] of hostLogs) {
      expect(urls.filter((url) => owners.ownerOf(new URL(url).host) !== agent)).toEqual([]);
    }
    const agentsOfHost = new Map<string, Set<string>>();
    for (const [agent, urls] of urlLogs) {
      expect(urls.length).toBeGreaterThan(0);
      expect(urls.filter((url) => owners.ownerOf(url) !== agent)).toEqual([]);
      for (const url of urls) {
        const host = new URL(url).host;
        agentsOfHost.set(host, (agentsOfHost.get(host) ?? new Set()).add(agent));
      }
    }
    const shared = [...agentsOfHost.values()].filter((agents) => agents.size > 1).length;
    expect(shared).toBeGreaterThan(agentsOfHost.size / 2);
    expect(result.stdout).not.toContain("FAILS");
  });
});

describe("ubicrawl experiment scaling", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("simulates the real agents' crawls as they ran them, then projects to more agents", async () => {
    const { result, out, rows } = await runExperiment("scaling", [
      "--agents",
      "1,3",
      "--simulate",
      "5,20",
      "--sim-pages-per-agent",
      "200",
      // The fewest pages 30 hosts take: a real crawl's time is mostly its fetches one host at a time.
      "--hosts",
      "30",
      "--pages",
      "300",
    ]);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (5 files`);
    const validation = await table(out, "validation");
    expect(validation.map((r) => r.agents)).toEqual(["1", "3"]);
    for (const row of validation) {
      // The simulator's coverage and communication overhead are the real cluster's.
      expect(Number(row.real_coverage)).toBe(1);
      expect(Number(row.sim_coverage)).toBe(1);
      expect(Math.abs(Number(row.overhead_diff))).toBeLessThanOrEqual(0.05);
      expect(Number(row.sim_steady_pages_per_s_per_agent)).toBeGreaterThan(0);
    }
    expect(Number(validation[1]?.real_overhead)).toBeGreaterThan(0);
    const summary = rows;
    const projected = summary.filter((r) => r.kind === "projected");
    expect(projected.map((r) => r.agents)).toEqual(["5", "20"]);
    for (const row of projected) {
      expect(Number(row.coverage)).toBe(1);
      // An agent killed halfway: its hosts are crawled again after the timeout (5 heartbeats of 1 s).
      expect(Number(row.recovery_s)).toBeGreaterThanOrEqual(5);
      expect(Number(row.recovery_s)).toBeLessThan(8);
      expect(Number(row.refetched_after_kill)).toBeGreaterThan(0);
    }
    expect(result.stdout).toMatch(/holds: The simulation sends the URLs the real agents send/);
  });
});
