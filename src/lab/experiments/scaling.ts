import { availableParallelism } from "node:os";
import type { FlagSpecs } from "../../cli/flags.js";
import { Assignment, loadHasher64 } from "../../hashing/index.js";
import { FAST_FAILURE_DETECTION } from "../../launch/index.js";
import { buildModel, computeTruth, type LinkGraph } from "../../testweb/index.js";
import { cpuQuotaUnavailable } from "../cpu-quota.js";
import { ownHomePages, round, truthLimits } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { integerList } from "../lists.js";
import { markdownTable } from "../report-writer.js";
import {
  heartbeatCpuMsPerSecond,
  type MeasuredCosts,
  type MeasuredCrawl,
  measureCosts,
  measureLabCrawl,
  sampleFetchTimes,
} from "../simulation/calibration.js";
import {
  AGENT_SETTINGS,
  MEASURED_HEARTBEAT_COSTS,
  type SimulationSettings,
  type SimulationTiming,
} from "../simulation/parameters.js";
import { type SimulationResult, simulateCrawl } from "../simulation/simulated-cluster.js";

/**
 * UbiCrawler's scaling claim — pages a second per agent stay flat as agents are added — measured with
 * real agents on this machine (each capped to an equal share of its CPUs), and past it with a
 * discrete-event simulation of up to 1,000 agents, calibrated on the real crawls and checked against
 * them first.
 */

const SCALING_FLAGS = {
  agents: {
    type: "string",
    help: "agent counts of the real crawls (1…16), comma-separated; the simulation is checked against each",
    default: "1,2,4,8",
    placeholder: "N,N,…",
  },
  "cpu-quota": {
    type: "integer",
    help: "caps each real agent at this percentage of one CPU, in a cgroup of its own (root); 0: no cap (default: an equal share of the machine's CPUs, less 0.3 CPU for the test web, for the most agents)",
    min: 0,
    max: 100,
    placeholder: "P",
  },
  simulate: {
    type: "string",
    help: "agent counts to simulate on a web growing with them (2…1000), comma-separated",
    default: "10,30,100,300,1000",
    placeholder: "N,N,…",
  },
  "sim-pages-per-agent": {
    type: "integer",
    help: "pages of the simulated web per simulated agent (about)",
    default: 400,
    min: 50,
    max: 10_000,
  },
  "sim-hosts-per-agent": {
    type: "integer",
    help: "hosts of the simulated web per simulated agent",
    default: 8,
    min: 1,
    max: 100,
  },
  "latency-us": {
    type: "integer",
    help: "one-way latency between two simulated agents, µs (a LAN)",
    default: 500,
    min: 0,
    max: 1_000_000,
  },
  "heartbeat-budget": {
    type: "integer",
    help: "percentage of a simulated agent's CPU its heartbeats may take: past 1 s, the interval grows to stay within it (and the timeout with it, 5 intervals)",
    default: 10,
    min: 1,
    max: 90,
  },
  "url-cpu-us": {
    type: "integer",
    help: "CPU of a received URL in the simulated clusters, µs (default: the one measured on the real crawls), to see what a cheaper exchange would do",
    min: 0,
    max: 1_000_000,
    placeholder: "US",
  },
  "kill-percent": {
    type: "integer",
    help: "percentage of the simulated agents (at least one) killed halfway through a second simulated crawl of each size",
    default: 1,
    min: 1,
    max: 50,
  },
  ...LAB_CRAWL_FLAGS,
} as const satisfies FlagSpecs;

/** Fetches timed against the test web for the simulation's fetch times. */
const FETCH_SAMPLES = 400;
/** Simulated loopback between the real agents of this machine, ms. */
const LOOPBACK_LATENCY_MS = 0.1;
/** The agents' heartbeat and timeout, as intervals: the real agents' 1 s and 5 s. */
const TIMEOUT_INTERVALS = AGENT_SETTINGS.suspectAfterMs / AGENT_SETTINGS.heartbeatMs;
/** The laboratory's agents: `--delay-ms 0` on the test web, fast failure detection. */
const LAB_SETTINGS: SimulationSettings = {
  ...AGENT_SETTINGS,
  delayMs: 0,
  heartbeatMs: FAST_FAILURE_DETECTION["heartbeat-ms"],
  suspectAfterMs: FAST_FAILURE_DETECTION["suspect-after-ms"],
};
/** Port the simulated webs' URLs name (nothing listens: it only shapes their host keys). */
const SIMULATED_PORT = 8080;

/** A real crawl, and the simulation of the same crawl. */
interface Validation {
  readonly real: MeasuredCrawl;
  readonly simulated: SimulationResult;
  /** Share of one CPU each real agent had. */
  readonly cpuShare: number;
}

