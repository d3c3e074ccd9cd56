import { copyFile, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSYNCED_PAGES_PER_HOST } from "../../src/agent/index.js";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { recoverWarcFile } from "../../src/storage/index.js";
import type { Truth } from "../../src/testweb/index.js";
import {
  agentDataDir,
  crawlMetrics,
  type ExitResult,
  isRobotsUrl,
  listWarcFiles,
  type RequestTrace,
  readCrawlLogOf,
  servedPages,
  spawnAgent,
  startWebFixture,
  traceRequests,
  type WebFixture,
} from "../agent/harness.js";
import { lastPagesOfEachHost } from "../support/unsynced-pages.js";
import {
  chaosSeed,
  checkWarcFiles,
  pairProblems,
  randomIntIn,
  responsesByUrl,
  seededRandom,
  type WarcCheck,
} from "./chaos-helpers.js";

/**
 * One agent SIGKILLed at random moments, many times, and restarted on the same data dir each time
 * until a run ends by itself: nothing is lost, the files it leaves are readable, and the only pages
 * fetched twice are those in flight at a kill. The schedule is seeded (CHAOS_SEED replays one).
 */

const MAX_DEPTH = 8;
const MAX_ACTIVE_HOSTS = 8;
const AGENT = {
  id: "chaos",
  flags: ["--max-depth", String(MAX_DEPTH), "--max-active-hosts", String(MAX_ACTIVE_HOSTS)],
};
const KILLS = 10;
/** Each life runs this long (after its first request) before the SIGKILL. */
const RUN_MS = { min: 150, max: 900 };
/** These lives are killed while starting (LevelDB open, WARC and crawl log repair), from the spawn. */
const STARTUP_KILLS = new Set([3, 7]);
const STARTUP_RUN_MS = { min: 60, max: 400 };
/** A life that has not sent a request after this long is killed anyway. */
const FIRST_REQUEST_TIMEOUT_MS = 15_000;

const SEED = chaosSeed(1337139474);

/** One life of the agent: how it ended and what the test web served during it. */
interface Life {
  readonly killed: boolean;
  readonly ranMs: number;
  /** When the SIGKILL was sent (performance.now()); undefined for the life that ended by itself. */
  readonly killedAtMs: number | undefined;
  readonly requests: number;
  /** Its requests' indexes in the trace: [first, end). */
  readonly traced: readonly [number, number];
  /** The `.open` WARC file left by a kill could not be read to the end (a torn record). */
  readonly tornWarc: boolean;
  readonly result: ExitResult;
}

let fixture: WebFixture;
let truth: Truth;
const lives: Life[] = [];
let finalRun: ExitResult;
let requestsOfFinalRun: number;
let warc: WarcCheck;
let trace: RequestTrace;

beforeAll(async () => {
  process.stderr.write(`single-agent chaos: CHAOS_SEED=${SEED}\n`);
  const random = seededRandom(SEED);
  fixture = await startWebFixture({
    seed: 5,
    hosts: 40,
    pages: 3000,
    maxArticlesPerHost: 150,
    responseDelayMs: 4,
  });
  truth = fixture.truth({ maxDepth: MAX_DEPTH });
  const recorder = fixture.web.recorder;
  trace = traceRequests(recorder);
  const dataDir = agentDataDir(fixture, AGENT);
  for (let life = 0; ; life++) {
    const killing = lives.filter((l) => l.killed).length < KILLS;
    const before = recorder.totalServed;
    const firstTraced = trace.requests.length;
    const agent = spawnAgent(fixture, AGENT);
    let ranMs = 0;
    let killedAtMs: number | undefined;
    if (killing) {
      const startup = STARTUP_KILLS.has(life);
      if (!startup) {
        const deadline = Date.now() + FIRST_REQUEST_TIMEOUT_MS;
        while (recorder.totalServed === before && !agent.exited && Date.now() < deadline) await delay(5);
      }
      ranMs = startup
        ? randomIntIn(random, STARTUP_RUN_MS.min, STARTUP_RUN_MS.max)
        : randomIntIn(random, RUN_MS.min, RUN_MS.max);
      await delay(ranMs);
      killedAtMs = performance.now();
      agent.kill("SIGKILL");
    }
    const result = await agent.waitForExit(60_000);
    // Requests the dead process had already sent reach the test web's event loop a moment later.
    if (result.signal === "SIGKILL") await delay(50);
    const tornWarc = result.signal === "SIGKILL" && (await hasTornOpenWarc(dataDir));
    lives.push({
      killed: result.signal === "SIGKILL",
      ranMs,
      killedAtMs,
      requests: recorder.totalServed - before,
      traced: [firstTraced, trace.requests.length],
      tornWarc,
      result,
    });
    if (result.signal !== "SIGKILL") break;
  }
  // The state left by the last run must say "done": a restart fetches nothing and stops at once.
  const before = recorder.totalServed;
  finalRun = await spawnAgent(fixture, AGENT).waitForExit(20_000);
  requestsOfFinalRun = recorder.totalServed - before;
  warc = await checkWarcFiles(dataDir);
  const metrics = crawlMetrics(servedPages(recorder), truth.urls);
  process.stderr.write(
    `single-agent chaos: ${lives.filter((l) => l.killed).length} kills over ${lives.length} lives ` +
      `(requests per life: ${lives.map((l) => l.requests).join(", ")}; torn WARC tails: ` +
      `${lives.filter((l) => l.tornWarc).length}); ${metrics.unique} pages, ` +
      `${metrics.repeated.length} fetched twice or more, overlap ${(metrics.overlap * 100).toFixed(2)}%; ` +
      `${warc.files} WARC files, ${warc.records.length} records\n`,
  );
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
});

