import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Assignment, loadHasher64 } from "../../src/hashing/index.js";
import { EXPERIMENT_TIMEOUT_MS, experimentRunner, fetchesByAgent } from "./experiment-runs.js";

/**
 * `ubicrawl experiment faults` with real agents (processes): a kill, a join and a partition mid-crawl,
 * read back from the report and the crawl logs. A file of its own, the longest of the lab's crawls
 * (three whole crawls), so that it runs beside crawl-experiments.test.ts in the system tier.
 */

const experiments = experimentRunner();
const runExperiment = experiments.run;

describe("ubicrawl experiment faults", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("kills, adds and cuts off an agent mid-crawl: nothing lost, a join fetches nothing twice, the others take the dead or cut-off agent's hosts", async () => {
    const data = join(experiments.dir, "faults-data");
    const { rows } = await runExperiment("faults", [
      "--scenarios",
      "takeover,join,partition",
      "--agents",
      "3",
      "--hosts",
      "40",
      "--pages",
      "1200",
      // Early, and a host's pages take time, so agent-4 joins while the hosts it takes over still have
      // pages (its process starts with the others', so only the join comes late on a loaded machine).
      "--at",
      "5",
      "--response-ms",
      "20",
      "--data",
      data,
    ]);
    const [takeover, joined, partition] = rows;
    expect(rows.map((r) => r.scenario)).toEqual(["takeover", "join", "partition"]);
    for (const row of rows) expect(Number(row.coverage)).toBe(1);
    expect(Number(joined?.refetched)).toBe(0);
    // Fetched again from the moment hosts moved: counted from the join; no such moment after a kill alone.
    expect(joined?.refetched_on_return).toBe("0");
    expect(takeover?.refetched_on_return).toBe("");
    expect(Number(takeover?.gap_s)).toBeGreaterThan(0);
    // The killed agent is the last started (agent-3): the survivors fetched hosts it owned.
    const logs = await fetchesByAgent(join(data, "takeover"));
    expect([...logs.keys()].sort()).toEqual(["agent-1", "agent-2", "agent-3"]);
    const owners = Assignment.build(
      ["agent-1", "agent-2", "agent-3"].map((id) => ({ id })),
      {},
      await loadHasher64(),
    );
    const takenOver = ["agent-1", "agent-2"].flatMap((agent) =>
      (logs.get(agent) ?? []).filter((url) => owners.ownerOf(new URL(url).host) === "agent-3"),
    );
    expect(logs.get("agent-3")?.length).toBeGreaterThan(0);
    expect(takenOver.length).toBeGreaterThan(0);
    // The join's newcomer took hosts and crawled them.
    const joinLogs = await fetchesByAgent(join(data, "join"));
    expect(joinLogs.get("agent-4")?.length).toBeGreaterThan(0);
    // Cut off, agent-3 and the others each took the other side for dead: both crawled the other's hosts.
    expect(Number(partition?.gap_s)).toBeGreaterThan(0);
    const split = await fetchesByAgent(join(data, "partition"));
    const ownedBy3 = (url: string) => owners.ownerOf(new URL(url).host) === "agent-3";
    expect(
      ["agent-1", "agent-2"].flatMap((agent) => (split.get(agent) ?? []).filter(ownedBy3)).length,
    ).toBeGreaterThan(0);
    expect((split.get("agent-3") ?? []).filter((url) => !ownedBy3(url)).length).toBeGreaterThan(0);
    // Three whole crawls one after another (~10 s each alone, 1,200 pages): ~45 s on a loaded machine.
  }, 180_000);
});
