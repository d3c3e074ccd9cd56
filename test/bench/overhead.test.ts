import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const OVERHEAD = fileURLToPath(new URL("../../bench/overhead.mjs", import.meta.url));

interface OverheadReport {
  crawls: { name: string; pages: number; cpuMsPerPage: number; coverage: number }[];
  extraMsPerPage: number;
  parts: { name: string; msPerPage: number; shareOfExtra: number }[];
}

describe("bench/overhead.mjs", () => {
  it("runs its four crawls, each covering its web, and names the parts of the cluster's extra CPU a page", async () => {
    const { stdout } = await run(process.execPath, [
      ...[OVERHEAD, "--agents", "2", "--hosts", "12", "--pages", "240", "--json"],
    ]);
    const report = JSON.parse(stdout) as OverheadReport;
    const [alone, share, shared, cluster] = report.crawls;
    expect(report.crawls.map((crawl) => crawl.coverage)).toEqual([1, 1, 1, 1]);
    // The whole web once, half of it once, half of it twice, the whole web once.
    expect(cluster?.pages).toBe(alone?.pages);
    expect(shared?.pages).toBe(2 * (share?.pages ?? 0));
    for (const crawl of report.crawls) expect(crawl.cpuMsPerPage).toBeGreaterThan(0);
    // The parts are differences of the crawls' figures, so they add up by construction: only that each
    // is a finite figure is checked here (the crawls' own figures are checked above).
    expect(report.parts.length).toBeGreaterThan(0);
    for (const part of report.parts) expect(Number.isFinite(part.msPerPage), part.name).toBe(true);
  }, 120_000);

  it("refuses a web whose hosts do not split evenly among the agents", async () => {
    const failure = await run(process.execPath, [
      "bench/overhead.mjs",
      "--agents",
      "8",
      "--hosts",
      "20",
    ]).then(
      () => undefined,
      (error: { stderr: string }) => error,
    );
    expect(failure?.stderr).toContain("--hosts 20 must be a multiple of --agents 8");
  });
});