/** A simulated size: the crawl without a fault, and the one with agents killed halfway. */
interface Projection {
  readonly agents: number;
  readonly heartbeatMs: number;
  readonly heartbeatCpuShare: number;
  readonly plain: SimulationResult;
  readonly faulty: SimulationResult;
  readonly killed: number;
}

/** `ubicrawl experiment scaling`. */
export const scalingExperiment: Experiment<typeof SCALING_FLAGS> = {
  name: "scaling",
  summary:
    "pages/s per agent as agents grow: real agents here, then a simulation of up to 1,000 (UbiCrawler)",
  description: `UbiCrawler's claim that pages a second per agent stay flat as agents are added. First
with real agents: for each of --agents, the agents crawl the test web as in the modes experiment, each
in a cgroup capped at --cpu-quota percent of one CPU (so that n agents do not share this machine's
CPUs unevenly). Their CPU from seeds to exit, less their heartbeats', fitted by least squares as pages
× a page's CPU + URLs sent × a received URL's + agents × an agent's own, gives the costs; fetches of the test web
timed one at a time from the experiment's process give the fetch times. Then a discrete-event
simulation of the same crawls (the same link graph, seeds, assignment, batch policy, failure
detection; fetch times drawn from the measured ones; each agent one
CPU at its share; heartbeat costs measured by bench/cluster.mjs --idle-seconds) is checked against
them: coverage and communication overhead within a few percent. Past this machine, the simulation runs
--simulate agents, each with a CPU of its own, on test webs of --sim-hosts-per-agent hosts and
--sim-pages-per-agent pages per agent, one message --latency-us apart: pages a second per agent, URLs and
messages a page, and the CPU the all-to-all heartbeats take (each pair of agents exchanges a request and
an answer every interval, each carrying the whole membership table). Where that would pass
--heartbeat-budget percent of an agent's CPU at the agents' 1 s interval, the interval grows to keep
within it. A second crawl of each size kills --kill-percent of the agents halfway: pages fetched twice
and seconds until the survivors crawl the dead agents' hosts.`,
  flags: SCALING_FLAGS,
  async run(flags, context) {
    const counts = integerList("agents", flags.agents, 1, 16).sort((a, b) => a - b);
    const sizes = integerList("simulate", flags.simulate, 2, 1000).sort((a, b) => a - b);
    const hasher = await loadHasher64();
    const quota = cpuQuota(flags["cpu-quota"], Math.max(...counts));
    const crawls = await LabCrawls.open(flags, "scaling");
    const measured: MeasuredCrawl[] = [];
    const validations: Validation[] = [];
    let costs: MeasuredCosts | undefined;
    let fetchMs: number[] = [];
    try {
      for (const n of counts) {
        const crawl = await crawls.crawl(
          `agents-${n}`,
          n,
          {},
          quota.percent === undefined ? {} : { cpuQuotaPercent: quota.percent },
        );
        const real = await measureLabCrawl(n, crawl);
        measured.push(real);
        context.progress(
          `scaling: ${n} real agent(s): ${real.steadyPagesPerSecondPerAgent.toFixed(0)} pages/s an agent, coverage ${crawl.coverage.toFixed(4)}`,
        );
      }
      costs = measureCosts(measured, LAB_SETTINGS.heartbeatMs, MEASURED_HEARTBEAT_COSTS);
      if (!costs) throw new Error("scaling: the real crawls' CPU is unknown (no /proc?)");
      const truth = computeTruth(crawls.web.model, crawls.web.port, truthLimits()).urls;
      fetchMs = await sampleFetchTimes(
        crawls.web,
        Array.from(
          { length: FETCH_SAMPLES },
          (_, i) => truth[Math.floor((i * truth.length) / FETCH_SAMPLES)] as string,
        ),
      );
      for (const real of measured) {
        const cpuShare =
          quota.percent === undefined
            ? Math.min(1, availableParallelism() / (real.agents + 1))
            : quota.percent / 100;
        const seeds = new Map(real.crawl.run.agents.map((agent) => [agent.id, agent.seeds]));
        const graph = linkGraphOf(
          computeTruth(crawls.web.model, crawls.web.port, truthLimits(), [...seeds.values()].flat(), {
            linkGraph: true,
          }).linkGraph,
        );
        const simulated = simulateCrawl({
          graph,
          agents: real.agents,
          seedsOf: (id) => seeds.get(id) ?? [],
          settings: LAB_SETTINGS,
          timing: timingOf(costs, fetchMs, cpuShare, LOOPBACK_LATENCY_MS),
          hasher,
        });
        validations.push({ real, simulated, cpuShare });
        context.progress(
          `scaling: ${real.agents} simulated: overhead ${simulated.overhead.toFixed(3)} (real ${real.crawl.overhead.toFixed(3)}), ` +
            `${simulated.steadyPagesPerSecondPerAgent.toFixed(0)} pages/s an agent (real ${real.steadyPagesPerSecondPerAgent.toFixed(0)})`,
        );
      }
    } finally {
      await crawls.close();
    }
    const projected: MeasuredCosts =
      flags["url-cpu-us"] === undefined
        ? costs
        : { ...costs, cpuMsPerUrlReceived: flags["url-cpu-us"] / 1000 };
    const projections: Projection[] = [];
    for (const agents of sizes) {
      const projection = project(agents, flags, projected, fetchMs, hasher);
      projections.push(projection);
      context.progress(
        `scaling: ${agents} simulated agents: ${projection.plain.steadyPagesPerSecondPerAgent.toFixed(0)} pages/s an agent, ` +
          `heartbeat every ${projection.heartbeatMs} ms, dead agents' hosts crawled again after ${projection.faulty.gapSeconds?.toFixed(1) ?? "-"} s`,
      );
    }
    return report(validations, projections, costs, {
      "real agents": counts.join(", "),
      "CPU cap of a real agent": quota.describe,
      "simulated agents": sizes.join(", "),
      "simulated web": `${flags["sim-hosts-per-agent"]} hosts and about ${flags["sim-pages-per-agent"]} pages per agent, seed ${flags.seed}`,
      "simulated latency": `${flags["latency-us"]} µs one way`,
      "heartbeat budget": `${flags["heartbeat-budget"]}% of an agent's CPU`,
      ...(flags["url-cpu-us"] === undefined
        ? {}
        : { "CPU a URL received, simulated clusters": `${flags["url-cpu-us"]} µs (--url-cpu-us)` }),
      ...crawls.description,
    });
  },
};

