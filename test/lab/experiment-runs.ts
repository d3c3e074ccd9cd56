import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, expect } from "vitest";
import { runUbicrawl } from "../agent/harness.js";

/** Running `ubicrawl experiment` as a user does, and reading what it wrote, for the lab's test files. */

/** A row of a report's CSV table, by column. */
export type Row = Record<string, string>;

/**
 * Longest an experiment (a test's real crawls, up to four of several agents each) may take: about 30 s
 * on a quiet machine, and more than the suite's 60 s under CI, where other test files share the two CPUs.
 */
export const EXPERIMENT_TIMEOUT_MS = 240_000;

/** The rows of CSV table `name` of the report in `out`. */
export async function table(out: string, name = "summary"): Promise<Row[]> {
  return parse(await readFile(join(out, `${name}.csv`), "utf8"), { columns: true }) as Row[];
}

/**
 * A temp folder for the test file's reports, made before its tests and removed after; returns a function
 * that runs `ubicrawl experiment NAME ARGS --out DIR`, DIR being `outName` in it, which must succeed, and
 * returns its output, its report folder and the rows of its summary.csv.
 */
export function experimentRunner() {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-lab-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return {
    /** The folder (once the tests run). */
    get dir(): string {
      return dir;
    },
    async run(name: string, args: readonly string[], outName = name) {
      const out = join(dir, outName);
      const result = await runUbicrawl(["experiment", name, ...args, "--out", out]).waitForExit(
        EXPERIMENT_TIMEOUT_MS,
      );
      expect(result.code, result.stderr).toBe(0);
      return { result, out, rows: await table(out) };
    },
  };
}

interface LogLine {
  url: string;
  status: number;
  willRetry?: boolean;
}

/** Each agent's fetched URLs (attempts left out), from the crawl logs of the run in `runDir`. */
export async function fetchesByAgent(runDir: string): Promise<Map<string, string[]>> {
  const byAgent = new Map<string, string[]>();
  for (const agent of (await readdir(runDir)).filter((name) => name.startsWith("agent-"))) {
    const text = await readFile(join(runDir, agent, "crawl.log"), "utf8");
    const lines = text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as LogLine);
    byAgent.set(
      agent,
      lines.filter((line) => line.status > 0 && !line.willRetry).map((line) => line.url),
    );
  }
  return byAgent;
}
