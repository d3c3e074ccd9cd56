import { describe, expect, it } from "vitest";
import { ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl cluster`'s refusal of bad flags, in this process, before anything is started. Its crawls,
 * by real processes: test/cli/cluster-command.test.ts.
 */
describe("ubicrawl cluster, in process", () => {
  it("rejects bad flags with a clear error", async () => {
    const result = await ubicrawlInProcess(["cluster", "--agents", "zero"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--agents must be an integer/);
    const detector = await ubicrawlInProcess([
      "cluster",
      "--heartbeat-ms",
      "500",
      "--suspect-after-ms",
      "500",
    ]);
    expect(detector.code).toBe(2);
    expect(detector.stderr).toMatch(/--suspect-after-ms must be larger than --heartbeat-ms/);
  });
});