/**
 * Where each request for `url` fell, for a failure's message: its life, how many of its host's requests
 * that life sent after it, and when it began and ended relative to that life's kill; then the URL's
 * crawl log lines, and the warnings and errors each life logged.
 */
function servesOf(url: string, logged: readonly CrawlLogEntry[]): string {
  const lines = [url];
  lives.forEach((life, index) => {
    const requests = trace.requests.slice(...life.traced);
    requests.forEach((request, at) => {
      if (request.url !== url) return;
      const later = requests.slice(at + 1).filter((r) => r.host === request.host && !isRobotsUrl(r.url));
      const since = (ms: number | undefined) =>
        ms === undefined || life.killedAtMs === undefined ? "?" : `${(ms - life.killedAtMs).toFixed(1)} ms`;
      lines.push(
        `life ${index}${life.killed ? " (killed)" : ""}: request ${request.seq}, ${later.length} of its host's ` +
          `pages after it; began ${since(request.beganAtMs)}, ended ${since(request.endedAtMs)} from the kill`,
      );
    });
  });
  for (const entry of logged.filter((e) => e.url === url)) lines.push(`crawl log: ${JSON.stringify(entry)}`);
  lives.forEach((life, index) => {
    const warnings = life.result.stderr
      .split("\n")
      .filter((line) => /"level":"(warn|error|fatal)"/.test(line));
    for (const line of warnings.slice(0, 5)) lines.push(`life ${index} logged: ${line.slice(0, 400)}`);
  });
  return lines.join("\n  ");
}

/** True when the `.open` WARC file a kill left ends in a torn record (recovery of a copy cuts bytes). */
async function hasTornOpenWarc(dataDir: string): Promise<boolean> {
  const open = (await listWarcFiles(dataDir)).filter((file) => file.endsWith(".open"));
  let torn = false;
  for (const file of open) {
    const copy = join(fixture.dir, `copy-${basename(file)}`);
    await copyFile(file, copy);
    const result = await recoverWarcFile(copy);
    if (result.droppedBytes > 0) torn = true;
    if (result.path !== undefined) await rm(result.path);
  }
  return torn;
}

describe(`one agent SIGKILLed ${KILLS} times at random moments (CHAOS_SEED=${SEED})`, () => {
  it("was killed every time while crawling or starting, then finished by itself", () => {
    const killed = lives.filter((life) => life.killed);
    expect(killed.length).toBe(KILLS);
    // Most lives were killed mid-crawl: the test web served them requests.
    expect(killed.filter((life) => life.requests > 0).length).toBeGreaterThanOrEqual(KILLS - 3);
    const last = lives.at(-1) as Life;
    expect(last.killed).toBe(false);
    expect(last.result.code, last.result.stderr).toBe(0);
    expect(last.result.stderr).toContain("stopped (done)");
  });

  it("loses no page: the union of all lives is exactly the truth", () => {
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.extra).toEqual([]);
    expect(metrics.coverage).toBe(1);
  });

  it(`fetches again only what was not durable at a kill: each host's last ${UNSYNCED_PAGES_PER_HOST} requests of a killed life`, async () => {
    const served = servedPages(fixture.web.recorder);
    const metrics = crawlMetrics(served, truth.urls);
    const logged = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    // A host's next request overlaps only its last page's commit: at a kill, only each host's last
    // UNSYNCED_PAGES_PER_HOST requests of that life can be lost, and fetched again later.
    const inFlightKills = new Map<string, number>();
    for (const life of lives.filter((l) => l.killed)) {
      const pages = trace.requests.slice(...life.traced).filter((request) => !isRobotsUrl(request.url));
      for (const url of lastPagesOfEachHost(pages)) inFlightKills.set(url, (inFlightKills.get(url) ?? 0) + 1);
    }
    for (const url of metrics.repeated) {
      expect(inFlightKills.has(url), `fetched twice but in flight at no kill: ${servesOf(url, logged)}`).toBe(
        true,
      );
      // Once per kill it was in flight at, plus its final fetch.
      expect(served.get(url), servesOf(url, logged)).toBeLessThanOrEqual((inFlightKills.get(url) ?? 0) + 1);
    }
  });

  it("leaves every WARC file readable to the end, none still open, with well-formed pairs", () => {
    expect(warc.unreadable).toEqual([]);
    expect(warc.openFiles).toBe(0);
    // A file is created by a life's first archived page: kills during startup leave none.
    expect(warc.files).toBeGreaterThanOrEqual(2);
    expect(warc.files).toBeLessThanOrEqual(lives.length);
    expect(pairProblems(warc.records)).toEqual([]);
  });

  it("archives every truth page, and never more often than the test web served it", () => {
    const archived = responsesByUrl(warc.records);
    expect(truth.urls.filter((url) => !archived.has(url))).toEqual([]);
    const served = fixture.web.recorder.servedCounts();
    for (const [url, count] of archived) {
      expect(count, url).toBeLessThanOrEqual(served.get(url) ?? 0);
    }
  });

  it("keeps a crawl log with a line for every truth page fetched, every line parsing (torn lines cut)", async () => {
    const entries = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    const served = fixture.web.recorder.servedCounts();
    const logged = entries.filter((entry) => entry.status > 0).map((entry) => entry.url);
    expect(logged.filter((url) => !served.has(url))).toEqual([]);
    // The log is flushed before each state commit, so a fetch recorded as done always has its line.
    const loggedSet = new Set(logged);
    expect(truth.urls.filter((url) => !loggedSet.has(url))).toEqual([]);
  });

  it("is consistent in LevelDB: a further restart fetches nothing and stops at once", () => {
    expect(finalRun.code, finalRun.stderr).toBe(0);
    expect(finalRun.stderr).toContain("stopped (done)");
    expect(requestsOfFinalRun).toBe(0);
  });
});
