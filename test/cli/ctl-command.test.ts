import { afterEach, describe, expect, it } from "vitest";
import { startWebFixture, type WebFixture, waitFor } from "../agent/harness.js";
import { type ClusterAgent, startCluster } from "../cluster/cluster-harness.js";
import { AGENT_FLAGS, ctl, SMALL_WEB } from "./ctl-harness.js";

/**
 * `ubicrawl ctl` as a process, over gRPC to agents that are processes: what only a process shows — its
 * exit codes and what it prints, and an agent's process ending after `ctl leave`. Each command's effect
 * on a crawl is tested in this process, on the same command code (ctl-in-process.test.ts,
 * ctl-blacklist.test.ts).
 */
describe("ubicrawl ctl", () => {
  let fixture: WebFixture | undefined;

  afterEach(async () => {
    await fixture?.stop();
    fixture = undefined;
  });

  it("commands real agents over gRPC: prints each outcome, exits 0, 1 on a refusal, 2 on bad usage; after leave the agent's process exits 0", async () => {
    fixture = await startWebFixture(SMALL_WEB);
    const web = fixture;
    const agents = await startCluster(web, 2, AGENT_FLAGS);
    const [first, second] = agents as [ClusterAgent, ClusterAgent];
    await waitFor(() => web.web.recorder.totalServed > 50, "50 pages served", 30_000);

    // Relayed by the agent named to the other: a line for each (and a crawl that outlasts the test).
    const slower = await ctl(second, "--cluster", "set", "delay-ms=800");
    expect(slower.code, slower.stdout).toBe(0);
    expect(slower.stdout.trim().split("\n").sort()).toEqual(
      [
        `agent-1 (${first.address}): delay-ms is now 800`,
        `agent-2 (${second.address}): delay-ms is now 800`,
      ].sort(),
    );
    const refused = await ctl(first, "set", "fetch-timeout-ms=10");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(
      /^127\.0\.0\.1:\d+: refused: .*cannot change at runtime: only delay-ms, max-active-hosts/m,
    );
    const bad = await ctl(first, "--cluster", "add-seeds", web.web.seeds[0] as string);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(
      /^ubicrawl ctl: add-seeds takes no --cluster: .* \[UBI_ERR_INVALID_ARGUMENT\]$/m,
    );

    const left = await ctl(first, "leave");
    expect(left.code, left.stdout).toBe(0);
    expect(left.stdout).toMatch(/leaving/);
    const exit = await first.process.waitForExit(60_000);
    expect(exit.code, exit.stderr).toBe(0);
  }, 120_000);
});
