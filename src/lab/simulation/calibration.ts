import { request } from "node:http";
import { Matrix, solve } from "ml-matrix";
import { ErrorCode, UbiError } from "../../errors.js";
import { readFetches } from "../../report/index.js";
import type { RunningTestWeb } from "../../testweb/index.js";
import type { LabCrawl } from "../lab-crawls.js";
import type { SimulationTiming } from "./parameters.js";
import { steadyRate } from "./simulated-cluster.js";

/**
 * What real crawls of the laboratory tell a simulation: how long fetches take, and what a page, a URL
 * received and a heartbeat cost the agents in CPU.
 */

/** A real crawl's figures a simulation is calibrated on, and compared with. */
export interface MeasuredCrawl {
  /** Its agents, all started with seeds. */
  readonly agents: number;
  readonly crawl: LabCrawl;
  /** Fetches a second an agent made over the crawl's middle (see {@link steadyRate}). */
  readonly steadyPagesPerSecondPerAgent: number;
  /** The agents' CPU seconds from their seeds to their exit; undefined if any agent's is unknown. */
  readonly cpuSeconds: number | undefined;
}

/**
 * How long the test web takes to answer, without an agent's CPU in the way: `urls` (of `web`, served
 * over HTTP) fetched one after the other from this process, each timed from the request to the end of
 * its body, in ms. The agents' own logs time their fetches too, but those durations include the wait
 * for their CPU, which a simulation models apart.
 */
export async function sampleFetchTimes(web: RunningTestWeb, urls: readonly string[]): Promise<number[]> {
  if (web.model.options.scheme !== "http") {
    throw new UbiError(ErrorCode.InvalidArgument, "fetch times are sampled from a test web served over HTTP");
  }
  const times: number[] = [];
  for (const url of urls) {
    const { hostname, pathname, search, host } = new URL(url);
    const ip = web.model.hosts[web.model.hostIndexByName.get(hostname) ?? -1]?.ip;
    if (ip === undefined) continue;
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      const sent = request(
        { host: ip, port: web.port, path: pathname + search, headers: { host } },
        (response) => {
          response.resume();
          response.once("end", resolve);
          response.once("error", reject);
        },
      );
      sent.once("error", reject);
      sent.end();
    });
    times.push(performance.now() - started);
  }
  return times;
}

/** Reads the crawl logs of `crawl`'s agents. */
export async function measureLabCrawl(agents: number, crawl: LabCrawl): Promise<MeasuredCrawl> {
  const fetches = (await Promise.all(crawl.run.agents.map((agent) => readFetches(agent.dir)))).flat();
  const cpu = crawl.run.agents.map((agent) => agent.crawlCpuSeconds);
  return {
    agents,
    crawl,
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

/** CPU costs of a real agent, measured on full CPUs (see {@link SimulationTiming}). */
export interface MeasuredCosts {
  /** CPU ms a page fetched. */
  readonly cpuMsPerPage: number;
  /** CPU ms a URL received from another agent. */
  readonly cpuMsPerUrlReceived: number;
  /** CPU ms an agent spends a second, whatever its pages: its timers, its code warming up, the end. */
  readonly cpuMsPerAgentSecond: number;
}

/**
 * An agent's CPU a page, a URL received and a second of its life, fitted to the crawls' CPU from seeds
 * to exit less their heartbeats' over that time (the measured per-message costs) by least squares with
 * no cost below zero: each crawl says CPU = pages × a page's + URLs sent × a URL's + agents × seconds ×
 * an agent's second. The crawls differ in little but their agents, so the three are told apart
 * poorly: runs repeated on one machine give quite different splits (the report says which).
 * Undefined without CPU figures.
 */
export function measureCosts(
  crawls: readonly MeasuredCrawl[],
  heartbeatMs: number,
  heartbeatCosts: Pick<SimulationTiming, "cpuMsPerHeartbeat" | "cpuMsPerGossipEntry">,
): MeasuredCosts | undefined {
  const known = crawls.filter((c) => c.cpuSeconds !== undefined && c.crawl.fetches > 0);
  if (known.length === 0) return undefined;
  const rows = known.map((c) => [c.crawl.fetches, c.crawl.urlsSent, c.agents * c.crawl.seconds]);
  const cpuMs = known.map(
    (c) =>
      (c.cpuSeconds as number) * 1000 -
      heartbeatCpuMsPerSecond(c.agents, heartbeatMs, heartbeatCosts) * c.agents * c.crawl.seconds,
  );
  const [cpuMsPerPage = 0, cpuMsPerUrlReceived = 0, cpuMsPerAgentSecond = 0] = nonNegativeLeastSquares(
    rows,
    cpuMs,
  );
  return { cpuMsPerPage, cpuMsPerUrlReceived, cpuMsPerAgentSecond };
}

/**
 * The x ≥ 0 minimizing |A x − b|, for a few unknowns: the best of the unconstrained least-squares
 * solutions (ml-matrix) over every subset of unknowns allowed to be non-zero whose solution has no
 * negative value. Unknowns that no row determines stay 0.
 */
export function nonNegativeLeastSquares(
  rows: readonly (readonly number[])[],
  b: readonly number[],
): number[] {
  const unknowns = rows[0]?.length ?? 0;
  let best: { x: number[]; residual: number } = {
    x: new Array<number>(unknowns).fill(0),
    residual: Number.POSITIVE_INFINITY,
  };
  for (let subset = 0; subset < 1 << unknowns; subset++) {
    const columns = Array.from({ length: unknowns }, (_, j) => j).filter((j) => (subset >> j) & 1);
    const x = new Array<number>(unknowns).fill(0);
    if (columns.length > 0 && columns.length <= rows.length) {
      const a = new Matrix(rows.map((row) => columns.map((j) => row[j] as number)));
      const solved = solve(a, Matrix.columnVector([...b]), true).to1DArray();
      if (solved.some((value) => !Number.isFinite(value) || value < 0)) continue;
      columns.forEach((j, k) => {
        x[j] = solved[k] as number;
      });
    } else if (columns.length > 0) continue;
    const residual = rows.reduce((sum, row, i) => {
      const error = row.reduce((acc, value, j) => acc + value * (x[j] as number), 0) - (b[i] as number);
      return sum + error * error;
    }, 0);
    if (residual < best.residual) best = { x, residual };
  }
  return best.x;
}
