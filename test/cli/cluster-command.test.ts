import { describe, expect, it } from "vitest";
import { runUbicrawl } from "../agent/harness.js";

describe("ubicrawl cluster", () => {
  it("crawls the test web with a local cluster, survives a scripted kill and join, and reports full coverage", async () => {
    const run = runUbicrawl([
      "cluster",
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
    const coverage = /coverage: (\d+)\/(\d+) = 100\.00%/.exec(result.stderr);
    expect(coverage?.[1]).toBe(coverage?.[2]);
    expect(result.stderr).toMatch(/most concurrent requests to one host: 1\b/);
  }, 150_000);

  it("rejects bad flags with a clear error", async () => {
    const result = await runUbicrawl(["cluster", "--agents", "zero"]).waitForExit(20_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--agents must be an integer/);
  });
});
