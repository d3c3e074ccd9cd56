import { readFetches } from "../../report/index.js";
import type { LabCrawl } from "../lab-crawls.js";
import type { SimulationTiming } from "./parameters.js";
import { steadyRate } from "./simulated-cluster.js";

/**
 * What real crawls of the laboratory tell a simulation: how long fetches take, and what a page, a URL
 * received and a heartbeat cost the agents in CPU.
 */

/** A real crawl's figures a simulation is calibrated on, and compared with. */
export interface MeasuredCrawl {
  readonly agents: number;
  readonly crawl: LabCrawl;
  /** Each fetch's duration (ms), from the agents' crawl logs. */
  readonly fetchMs: readonly number[];
  /** Seconds from the first fetch's start to the last one's end. */
  readonly spanSeconds: number;
  /** Fetches a second an agent made over that span. */
  readonly pagesPerSecondPerAgent: number;
  /** The same over the crawl's middle (see {@link steadyRate}). */
  readonly steadyPagesPerSecondPerAgent: number;
  /** The agents' CPU seconds from their seeds to their exit; undefined if any agent's is unknown. */
  readonly cpuSeconds: number | undefined;
}

/** Reads the crawl logs of `crawl`'s agents. */
export async function measureLabCrawl(agents: number, crawl: LabCrawl): Promise<MeasuredCrawl> {
  const fetches = (await Promise.all(crawl.run.agents.map((agent) => readFetches(agent.dir)))).flat();
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const fetch of fetches) {
    first = Math.min(first, fetch.atMs);
    last = Math.max(last, fetch.atMs + fetch.durationMs);
  }
  const spanSeconds = fetches.length === 0 ? 0 : (last - first) / 1000;
  const cpu = crawl.run.agents.map((agent) => agent.crawlCpuSeconds);
  return {
    agents,
    crawl,
    fetchMs: fetches.map((fetch) => fetch.durationMs),
    spanSeconds,
    pagesPerSecondPerAgent: spanSeconds === 0 ? 0 : fetches.length / spanSeconds / agents,
    steadyPagesPerSecondPerAgent:
      steadyRate(fetches.map((fetch) => fetch.atMs + fetch.durationMs).sort((a, b) => a - b)) / agents,
    cpuSeconds: cpu.every((seconds) => seconds !== undefined) ? cpu.reduce((a, b) => a + b, 0) : undefined,
  };
}

/** Heartbeat CPU ms an agent of `agents` spends a second at `heartbeatMs` (each pair: a request and an answer). */
export function heartbeatCpuMsPerSecond(
  agents: number,
  heartbeatMs: number,
  costs: Pick<SimulationTiming, "cpuMsPerHeartbeat" | "cpuMsPerGossipEntry">,
): number {
  if (agents < 2) return 0;
  return (
    (2 * (agents - 1) * (costs.cpuMsPerHeartbeat + costs.cpuMsPerGossipEntry * agents) * 1000) / heartbeatMs
  );
}

/** CPU costs of a real agent, measured on full CPUs. */
export interface MeasuredCosts {
  readonly cpuMsPerPage: number;
  readonly cpuMsPerUrlReceived: number;
}

/**
 * An agent's CPU a page, from the crawl with the fewest agents (the least exchange and membership
 * work); its CPU a URL received, from the one with the most: what its agents spent beyond their pages
 * and their heartbeats, over the URLs they sent each other. Both undefined without CPU figures.
 */
export function measureCosts(
  crawls: readonly MeasuredCrawl[],
  heartbeatMs: number,
  heartbeatCosts: Pick<SimulationTiming, "cpuMsPerHeartbeat" | "cpuMsPerGossipEntry">,
): MeasuredCosts | undefined {
  const known = crawls.filter((c) => c.cpuSeconds !== undefined && c.crawl.fetches > 0);
  const fewest = known.reduce<MeasuredCrawl | undefined>(
    (a, b) => (a && a.agents <= b.agents ? a : b),
    undefined,
  );
  if (!fewest) return undefined;
  const perPage = (measured: MeasuredCrawl) =>
    ((measured.cpuSeconds as number) * 1000 -
      heartbeatCpuMsPerSecond(measured.agents, heartbeatMs, heartbeatCosts) *
        measured.agents *
        measured.spanSeconds) /
    measured.crawl.fetches;
  const cpuMsPerPage = Math.max(0, perPage(fewest));
  const most = known.reduce((a, b) => (a.agents >= b.agents ? a : b));
  const extra = (perPage(most) - cpuMsPerPage) * most.crawl.fetches;
  const cpuMsPerUrlReceived = most.crawl.urlsSent === 0 ? 0 : Math.max(0, extra / most.crawl.urlsSent);
  return { cpuMsPerPage, cpuMsPerUrlReceived };
}
