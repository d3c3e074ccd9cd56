import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import {
  type ExitResult,
  errorLine,
  logEvent,
  readCrawlLogOf,
  readCrawlLogSoFar,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { type ClusterAgent, startClusterAgent } from "../cluster/cluster-harness.js";
import {
  CHANGING_WEB,
  INTERVAL_MS,
  isAnsweredVisit,
  RECRAWL_FLAGS,
  waitForRevisit,
} from "./recrawl-cluster.js";

/**
 * Revisit schedules travel with their hosts: a real agent crawls continuously (`--recrawl fixed`), a
 * second joins during its first pass (hosts move to it, their page histories with them), and leaves
 * gracefully later (they move back). Every page is revisited within its interval plus a grace after
 * each change of owner, by one agent at a time: never twice for one due time, and never forgotten.
 */
/**
 * How late a revisit may be: after a change of owner, the join or leave noticed and the host handed
 * over; at any time, the host's first pass ahead of it in its queue, on a machine shared with others.
 */
const GRACE_MS = 8000;
/** Two visits of a page this much closer than the interval are two visits for one due time. */
const SLACK_MS = 500;

/** Visits of one URL: when (ms since the epoch) and by which agent, in time order. */
type Visits = { atMs: number; agent: string; visits: number }[];

describe("--recrawl fixed through a join and a graceful leave", () => {
  let fixture: WebFixture;
  let first: ClusterAgent;
  let second: ClusterAgent;
  let exits: { first: ExitResult; second: ExitResult };
  let logs: { first: CrawlLogEntry[]; second: CrawlLogEntry[] };
  let joinedAtMs: number;
  let leftAtMs: number;
  let endAtMs: number;

  beforeAll(async () => {
    fixture = await startWebFixture(CHANGING_WEB);
    first = await startClusterAgent(fixture, { id: "agent-1", seeds: true, flags: RECRAWL_FLAGS });
    // Mid-crawl: the first pass has begun and is not over.
    await waitFor(
      async () => (await readCrawlLogSoFar(first.dataDir).catch(() => [])).length >= 10,
      "agent-1's first pages",
      30_000,
    );
    joinedAtMs = Date.now();
    second = await startClusterAgent(fixture, {
      id: "agent-2",
      join: [first.address],
      flags: RECRAWL_FLAGS,
    });
    // The joiner revisits pages whose histories it was handed (their visits go on from agent-1's).
    await waitForRevisit(second, "agent-2 to revisit a page handed over");
    await delay(INTERVAL_MS + 2000);
    second.process.kill("SIGTERM");
    const secondExit = await second.process.waitForExit(30_000);
    leftAtMs = Date.now();
    // Long enough that a schedule lost in the leave would show: every page is due again meanwhile.
    await delay(INTERVAL_MS + GRACE_MS + 2000);
    endAtMs = Date.now();
    first.process.kill("SIGTERM");
    exits = { first: await first.process.waitForExit(30_000), second: secondExit };
    logs = { first: await readCrawlLogOf(first.dataDir), second: await readCrawlLogOf(second.dataDir) };
  }, 180_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  /** Every answered visit of each page (robots.txt aside), from both agents' crawl logs. */
  function visitsByUrl(): Map<string, Visits> {
    const byUrl = new Map<string, Visits>();
    for (const [agent, log] of [
      ["agent-1", logs.first],
      ["agent-2", logs.second],
    ] as const) {
      for (const entry of log) {
        if (!isAnsweredVisit(entry)) continue;
        const visits = byUrl.get(entry.url) ?? [];
        visits.push({ atMs: Date.parse(entry.ts), agent, visits: entry.visits as number });
        byUrl.set(entry.url, visits);
      }
    }
    for (const visits of byUrl.values()) visits.sort((a, b) => a.atMs - b.atMs);
    return byUrl;
  }

  it("both agents exit 0, and each took in histories with the hosts it was handed", () => {
    expect(exits.second.code, errorLine(exits.second.stderr)).toBe(0);
    expect(exits.first.code, errorLine(exits.first.stderr)).toBe(0);
    const received = (stderr: string) =>
      (logEvent(stderr, "stopped")?.recrawl as { received?: number } | undefined)?.received ?? 0;
    expect(received(exits.second.stderr)).toBeGreaterThan(0);
    expect(received(exits.first.stderr)).toBeGreaterThan(0);
  });

  it("goes on with each page's history on its new owner: visits count on, and no page is fetched anew", () => {
    const byUrl = visitsByUrl();
    expect(byUrl.size).toBeGreaterThan(60);
    for (const [url, visits] of byUrl) {
      // One visit each: 1, 2, 3, … whoever made it.
      expect(
        visits.map((visit) => visit.visits),
        url,
      ).toEqual(visits.map((_, i) => i + 1));
    }
    // Pages moved both ways: agent-2 revisited pages agent-1 had visited, and agent-1 those agent-2 had.
    const moved = (from: string, to: string) =>
      [...byUrl.values()].filter((visits) =>
        visits.some((visit, i) => visit.agent === to && visits[i - 1]?.agent === from),
      ).length;
    expect(moved("agent-1", "agent-2")).toBeGreaterThan(0);
    expect(moved("agent-2", "agent-1")).toBeGreaterThan(0);
  });

  it("revisits every page within its interval plus the grace, and never twice for one due time", () => {
    for (const [url, visits] of visitsByUrl()) {
      for (const [i, visit] of visits.entries()) {
        const next = visits[i + 1]?.atMs ?? endAtMs;
        const gap = next - visit.atMs;
        const where = `${url}: visit ${visit.visits} by ${visit.agent}, then ${visits[i + 1]?.agent ?? "none before the end"} ${gap} ms later (${JSON.stringify(visits)}; joined at ${joinedAtMs}, left at ${leftAtMs})`;
        expect(gap, where).toBeLessThanOrEqual(INTERVAL_MS + GRACE_MS);
        if (i + 1 < visits.length) expect(gap, where).toBeGreaterThanOrEqual(INTERVAL_MS - SLACK_MS);
      }
    }
    expect(endAtMs - leftAtMs).toBeGreaterThan(INTERVAL_MS + GRACE_MS);
  });
});
