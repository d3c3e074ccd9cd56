import { round } from "../crawl-metrics.js";
import type { Check, ExperimentResult, Plot, Table } from "../experiment.js";
import { linePlot } from "../plot.js";
import { markdownTable } from "../report-writer.js";
import type { MeasuredCosts, MeasuredCrawl } from "../simulation/calibration.js";
import { MEASURED_HEARTBEAT_COSTS } from "../simulation/parameters.js";
import type { SimulationResult } from "../simulation/simulated-cluster.js";

/** The scaling experiment's figures, and its report: tables, plots, the claims checked. */

/** A real crawl, and the simulation of the same crawl. */
export interface Validation {
  readonly real: MeasuredCrawl;
  readonly simulated: SimulationResult;
  /** Share of one CPU each real agent had. */
  readonly cpuShare: number;
}

/** A simulated size: the crawl without a fault, and the one with agents killed halfway. */
export interface Projection {
  readonly agents: number;
  readonly heartbeatMs: number;
  readonly heartbeatCpuShare: number;
  readonly plain: SimulationResult;
  readonly faulty: SimulationResult;
  readonly killed: number;
}

/** The report of a scaling run: `method` is the experiment's description, `labHeartbeatMs` the real agents' heartbeat. */
export function scalingReport(
  validations: readonly Validation[],
  projections: readonly Projection[],
  costs: MeasuredCosts,
  parameters: Record<string, string | number>,
  method: string,
  labHeartbeatMs: number,
): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "agents",
      "kind",
      "steady_pages_per_s_per_agent",
      "coverage",
      "overhead",
      "batches_per_page",
      "heartbeats_per_page",
      "heartbeat_ms",
      "heartbeat_cpu",
      "refetched_after_kill",
      "recovery_s",
    ],
    rows: [
      ...validations.map(({ real }) => [
        real.agents,
        "real",
        round(real.steadyPagesPerSecondPerAgent, 1),
        round(real.crawl.coverage, 5),
        round(real.crawl.overhead),
        round(real.crawl.batchesSent / Math.max(1, real.crawl.fetches), 5),
        "",
        labHeartbeatMs,
        "",
        "",
        "",
      ]),
      ...validations.map(({ simulated }) => simulatedRow(simulated, "simulated", labHeartbeatMs)),
      ...projections.map((p) => [
        ...simulatedRow(p.plain, "projected", p.heartbeatMs).slice(0, 8),
        round(p.heartbeatCpuShare),
        p.faulty.fetches - p.faulty.distinct - (p.plain.fetches - p.plain.distinct),
        p.faulty.gapSeconds === undefined ? "" : round(p.faulty.gapSeconds, 2),
      ]),
    ],
  };
  const validation: Table = {
    name: "validation",
    columns: [
      "agents",
      "cpu_share",
      "real_coverage",
      "sim_coverage",
      "real_overhead",
      "sim_overhead",
      "overhead_diff",
      "real_batches",
      "sim_batches",
      "real_steady_pages_per_s_per_agent",
      "sim_steady_pages_per_s_per_agent",
    ],
    rows: validations.map(({ real, simulated, cpuShare }) => [
      real.agents,
      round(cpuShare, 3),
      round(real.crawl.coverage, 5),
      round(simulated.coverage, 5),
      round(real.crawl.overhead),
      round(simulated.overhead),
      round(relativeDifference(simulated.overhead, real.crawl.overhead)),
      real.crawl.batchesSent,
      simulated.batchesSent,
      round(real.steadyPagesPerSecondPerAgent, 1),
      round(simulated.steadyPagesPerSecondPerAgent, 1),
    ]),
  };
  const rates = [
    ...validations.map(({ real }) => ({
      agents: real.agents,
      kind: "real",
      rate: real.steadyPagesPerSecondPerAgent,
    })),
    ...validations.map(({ simulated }) => ({
      agents: simulated.agents,
      kind: "simulated (this machine)",
      rate: simulated.steadyPagesPerSecondPerAgent,
    })),
    ...projections.map((p) => ({
      agents: p.agents,
      kind: "simulated (a CPU each)",
      rate: p.plain.steadyPagesPerSecondPerAgent,
    })),
  ];
  const agents = { field: "agents", title: "agents", log: true } as const;
  const plots: Plot[] = [
    linePlot("pages-per-agent", "Pages a second per agent against agents", rates, {
      x: agents,
      y: { field: "rate", title: "pages/s per agent" },
      color: { field: "kind", title: "" },
    }),
    linePlot(
      "recovery",
      "Seconds until a dead agent's hosts are crawled again, and the heartbeat interval",
      projections.flatMap((p) => [
        { agents: p.agents, what: "recovery (s)", seconds: p.faulty.gapSeconds ?? null },
        { agents: p.agents, what: "heartbeat interval (s)", seconds: p.heartbeatMs / 1000 },
      ]),
      {
        x: agents,
        y: { field: "seconds", title: "seconds", log: true },
        color: { field: "what", title: "" },
      },
    ),
  ];
  return {
    title: "Pages a second per agent as agents grow: real agents, then simulated",
    method,
    parameters: {
      ...parameters,
      "CPU a page (measured)": `${costs.cpuMsPerPage.toFixed(3)} ms`,
      "CPU a URL received (measured)": `${costs.cpuMsPerUrlReceived.toFixed(4)} ms`,
      "CPU an agent spends a second for itself (measured)": `${costs.cpuMsPerAgentSecond.toFixed(1)} ms`,
      "CPU a heartbeat message (bench/README)": `${MEASURED_HEARTBEAT_COSTS.cpuMsPerHeartbeat} ms + ${MEASURED_HEARTBEAT_COSTS.cpuMsPerGossipEntry} ms a member`,
    },
    tables: [summary, validation],
    plots,
    checks: checks(validations, projections),
    sections: [
      {
        heading: "The simulation against the real crawls",
        body: markdownTable(validation.columns, validation.rows),
      },
      { heading: "Reading the figures", body: READING },
    ],
  };
}

