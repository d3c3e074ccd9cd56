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
    const steadyPages = pages - 2 * Math.floor(pages * 0.1);
    const tailPages = Math.floor(pages * 0.1);
    // The phases' CPU adds up to the process's own, read from the kernel when it was reaped.
    const sum =
      record.startCpuSeconds +
      (record.steadyCpuSecondsPer1000Pages * steadyPages) / 1000 +
      (record.tailCpuSecondsPer1000Pages * tailPages) / 1000;
    expect(sum).toBeCloseTo(record.cpuSeconds, 6);
    // The start carries the process's start-up (loading the code, opening the state): its pages cost
    // more CPU each than the middle's.
    const startPages = Math.floor(pages * 0.1);
    expect((1000 * record.startCpuSeconds) / startPages).toBeGreaterThan(record.steadyCpuSecondsPer1000Pages);
    expect(record.steadyPagesPerSecond).toBeGreaterThan(0);
  }, 120_000);
});
