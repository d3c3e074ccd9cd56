import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../../bench/lib/prng.mjs";
import { UNSYNCED_PAGES_PER_HOST } from "../../src/agent/index.js";
import type { Truth } from "../../src/testweb/index.js";
import {
  crawlMetrics,
  type ExitResult,
  isRobotsUrl,
  type RequestTrace,
  readCrawlLogOf,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  traceRequests,
  type UbicrawlProcess,
  type WebFixture,
} from "../agent/harness.js";
import { skipWithout } from "../support/tools.js";
import { lastPagesOfEachHost } from "../support/unsynced-pages.js";
import {
  type CutFile,
  cutCrawlData,
  stopWhileUnsynced,
  UnsyncedMount,
  unsyncedFsUnavailable,
} from "./power-cut/unsynced-fs.js";

/**
 * Power cuts, not just SIGKILLs: the agent's data dir is on a FUSE layer that remembers what fsync made
 * durable, and after the kill every file is cut back to that (plus, at random, part of the rest, as
 * writeback may have saved). A SIGKILL leaves the page cache intact; a power cut does not. The crawl
 * must still end complete, every page in the WARC files, refetching only what was in flight.
 */

/** The FUSE layer is missing here (said aloud; under CI=true, a failure). */
const skip = skipWithout(unsyncedFsUnavailable());

/** The cut moments are fixed by the web; what writeback saved is drawn from this seed (POWER_CUT_SEED to replay another). */
const SEED = Number(process.env.POWER_CUT_SEED ?? 0x9c07);
const MAX_DEPTH = 8;
const MAX_ACTIVE_HOSTS = 8;
const ID = "blackout";
/** Cut the power once this share of the truth was served, then again at the next. */
const CUT_AT_SHARES = [0.3, 0.65];

let fixture: WebFixture;
let truth: Truth;
let trace: RequestTrace;
let lower: string;
let mountDir: string;
let dataDir: string;
/** Per cut: the trace's length at the cut, the kill's exit, and what the cut dropped. */
const cuts: { requests: number; killed: ExitResult; files: CutFile[]; restarted?: ExitResult }[] = [];
let final: ExitResult;
let mount: UnsyncedMount | undefined;

beforeAll(async () => {
  if (skip) return;
  fixture = await startWebFixture({
    seed: 31,
    hosts: 30,
    pages: 2000,
    maxArticlesPerHost: 150,
    responseDelayMs: 10,
  });
  truth = fixture.truth({ maxDepth: MAX_DEPTH });
  trace = traceRequests(fixture.web.recorder);
  lower = join(fixture.dir, "disk");
  mountDir = join(fixture.dir, "mnt");
  await mkdir(lower);
  await mkdir(mountDir);
  dataDir = join(mountDir, "data");
  const random = seededRandom(SEED);
  console.info(`power-cut seed: ${SEED}`);
  for (const [index, share] of CUT_AT_SHARES.entries()) {
    mount = await UnsyncedMount.mount(lower, mountDir, join(fixture.dir, `durable-${index}.json`));
    const agent = spawnAgent(fixture, {
      id: ID,
      dataDir,
      flags: ["--max-depth", String(MAX_DEPTH), "--max-active-hosts", String(MAX_ACTIVE_HOSTS)],
    });
    await waitForServed(Math.ceil(truth.urls.length * share), agent);
    // The cut lands while some of the crawl's data is not synced yet: otherwise it drops nothing.
    await stopWhileUnsynced(agent.pid, mount, random);
    agent.kill("SIGKILL");
    const killed = await agent.waitForExit();
    // Requests the dead process had already written reach the test web's event loop.
    await delay(200);
    const files = await mount.powerCut(random);
    mount = undefined;
    cuts.push({ requests: trace.requests.length, killed, files });
  }
  mount = await UnsyncedMount.mount(lower, mountDir, join(fixture.dir, "durable-final.json"));
  final = await spawnAgent(fixture, {
    id: ID,
    dataDir,
    flags: ["--max-depth", String(MAX_DEPTH), "--max-active-hosts", String(MAX_ACTIVE_HOSTS)],
  }).waitForExit();
  trace.stop();
}, 180_000);

afterAll(async () => {
  await mount?.release();
  await fixture?.stop();
});

async function waitForServed(pages: number, agent: UbicrawlProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (servedPages(fixture.web.recorder).size < pages) {
    if (agent.exited) throw new Error(`the agent exited before ${pages} pages were served: ${agent.stderr}`);
    if (Date.now() > deadline) throw new Error(`the agent did not serve ${pages} pages in time`);
    await delay(5);
  }
}

describe.skipIf(skip)("an agent whose power is cut twice mid-crawl", () => {
  it("lost unsynced bytes at each cut, mid-crawl", () => {
    expect(cuts.length).toBe(CUT_AT_SHARES.length);
    for (const cut of cuts) {
      expect(cut.killed.signal).toBe("SIGKILL");
      // Something was written after its last fsync and is gone now: the cut is real.
      expect(cutCrawlData(cut.files), JSON.stringify(cut.files)).toBe(true);
    }
    expect(servedPages(fixture.web.recorder).size).toBe(truth.urls.length);
  });

  it("starts again on what survived and completes the crawl", () => {
    expect(final.code, final.stderr).toBe(0);
    expect(final.stderr).toContain("stopped (done)");
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.extra).toEqual([]);
  });

  it("lost no page: every page of the web is in the WARC files, and in the crawl log", async () => {
    const records = await readWarcRecords(join(lower, "data"));
    const archived = new Set(
      records
        .filter((r) => r.type === "response" || r.type === "revisit")
        .map((r) => r.headers.get("warc-target-uri")),
    );
    expect(truth.urls.filter((url) => !archived.has(url))).toEqual([]);
    const logged = new Set(
      (await readCrawlLogOf(join(lower, "data"))).filter((e) => e.status > 0).map((e) => e.url),
    );
    expect(truth.urls.filter((url) => !logged.has(url))).toEqual([]);
  });

  it(`fetched again only URLs not durable at a cut: the last ${UNSYNCED_PAGES_PER_HOST} of a host before it`, () => {
    const inFlight = new Set<string>();
    let from = 0;
    for (const cut of cuts) {
      const pages = trace.requests.slice(from, cut.requests).filter((request) => !isRobotsUrl(request.url));
      for (const url of lastPagesOfEachHost(pages)) inFlight.add(url);
      from = cut.requests;
    }
    const repeated = crawlMetrics(servedPages(fixture.web.recorder), truth.urls).repeated;
    expect(repeated.length).toBeLessThanOrEqual(MAX_ACTIVE_HOSTS * UNSYNCED_PAGES_PER_HOST * cuts.length);
    for (const url of repeated) expect(inFlight.has(url), `${url} was fetched twice`).toBe(true);
  });
});
