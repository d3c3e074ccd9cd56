import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  isRobotsUrl,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, startCluster, startClusterAgent } from "./cluster-harness.js";
import { agentsAt, FLAGS, waitForExits } from "./ip-politeness-harness.js";

/**
 * Issue 35's "Done when", with real agent processes: 200 hosts on one address, 50 more on another that
 * takes 5 requests a second (429 beyond), crawled under `--ip-limit cluster` by 4 agents that grow to 8
 * by joins, then lose the big address's authority to a SIGKILL and the limited address's authority to
 * a graceful leave: the test web never sees more than `--max-per-ip` requests at once at either
 * address, and every page is fetched; each address is crawled by several agents. The gaps between
 * starts there are measured and checked: none is under the IP delay (within the test web's own lag).
 *
 * One crawl that grows from 4 agents to 8 rather than one crawl of each: the limited address alone
 * takes most of a minute (its ~180 requests at 5 a second, and the holds its 429s bring), so two
 * crawls would take two; this one is crawled by 4 agents, then by 8 through the joins' hand-overs, then
 * by 7 and 6.
 *
 * In the timed tier, alone on the machine: its check of the gaps between starts, which another test
 * file crawling beside it would distort (the stamps lag by this process's event-loop delays), wants it.
 */

/** `--ip-delay-ms`: long enough to check against the recorder's stamps, short enough for 700 requests at one address. */
const IP_DELAY_MS = 50;
/** `--max-per-ip` in {@link FLAGS}. */
const MAX_PER_IP = 2;
/**
 * How much shorter than the IP delay a gap between two starts may look at the test web: it stamps a
 * request when its event loop (this process's, shared with vitest and the test web serving eight
 * agents) reads it, so a stamp late by that loop's delay brings it closer to the next one. The loop's
 * delay is measured and printed: its 99th percentile was 16–22 ms on a quiet machine (a 2-CPU one
 * running another suite beside), its largest 90–110 ms; under a load of 20, 80 ms and 450–900 ms, and
 * gaps of 0.1–9 ms were seen then, which say nothing of the agents. The agents' own spacing is
 * unit-tested (ip-start-spacing, ip-authority, cluster-ip-gate).
 */
const TOLERANCE_MS = 25;

/**
 * The issue's web, as small as it stays meaningful: 200 hosts on one address and 50 on another taking 5
 * requests a second, 6 of their own; no cross-host links but the home pages' and at depth 0 only, so a
 * shared host costs its robots.txt and two or three pages (724 requests at the big address, ~225 at the
 * limited one, 429s included). Answers take 5 ms: the big address's rate is its authority's spacing of
 * slots (each spaced from the last one's release, since it cannot see starts), which a slower answer
 * slows further.
 */
const WEB = {
  hosts: 256,
  pages: 2560,
  seed: 35,
  responseDelayMs: 5,
  crossLinkPercent: 0,
  trap: false,
  ipGroups: [{ hosts: 200 }, { hosts: 50, requestsPerSecond: 5 }],
} as const;

/**
 * The cluster-wide limit, the IP delay, home pages and what they link to only, no `/sitemap.xml` probe
 * (250 requests more at the two addresses; the truth's sitemap URLs are left out), and attempts enough
 * for the 429s of the limited address.
 */
const AGENT_FLAGS = [
  ...FLAGS,
  "--ip-delay-ms",
  String(IP_DELAY_MS),
  "--max-depth",
  "0",
  "--sitemaps",
  "off",
  "--max-fetch-attempts",
  "10",
];

/** What one address saw: requests, the most at once, the gaps between starts, 429s, and who crawled it. */
interface AtAddress {
  readonly ip: string;
  readonly requests: number;
  readonly atOnce: number;
  readonly leastGapMs: number;
  /** Between each two starts in a row, ms. */
  readonly gaps: number[];
  readonly gapsUnderDelay: number[];
  readonly refused: number;
  readonly crawledBy: string[];
}

/** What the crawl came to: the pages missing, and each shared address's figures. */
interface Crawled {
  readonly missing: string[];
  readonly coverage: number;
  readonly addresses: AtAddress[];
  /** Every figure and event, for failure messages. */
  readonly summary: string;
  /** This process's largest event-loop delay during the crawl, ms (the test web's stamps lag by it). */
  readonly loopMaxDelayMs: number;
}

/** The ids of `agents`. */
function idsOf(agents: readonly ClusterAgent[]): string[] {
  return agents.map((agent) => agent.id);
}

/**
 * Crawls the issue's web: 4 agents, then 4 joins, then a SIGKILL of the big address's authority at 15%
 * of the pages, then a graceful leave of the limited address's authority at 35%; to the crawl's end.
 */
