import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const MEMBERSHIP = fileURLToPath(new URL("../../bench/membership.mjs", import.meta.url));

interface RunRecord {
  scenario: string;
  run: number;
  seed: number;
  coverage: number;
  overlap: number;
  repeatedUrls: number;
  repeatedFetches: number;
  mostFailedAttempts: { url: string; attempts: number } | null;
  durationS: number;
  exitCodes: string[];
  timedOut: boolean;
  events: string[];
}

describe("bench/membership.mjs", () => {
  it("runs join-early on a tiny web and reports its figures as JSON", async () => {
    const { stdout } = await run(process.execPath, [
      MEMBERSHIP,
      ...["--scenario", "join-early", "--runs", "1", "--seed", "3", "--timeout-s", "40"],
      // 2 hosts at a time, 50 requests a second each: the crawl outlasts the joins (at delay 0 the
      // first agent finished the web and exited before the second joined).
      ...["--hosts", "12", "--pages", "600", "--max-active-hosts", "2", "--delay-ms", "20", "--json"],
    ]);
    const document = JSON.parse(stdout) as {
      seed: number;
      runs: RunRecord[];
      summary: { scenario: string; runs: number; zeroOverlapRuns: number; worstOverlap: number }[];
    };
    expect(document.seed).toBe(3);
    expect(document.runs).toHaveLength(1);
    const [record] = document.runs as [RunRecord];
    expect(record).toMatchObject({ scenario: "join-early", run: 1, seed: 3, coverage: 1, timedOut: false });
    expect(record.overlap).toBeGreaterThanOrEqual(0);
    expect(record.repeatedFetches).toBeGreaterThanOrEqual(record.repeatedUrls);
    expect(record.durationS).toBeGreaterThan(0);
    // The first agent and the three that joined it, each exiting by itself when the crawl is done.
    expect(record.exitCodes).toEqual(["agent-1=0", "agent-2=0", "agent-3=0", "agent-4=0"]);
    expect(record.events.filter((event) => / joins$/.test(event))).toHaveLength(3);
    expect(document.summary).toEqual([
      expect.objectContaining({ scenario: "join-early", runs: 1, worstOverlap: record.overlap }),
    ]);
  }, 60_000);
});
