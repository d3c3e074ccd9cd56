import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runUbicrawl } from "../agent/harness.js";

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** `ubicrawl cluster`'s crawls, by real processes; its refusal of bad flags: test/commands/cluster.test.ts. */
describe("ubicrawl cluster", () => {
  it("crawls the test web with a local cluster, survives a scripted kill and join, and reports full coverage", async () => {
    // The agents' data goes to a folder of the test's own (the command keeps it for the user).
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-cluster-test-"));
    const data = join(dir, "data");
    const run = runUbicrawl([
      "cluster",
      "--data",
      data,
      "--agents",
      "3",
      "--hosts",
      "30",
      "--pages",
      "3000",
      "--max-active-hosts",
      "4",
      "--kill-at",
      "25",
      "--add-at",
      "50",
      "--heartbeat-ms",
      "200",
      "--suspect-after-ms",
      "1200",
    ]);
    const result = await run.waitForExit(120_000);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/SIGKILLed agent-\d/);
    expect(result.stderr).toMatch(/started agent-4/);
    for (const id of ["agent-1", "agent-2", "agent-3", "agent-4"]) {
      expect(result.stderr).toMatch(new RegExp(`^${id}: console on http://127\\.0\\.0\\.1:\\d+/$`, "m"));
    }
    const coverage = /coverage: (\d+)\/(\d+) = 100\.00%/.exec(result.stderr);
    expect(coverage?.[1]).toBe(coverage?.[2]);
    expect(result.stderr).toMatch(/most concurrent requests to one host: 1\b/);
    expect(result.stderr).toContain(data);
    expect(existsSync(join(data, "agent-1"))).toBe(true);
  }, 150_000);

  it("resumes the crawl of a data folder of an earlier run on the same web and port, and refuses another web's", async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-cluster-test-"));
    const data = join(dir, "data");
    const flags = [
      "cluster",
      "--data",
      data,
      "--agents",
      "2",
      "--hosts",
      "10",
      "--pages",
      "300",
      "--insecure",
    ];
    const fast = ["--heartbeat-ms", "200", "--suspect-after-ms", "1200"];
    const first = await runUbicrawl([...flags, ...fast]).waitForExit(120_000);
    expect(first.code, first.stderr).toBe(0);
    const port = /port (\d+)/.exec(first.stderr)?.[1];
    expect(port).toBeDefined();

    const again = await runUbicrawl([...flags, ...fast]).waitForExit(120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`resuming the crawl in ${data}: the same test web, on port ${port}`);
    const coverage = /coverage: (\d+)\/(\d+) = 100\.00%/.exec(again.stderr);
    expect(coverage?.[1]).toBe(coverage?.[2]);

    const other = await runUbicrawl([...flags, "--seed", "2", ...fast]).waitForExit(30_000);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/holds a crawl of another test web \(--seed 1 --hosts 10 --pages 300\)/);
    expect(other.stderr).toContain("use a new --data folder");
  }, 150_000);
});