/** The CPU cap of the real agents: given, or an equal share of this machine for the most agents. */
function cpuQuota(
  given: number | undefined,
  most: number,
): { percent: number | undefined; describe: string } {
  if (given === 0)
    return { percent: undefined, describe: "none (--cpu-quota 0): the agents share the machine's CPUs" };
  const unavailable = cpuQuotaUnavailable();
  if (unavailable !== undefined) {
    if (given !== undefined) throw new Error(`--cpu-quota: ${unavailable}`);
    return { percent: undefined, describe: `none (${unavailable}): the agents share the machine's CPUs` };
  }
  const percent =
    given ?? Math.max(5, Math.min(100, Math.floor(((availableParallelism() - 0.3) * 100) / most)));
  return { percent, describe: `${percent}% of one CPU each, in a cgroup of its own` };
}

function linkGraphOf(graph: LinkGraph | undefined): LinkGraph {
  if (!graph) throw new Error("computeTruth returned no link graph");
  return graph;
}

/** The simulated agents' timing: the measured costs at `cpuShare` of a CPU. */
function timingOf(
  costs: MeasuredCosts,
  fetchMs: readonly number[],
  cpuShare: number,
  latencyMs: number,
): SimulationTiming {
  return {
    fetchMs: fetchMs.length > 0 ? fetchMs : [1],
    cpuMsPerPage: costs.cpuMsPerPage / cpuShare,
    cpuMsPerAgent: costs.cpuMsPerAgent / cpuShare,
    cpuMsPerUrlReceived: costs.cpuMsPerUrlReceived / cpuShare,
    cpuMsPerHeartbeat: MEASURED_HEARTBEAT_COSTS.cpuMsPerHeartbeat / cpuShare,
    cpuMsPerGossipEntry: MEASURED_HEARTBEAT_COSTS.cpuMsPerGossipEntry / cpuShare,
    latencyMs,
  };
}