async function crawl(fixture: WebFixture): Promise<Crawled> {
  const web = fixture.web;
  const [big, limited] = [web.model.hosts[0]?.ip as string, web.model.hosts[200]?.ip as string];
  expect(web.model.hosts.filter((host) => host.ip === big)).toHaveLength(200);
  expect(web.model.hosts.filter((host) => host.ip === limited)).toHaveLength(50);
  const truthUrls = fixture.truth({ maxDepth: 0 }).urls.filter((url) => !url.endsWith("/sitemap.xml"));
  const trace = traceRequests(web.recorder);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const startedAtMs = performance.now();
  const pagesServed = () => [...web.recorder.servedCounts().keys()].filter((url) => !isRobotsUrl(url)).length;
  const at = (share: number) => () => pagesServed() >= truthUrls.length * share;
  const log: string[] = [];
  const note = (what: string) =>
    log.push(`${((performance.now() - startedAtMs) / 1000).toFixed(1)} s: ${what}`);

  const agents = await startCluster(fixture, 4, AGENT_FLAGS);
  note("4 agents started");
  await waitFor(at(0.05), "5% of the pages", 60_000, 100);
  // Four joins: 8 agents, each joining through the live ones.
  for (let i = 5; i <= 8; i++) {
    agents.push(
      await startClusterAgent(fixture, {
        id: `agent-${i}`,
        join: agents.map((agent) => agent.address),
        flags: AGENT_FLAGS,
      }),
    );
    note(`agent-${i} joined`);
  }
  await waitFor(at(0.15), "15% of the pages", 60_000, 100);
  // SIGKILL the big address's authority among the eight.
  const victimId = (await assignmentOf(idsOf(agents))).ownerOfRareKey(big);
  const victim = agents.find((agent) => agent.id === victimId) as ClusterAgent;
  victim.process.kill("SIGKILL");
  await victim.process.waitForExit(10_000);
  note(`${victimId} (authority of ${big}) killed`);
  const alive = agents.filter((agent) => agent !== victim);
  await waitFor(at(0.35), "35% of the pages", 60_000, 100);
  // A graceful leave: the limited address's authority among the seven, or another one.
  const authority = (await assignmentOf(idsOf(alive))).ownerOfRareKey(limited);
  const leaver = alive.find((agent) => agent.id === authority) ?? (alive[0] as ClusterAgent);
  leaver.process.kill("SIGTERM");
  const left = await leaver.process.waitForExit(30_000);
  note(
    `${leaver.id} (${leaver.id === authority ? `authority of ${limited}` : "an agent"}) left: exit ${left.code}`,
  );
  expect(left.code, `${leaver.id} leaving; stderr:\n${left.stderr.slice(-4000)}`).toBe(0);
  await waitForExits(alive.filter((agent) => agent !== leaver));
  note("the rest exited");
  trace.stop();
  loopDelay.disable();

  const metrics = crawlMetrics(servedPages(web.recorder), truthUrls);
  const addresses: AtAddress[] = [];
  for (const ip of [big, limited]) {
    const starts = trace.requests.filter((request) => request.ip === ip).map((request) => request.beganAtMs);
    const gaps = starts.slice(1).map((startMs, i) => startMs - (starts[i] as number));
    addresses.push({
      ip,
      requests: starts.length,
      atOnce: web.recorder.maxConcurrencyAtIp(ip),
      leastGapMs: Math.min(...gaps),
      gaps,
      gapsUnderDelay: gaps.filter((gapMs) => gapMs < IP_DELAY_MS).map((gapMs) => Math.round(gapMs * 10) / 10),
      refused: web.recorder.refusedAtIp(ip),
      crawledBy: await agentsAt(fixture, agents, ip),
    });
  }
  const summary = [
    ...log,
    `${metrics.unique} of ${truthUrls.length} pages (coverage ${metrics.coverage}), ${metrics.extra.length} extra, overlap ${metrics.overlap.toFixed(3)}`,
    ...addresses.map(
      (a) =>
        `${a.ip}: ${a.requests} requests, at once ≤ ${a.atOnce}, least gap ${a.leastGapMs.toFixed(1)} ms, under ${IP_DELAY_MS} ms: [${a.gapsUnderDelay.join(", ")}], 429s ${a.refused}; crawled by ${a.crawledBy.join(", ")}`,
    ),
    `this process's event-loop delay: max ${(loopDelay.max / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms`,
  ].join("\n");
  console.log(summary);
  return {
    missing: metrics.missing,
    coverage: metrics.coverage,
    addresses,
    summary,
    loopMaxDelayMs: loopDelay.max / 1e6,
  };
}

describe("per-IP politeness across real agents: issue 35's shared addresses, 4 agents growing to 8, through a SIGKILL of an address's authority and a graceful leave", () => {
  let fixture: WebFixture | undefined;
  let crawled: Crawled;

  beforeAll(async () => {
    fixture = await startWebFixture(WEB);
    crawled = await crawl(fixture);
  }, 180_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  it("fetches every page", () => {
    expect(crawled.missing, crawled.summary).toEqual([]);
    expect(crawled.coverage).toBe(1);
  });

  it("never has more than --max-per-ip requests at once at either address, though several agents crawl each", () => {
    for (const address of crawled.addresses) {
      expect(address.atOnce, `${address.ip}\n${crawled.summary}`).toBeLessThanOrEqual(MAX_PER_IP);
      expect(address.crawledBy.length, `${address.ip}\n${crawled.summary}`).toBeGreaterThanOrEqual(4);
    }
  });

  // Held since a request's start is taken where it is written: the least gap at the big address was
  // 31.1–56.1 ms in 5 runs at loads of 2–8, 49.4 ms alone and 45.6 ms beside two other system files
  // (2026-11-30); before, 0.1–11.7 ms in 5 of 6 runs.
  // A stall of this process's event loop longer than the tolerance may bring one stamp that much closer
  // to the next (CI, 2026-11-30: one gap of 18.7 ms at the big address, the loop's largest delay 172 ms,
  // its 99th percentile 15.8 ms): then one gap under the bound is allowed at each address, not two.
  it("never starts two requests at either address closer than the IP delay, as the server sees them", () => {
    const allowed = crawled.loopMaxDelayMs > TOLERANCE_MS ? 1 : 0;
    for (const address of crawled.addresses) {
      const under = address.gaps.filter((gapMs) => gapMs < IP_DELAY_MS - TOLERANCE_MS);
      expect(under.length, `${address.ip}\n${crawled.summary}`).toBeLessThanOrEqual(allowed);
    }
  });
});
