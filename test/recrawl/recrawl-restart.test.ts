import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import {
  agentDataDir,
  type ExitResult,
  errorLine,
  readCrawlLogOf,
  readCrawlLogSoFar,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "../agent/harness.js";

/**
 * Revisit plans survive a SIGKILL: an agent crawling continuously is killed after its first pass and
 * before any page is due; started again on the same data dir, it fetches every page again when due,
 * conditionally (so each page's history came back from the state store too).
 */
const AGENT = { id: "phoenix" };
/** Long enough that a loaded machine's first pass and its last commits are over well before a page is due. */
const RECRAWL = ["--recrawl=fixed", "--recrawl-interval=10s", "--sitemaps=off"];

describe("--recrawl across a SIGKILL", () => {
  let fixture: WebFixture;
  let firstPass: CrawlLogEntry[];
  let servedBefore: Map<string, number>;
  let conditionalBefore: Map<string, number>;
  let restarted: ExitResult;

  beforeAll(async () => {
    fixture = await startWebFixture({
      hosts: 5,
      pages: 60,
      seedCount: 1,
      mirrors: 0,
      trap: false,
      changes: { everyMs: 1000, percent: 30 },
    });
    const dataDir = agentDataDir(fixture, AGENT);
    const first = spawnAgent(fixture, { ...AGENT, exitWhenDone: false, flags: RECRAWL });
    // The first pass is over once the crawl log and the pages served stopped growing for a second (its
    // last commits done); pages are due 10 s after their fetch.
    let lines = -1;
    let servedCount = -1;
    for (let stable = 0; stable < 5; ) {
      await delay(200);
      const now = (await readCrawlLogSoFar(dataDir).catch(() => [])).length;
      const served = servedPages(fixture.web.recorder).size;
      stable = now > 0 && now === lines && served === servedCount ? stable + 1 : 0;
      lines = now;
      servedCount = served;
    }
    first.kill("SIGKILL");
    await first.waitForExit();
    firstPass = await readCrawlLogSoFar(dataDir);
    servedBefore = servedPages(fixture.web.recorder);
    conditionalBefore = fixture.web.recorder.conditionalCounts();
    restarted = await spawnAgent(fixture, {
      ...AGENT,
      // The plans read back fall due within the horizon (10 s after each fetch before the kill), and the
      // revisits they make plan none (an hour later, past it): the agent is done once they are made.
      flags: [...RECRAWL, "--recrawl-interval=1h", "--recrawl-horizon=20s"],
    }).waitForExit(90_000);
  }, 120_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  it("was killed before any revisit, and its restart ends once the plans read back are made", () => {
    expect(firstPass.length).toBeGreaterThan(20);
    expect(firstPass.some((entry) => entry.recrawl !== undefined)).toBe(false);
    expect(conditionalBefore.size).toBe(0);
    expect(restarted.code, errorLine(restarted.stderr)).toBe(0);
  });

  it("fetches every page of the first pass again, conditionally, once", async () => {
    const served = servedPages(fixture.web.recorder);
    const conditional = fixture.web.recorder.conditionalCounts();
    const pages = firstPass.filter((entry) => entry.status === 200 && entry.visits === 1);
    expect(pages.length).toBeGreaterThan(20);
    for (const { url } of pages) {
      expect((served.get(url) ?? 0) - (servedBefore.get(url) ?? 0), url).toBe(1);
      expect(conditional.get(url), url).toBe(1);
    }
    const log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    const revisits = log.filter((entry) => entry.recrawl !== undefined);
    expect(new Set(revisits.map((entry) => entry.recrawl))).toEqual(new Set(["changed", "not-modified"]));
    expect(revisits.every((entry) => entry.visits === 2)).toBe(true);
  });
});