/** Simulates `agents` agents, each with a CPU of its own, on a web growing with them. */
function project(
  agents: number,
  flags: {
    readonly seed: number;
    readonly "cross-links": number;
    readonly "seeds-per-agent": number;
  } & Record<
    "sim-pages-per-agent" | "sim-hosts-per-agent" | "latency-us" | "heartbeat-budget" | "kill-percent",
    number
  >,
  costs: MeasuredCosts,
  fetchMs: readonly number[],
  hasher: Awaited<ReturnType<typeof loadHasher64>>,
): Projection {
  const model = buildModel({
    seed: flags.seed,
    hosts: Math.max(10, agents * flags["sim-hosts-per-agent"]),
    pages: agents * flags["sim-pages-per-agent"],
    crossLinkPercent: flags["cross-links"],
  });
  const web = { model, port: SIMULATED_PORT };
  const assignment = Assignment.build(
    Array.from({ length: agents }, (_, i) => ({ id: `agent-${i + 1}` })),
    {},
    hasher,
  );
  const pick = ownHomePages(web, flags["seeds-per-agent"], hasher);
  const seeds = new Map(
    assignment.agents.map(({ id }) => [id, pick(id, (key) => assignment.ownerOf(key))] as const),
  );
  const graph = linkGraphOf(
    computeTruth(model, SIMULATED_PORT, truthLimits(), [...seeds.values()].flat(), { linkGraph: true })
      .linkGraph,
  );
  // The interval that keeps the heartbeats within the budget, from the agents' 1 s up.
  const atDefault =
    heartbeatCpuMsPerSecond(agents, AGENT_SETTINGS.heartbeatMs, MEASURED_HEARTBEAT_COSTS) / 1000;
  const budget = flags["heartbeat-budget"] / 100;
  const heartbeatMs = Math.ceil(AGENT_SETTINGS.heartbeatMs * Math.max(1, atDefault / budget));
  const settings: SimulationSettings = {
    ...AGENT_SETTINGS,
    delayMs: 0,
    heartbeatMs,
    suspectAfterMs: heartbeatMs * TIMEOUT_INTERVALS,
  };
  const timing = timingOf(costs, fetchMs, 1, flags["latency-us"] / 1000);
  const spec = { graph, agents, seedsOf: (id: string) => seeds.get(id) ?? [], settings, timing, hasher };
  const plain = simulateCrawl(spec);
  const killed = Math.max(1, Math.round((agents * flags["kill-percent"]) / 100));
  const faulty = simulateCrawl({
    ...spec,
    fault: { afterFetches: Math.floor(plain.fetches / 2), kill: killed },
  });
  return {
    agents,
    heartbeatMs,
    heartbeatCpuShare: heartbeatCpuMsPerSecond(agents, heartbeatMs, MEASURED_HEARTBEAT_COSTS) / 1000,
    plain,
    faulty,
    killed,
  };
}

function report(
  validations: readonly Validation[],
  projections: readonly Projection[],
  costs: MeasuredCosts,
  parameters: Record<string, string | number>,
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
        LAB_SETTINGS.heartbeatMs,
        "",
        "",
        "",
      ]),
      ...validations.map(({ simulated }) => simulatedRow(simulated, "simulated", LAB_SETTINGS.heartbeatMs)),
      ...projections.map((p) => [
        ...simulatedRow(p.plain, "projected", p.heartbeatMs).slice(0, 8),
        round(p.heartbeatCpuShare),
        p.faulty.fetches - p.faulty.distinct,
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
  const plots: Plot[] = [
    {
      name: "pages-per-agent",
      title: "Pages a second per agent against agents",
      spec: {
        data: { values: rates },
        width: 420,
        height: 260,
        mark: { type: "line", point: true },
        encoding: {
          x: { field: "agents", type: "quantitative", scale: { type: "log" }, title: "agents" },
          y: { field: "rate", type: "quantitative", title: "pages/s per agent" },
          color: { field: "kind", type: "nominal", title: "" },
        },
      },
    },
    {
      name: "recovery",
      title: "Seconds until a dead agent's hosts are crawled again, and the heartbeat interval",
      spec: {
        data: {
          values: projections.flatMap((p) => [
            { agents: p.agents, what: "recovery (s)", seconds: p.faulty.gapSeconds ?? null },
            { agents: p.agents, what: "heartbeat interval (s)", seconds: p.heartbeatMs / 1000 },
          ]),
        },
        width: 420,
        height: 260,
        mark: { type: "line", point: true },
        encoding: {
          x: { field: "agents", type: "quantitative", scale: { type: "log" }, title: "agents" },
          y: { field: "seconds", type: "quantitative", scale: { type: "log" }, title: "seconds" },
          color: { field: "what", type: "nominal", title: "" },
        },
      },
    },
  ];
  return {
    title: "Pages a second per agent as agents grow: real agents, then simulated",
    method: scalingExperiment.description,
    parameters: {
      ...parameters,
      "CPU a page (measured)": `${costs.cpuMsPerPage.toFixed(3)} ms`,
      "CPU a URL received (measured)": `${costs.cpuMsPerUrlReceived.toFixed(4)} ms`,
      "CPU an agent spends for itself (measured)": `${costs.cpuMsPerAgent.toFixed(0)} ms`,
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
    result.push(
      {
        claim: `Pages a second per agent stay flat from ${first.agents} to ${last.agents} agents (within 25%, UbiCrawler)`,
        holds: last.plain.steadyPagesPerSecondPerAgent >= 0.75 * first.plain.steadyPagesPerSecondPerAgent,
        detail: projections
          .map((p) => `${p.agents}: ${p.plain.steadyPagesPerSecondPerAgent.toFixed(0)}`)
          .join(", "),
      },
      {
        claim: "Every simulated crawl, with or without agents killed, covers the whole web",
        holds: projections.every((p) => p.plain.coverage === 1 && p.faulty.coverage === 1),
        detail: projections.map((p) => `${p.agents}: ${p.plain.coverage} / ${p.faulty.coverage}`).join(", "),
      },
    );
  }
  return result;
}
