import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const RUN = fileURLToPath(new URL("../../bench/run.mjs", import.meta.url));

interface RunRecord {
  pagesFetched: number;
  cpuSeconds: number;
  cpuSecondsPer1000Pages: number;
  startCpuSeconds: number;
  steadyPagesPerSecond: number;
  steadyCpuSecondsPer1000Pages: number;
  tailCpuSecondsPer1000Pages: number;
  coverage: number;
}

describe("bench/run.mjs", () => {
  it("crawls the whole test web and splits the agent's CPU into start, steady middle and tail", async () => {
    const { stdout } = await run(process.execPath, [RUN, "--hosts", "12", "--pages", "400", "--json"]);
    const { median: record } = JSON.parse(stdout) as { median: RunRecord };
    expect(record.coverage).toBe(1);
    const pages = record.pagesFetched;
    // The tail is the remainder of the process's CPU (read from the kernel when it was reaped), so the
    // phases add up by construction; what can be checked is that each phase's share lies within it.
    expect(record.startCpuSeconds).toBeGreaterThan(0);
    expect(record.startCpuSeconds).toBeLessThan(record.cpuSeconds);
    const steadyPages = pages - 2 * Math.floor(pages * 0.1);
    expect((record.steadyCpuSecondsPer1000Pages * steadyPages) / 1000).toBeLessThan(
      record.cpuSeconds - record.startCpuSeconds,
    );
    expect(record.tailCpuSecondsPer1000Pages).toBeGreaterThanOrEqual(0);
    // The start carries the process's start-up (loading the code, opening the state): its pages cost
    // more CPU each than the middle's.
    const startPages = Math.floor(pages * 0.1);
    expect((1000 * record.startCpuSeconds) / startPages).toBeGreaterThan(record.steadyCpuSecondsPer1000Pages);
    expect(record.steadyPagesPerSecond).toBeGreaterThan(0);
  }, 120_000);
});