function simulatedRow(result: SimulationResult, kind: string, heartbeatMs: number): (string | number)[] {
  return [
    result.agents,
    kind,
    round(result.steadyPagesPerSecondPerAgent, 1),
    round(result.coverage, 5),
    round(result.overhead),
    round(result.batchesSent / Math.max(1, result.fetches), 5),
    round(result.heartbeats / Math.max(1, result.fetches), 4),
    heartbeatMs,
    "",
    "",
    "",
  ];
}

function relativeDifference(value: number, reference: number): number {
  return reference === 0 ? (value === 0 ? 0 : 1) : (value - reference) / reference;
}

/** What the figures mean here. */
const READING = `- **real**: the agents of this machine, each capped to the same share of a CPU (set by the most agents),
  so that pages a second per agent can fall as agents are added only through what more agents cost
  each: URLs exchanged, heartbeats, and each agent's own fixed work.
- **simulated**: the same crawls simulated. Coverage and overhead depend on the link graph, the
  assignment and the exchange's rules, which the simulation shares with the agents: they must agree.
  Batches and pages a second depend on timing, which it only approximates.
- **projected**: agents with a CPU each, on a web that grows with them. Each URL of another agent's host
  goes once per agent that finds it, so URLs a page grow towards a constant (the links a page has to
  other hosts) and, at a received URL's measured CPU, so does an agent's CPU a page: pages a second per
  agent fall with them (\`--url-cpu-us\` shows what a cheaper exchange would do). Batches a page grow with
  the agents (each destination gets its own, and small ones go at once to a destination short of work).
  What grows fastest is membership: every agent heartbeats every other, with the whole table, so its CPU
  grows with n²; held to a budget, the interval, and with it the time to notice a dead agent, grows
  instead. Past a few hundred agents, a failure detector that probes a few peers and gossips (as SWIM
  does) would be needed to keep recovery within seconds.`;

function checks(validations: readonly Validation[], projections: readonly Projection[]): Check[] {
  const result: Check[] = [
    {
      claim: "The simulation covers the web as the real agents do (coverage within 1%)",
      holds: validations.every(
        ({ real, simulated }) => Math.abs(real.crawl.coverage - simulated.coverage) <= 0.01,
      ),
      detail: validations
        .map(
          ({ real, simulated }) =>
            `${real.agents}: ${real.crawl.coverage.toFixed(4)} / ${simulated.coverage.toFixed(4)}`,
        )
        .join(", "),
    },
    {
      claim: "The simulation sends the URLs the real agents send (overhead within 5%)",
      holds: validations.every(
        ({ real, simulated }) =>
          Math.abs(relativeDifference(simulated.overhead, real.crawl.overhead)) <= 0.05,
      ),
      detail: validations
        .map(
          ({ real, simulated }) =>
            `${real.agents}: ${real.crawl.overhead.toFixed(3)} / ${simulated.overhead.toFixed(3)}`,
        )
        .join(", "),
    },
  ];
  if (projections.length >= 2) {
    const first = projections[0] as Projection;
    const last = projections.at(-1) as Projection;
    result.push({
      claim: `Pages a second per agent stay flat from ${first.agents} to ${last.agents} agents (within 25%, UbiCrawler)`,
      holds: last.plain.steadyPagesPerSecondPerAgent >= 0.75 * first.plain.steadyPagesPerSecondPerAgent,
      detail: projections
        .map((p) => `${p.agents}: ${p.plain.steadyPagesPerSecondPerAgent.toFixed(0)}`)
        .join(", "),
    });
  }
  result.push({
    claim: "Every simulated crawl, with or without agents killed, covers the whole web",
    holds: projections.every((p) => p.plain.coverage === 1 && p.faulty.coverage === 1),
    detail: projections.map((p) => `${p.agents}: ${p.plain.coverage} / ${p.faulty.coverage}`).join(", "),
  });
  return result;
}
