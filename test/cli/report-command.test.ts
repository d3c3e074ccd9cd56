import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CrawlReport } from "../../src/report/index.js";
import {
  hostOf,
  isRobotsUrl,
  readCrawlLogOf,
  runUbicrawl,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "../agent/harness.js";

/**
 * `ubicrawl report --truth FILE DIR...` as a real process, on real crawls (counted again by the test
 * web's own recorder). Its figures on crawl logs whose repeats, failures and retries are known, and its
 * errors, in process: test/commands/report.test.ts.
 */

async function report(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runUbicrawl(["report", ...args]).waitForExit(20_000);
}

describe("ubicrawl report on real crawls", () => {
  let fixture: WebFixture;
  afterEach(async () => {
    await fixture?.stop();
  });

  it("measures two agents that each crawled the whole web as the test web counted their requests", async () => {
    fixture = await startWebFixture({ hosts: 6, pages: 200, trap: false });
    const truthFile = join(fixture.dir, "truth");
    const truth = fixture.truth().urls;
    await writeFile(truthFile, `${truth.join("\n")}\n`);
    // One after the other on the same web, alone each: every page is fetched twice.
    const dirs: string[] = [];
    for (const id of ["solo-1", "solo-2"]) {
      const dataDir = join(fixture.dir, id);
      const run = await spawnAgent(fixture, { id, dataDir }).waitForExit(30_000);
      expect(run.code, run.stderr).toBe(0);
      dirs.push(dataDir);
    }
    const served = new Map<string, number>();
    for (const [url, count] of fixture.web.recorder.servedCounts())
      if (!isRobotsUrl(url)) served.set(url, count);
    let requests = 0;
    for (const count of served.values()) requests += count;

    const result = await report(["--truth", truthFile, "--json", ...dirs]);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as CrawlReport;
    expect(json.fetches).toBe(requests);
    expect(json.distinctUrls).toBe(served.size);
    expect(json.repeatedUrls).toBe([...served.values()].filter((count) => count > 1).length);
    expect(json.repeatedUrls).toBe(truth.length);
    expect(json.overlap).toBe(1);
    expect(json.coverage).toEqual({
      covered: truth.length,
      truthSize: truth.length,
      fraction: 1,
      outsideTruth: 0,
    });
    // Failures: links to hosts missing from the hosts file, once per agent (read with the agent's reader).
    const failed = (await Promise.all(dirs.map(readCrawlLogOf))).flat().filter((entry) => entry.status === 0);
    expect(failed.length).toBeGreaterThan(0);
    const unresolvable = new Set(fixture.truth().unresolvableHosts);
    expect(failed.every((entry) => unresolvable.has(hostOf(entry.url)))).toBe(true);
    expect(json.failures).toBe(failed.length);
    expect(json.retries).toBe(0);
    // Named by their WARC files; half the pages each.
    expect(json.agents.map((agent) => [agent.agent, agent.pages, agent.share])).toEqual([
      ["solo-1", truth.length, 0.5],
      ["solo-2", truth.length, 0.5],
    ]);
  }, 60_000);
});
