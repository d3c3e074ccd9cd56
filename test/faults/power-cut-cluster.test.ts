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
  type RequestTrace,
  readWarcRecords,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, hostKeyOf, startClusterAgent } from "../cluster/cluster-harness.js";
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
 * A power cut to one agent of three mid-crawl, and its restart on what its disk kept: the URLs it had
 * acknowledged to its peers and the hosts it held were synced before it said so, so the crawl ends
 * complete, every page in some agent's WARC files, and only the victim's last fetches are repeated.
 */

/** The FUSE layer is missing here (said aloud; under CI=true, a failure). */
const skip = skipWithout(unsyncedFsUnavailable());

const SEED = Number(process.env.POWER_CUT_SEED ?? 0x5eed);
const MAX_ACTIVE_HOSTS = 6;
/**
 * Few hosts at once and a politeness delay: the crawl outlasts the cut and the restart. The victim's
 * hosts wait for it (a grace longer than the restart): only it can fetch them, from what it kept.
 */
const GRACE_MS = 60_000;
const FLAGS = [
  ...["--max-active-hosts", String(MAX_ACTIVE_HOSTS), "--delay-ms", "15"],
  ...["--takeover-delay-ms", String(GRACE_MS)],
];

let fixture: WebFixture;
let truth: Truth;
let trace: RequestTrace;
let agents: ClusterAgent[];
let victim: ClusterAgent;
let cutFiles: CutFile[];
let requestsAtCut: number;
let exits: ExitResult[];
let endedAtMs: number;
let mount: UnsyncedMount | undefined;

beforeAll(async () => {
  if (skip) return;
  fixture = await startWebFixture({ hosts: 40, pages: 1500, seed: 13, responseDelayMs: 4 });
  truth = fixture.truth();
  trace = traceRequests(fixture.web.recorder);
  const lower = join(fixture.dir, "disk");
  const mountDir = join(fixture.dir, "mnt");
  await mkdir(lower);
  await mkdir(mountDir);
  const dataDir = join(mountDir, "data-agent-2");
  mount = await UnsyncedMount.mount(lower, mountDir, join(fixture.dir, "durable.json"));
  const first = await startClusterAgent(fixture, { id: "agent-1", flags: FLAGS });
  victim = await startClusterAgent(fixture, { id: "agent-2", join: [first.address], flags: FLAGS, dataDir });
  const third = await startClusterAgent(fixture, {
    id: "agent-3",
    join: [first.address, victim.address],
    seeds: true,
    flags: FLAGS,
  });
  await waitFor(
    () => servedPages(fixture.web.recorder).size >= truth.urls.length * 0.35,
    "35% of the crawl",
    60_000,
  );
  const random = seededRandom(SEED);
  await stopWhileUnsynced(victim.process.pid, mount, random);
  victim.process.kill("SIGKILL");
  await victim.process.waitForExit(10_000);
  await delay(200);
  requestsAtCut = trace.requests.length;
  console.info(`power-cut seed: ${SEED}`);
  cutFiles = await mount.powerCut(random);
  mount = await UnsyncedMount.mount(lower, mountDir, join(fixture.dir, "durable-after.json"));
  const back = await startClusterAgent(fixture, {
    id: "agent-2",
    join: [first.address],
    flags: FLAGS,
    dataDir,
  });
  agents = [first, back, third];
  exits = await Promise.all(agents.map((agent) => agent.process.waitForExit(120_000)));
  endedAtMs = performance.now();
  trace.stop();
}, 240_000);

afterAll(async () => {
  await mount?.release();
  await fixture?.stop();
});

describe.skipIf(skip)("a cluster agent whose power is cut mid-crawl", () => {
  it("lost what it had not synced, mid-crawl", () => {
    expect(cutCrawlData(cutFiles), JSON.stringify(cutFiles)).toBe(true);
    expect(requestsAtCut).toBeLessThan(truth.urls.length);
  });

  it("restarts on what survived, and the cluster completes the crawl", async () => {
    for (const [index, exit] of exits.entries()) {
      expect(exit.code, `${agents[index]?.id}: ${exit.stderr}`).toBe(0);
    }
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.extra).toEqual([]);
  });

  it("ends soon after its last page, not when the victim's grace would have run out", () => {
    // Hosts parked for the victim's grace on the others are woken when it is back: otherwise they sit
    // out the 60 s before the crawl can be seen to end.
    const lastRequestAtMs = Math.max(
      ...trace.requests.map((request) => request.endedAtMs ?? request.beganAtMs),
    );
    expect(endedAtMs - lastRequestAtMs).toBeLessThan(GRACE_MS / 2);
  });

  it("lost no page: every page of the web is in some agent's WARC files", async () => {
    const archived = new Set<string>();
    for (const agent of agents) {
      for (const record of await readWarcRecords(agent.dataDir)) {
        if (record.type === "response" || record.type === "revisit")
          archived.add(record.headers.get("warc-target-uri") as string);
      }
    }
    expect(truth.urls.filter((url) => !archived.has(url))).toEqual([]);
  });

  it("fetched again only pages of the victim's hosts in flight at the cut", async () => {
    const owners = await assignmentOf(agents.map((agent) => agent.id));
    const inFlight = new Set(lastPagesOfEachHost(trace.requests.slice(0, requestsAtCut)));
    const repeated = crawlMetrics(servedPages(fixture.web.recorder), truth.urls).repeated;
    expect(repeated.length).toBeLessThanOrEqual(MAX_ACTIVE_HOSTS * UNSYNCED_PAGES_PER_HOST);
    for (const url of repeated) {
      expect(owners.ownerOf(hostKeyOf(url)), url).toBe(victim.id);
      expect(inFlight.has(url), `${url} was fetched twice`).toBe(true);
    }
  });
});
