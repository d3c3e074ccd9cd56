import type { CrawlLogEntry } from "../../src/storage/index.js";
import type { TestWebOptions } from "../../src/testweb/index.js";
import { isRobotsUrl, readCrawlLogSoFar, waitFor } from "../agent/harness.js";
import type { ClusterAgent } from "../cluster/cluster-harness.js";

/** What the continuous-crawl cluster tests share: a web that changes, and agents revisiting it. */

/** Every page is revisited this often (`--recrawl fixed`). */
export const INTERVAL_MS = 4000;

/** Flags of an agent that crawls continuously, revisiting every page each {@link INTERVAL_MS}. */
export const RECRAWL_FLAGS = [
  "--recrawl=fixed",
  `--recrawl-interval=${INTERVAL_MS}ms`,
  "--sitemaps=off",
  // Short enough that a host's first pass, ahead of its revisits in its queue, ends within the grace.
  "--delay-ms=10",
  "--log-level=info",
  // A continuous crawl without a horizon runs until it is stopped.
  "--exit-when-done=false",
  // Each agent's own IP limit: these bound revisits through membership changes by the hand-over alone;
  // under the cluster's, a crash holds the dead agent's addresses a lease and a fetch's time more.
  "--ip-limit=agent",
];

/** A small web, no mirrors nor trap, of which 30% of the pages change every second. */
export const CHANGING_WEB: TestWebOptions = {
  hosts: 8,
  pages: 120,
  seedCount: 1,
  mirrors: 0,
  trap: false,
  changes: { everyMs: 1000, percent: 30 },
};

/** True for a page's answered visit (robots.txt aside) counted by the recrawler. */
export function isAnsweredVisit(entry: CrawlLogEntry): boolean {
  return entry.status !== 0 && !isRobotsUrl(entry.url) && entry.visits !== undefined;
}

/** Waits until `agent` has revisited a page (a crawl-log entry of a second visit or more). */
export async function waitForRevisit(agent: ClusterAgent, what: string): Promise<void> {
  await firstToRevisit([agent], what);
}

/**
 * Waits until one of `agents` has revisited a page, and returns the first found; on a timeout the error
 * says what each one's crawl log held, whether it still runs and its last log lines (a lone agent of the web's 8 hosts may own none of them: they are
 * split by name and port, new each run).
 */
export async function firstToRevisit(agents: readonly ClusterAgent[], what: string): Promise<ClusterAgent> {
  const logs = new Map<ClusterAgent, CrawlLogEntry[]>();
  let found: ClusterAgent | undefined;
  await waitFor(
    async () => {
      for (const agent of agents) {
        const log = await readCrawlLogSoFar(agent.dataDir).catch(() => []);
        logs.set(agent, log);
        if (found === undefined && log.some((entry) => Number(entry.visits ?? 0) > 1)) found = agent;
      }
      return found !== undefined;
    },
    () =>
      `${what}:\n${agents
        .map((agent) => {
          const state = agent.process.exited ? "exited" : "running";
          const last = agent.process
            .stderrLines()
            .slice(-4)
            .map((line) => `    ${line.slice(0, 300)}`);
          return `  ${agent.id} (${state}): ${logs.get(agent)?.length ?? 0} crawl log entries; its last log lines:\n${last.join("\n")}`;
        })
        .join("\n")}`,
    60_000,
  );
  return found as ClusterAgent;
}
