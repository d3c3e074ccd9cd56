import { availableParallelism } from "node:os";
import type { FlagSpecs } from "../../flags/index.js";
import { Assignment, loadHasher64 } from "../../hashing/index.js";
import { STEADY_FAILURE_DETECTION } from "../../launch/index.js";
import { buildModel, computeTruth, type LinkGraph } from "../../testweb/index.js";
import { hostKey } from "../../url/index.js";
import { cpuQuotaUnavailable } from "../cpu-quota.js";
import { ownHomePages, truthLimits } from "../crawl-metrics.js";
import type { Experiment } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { integerList } from "../lists.js";
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
import { simulateCrawl } from "../simulation/simulated-cluster.js";
import { type Projection, scalingReport, type Validation } from "./scaling-report.js";

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
/** The laboratory's agents in a crawl with no fault: `--delay-ms 0` on the test web, steady failure detection. */
const LAB_SETTINGS: SimulationSettings = {
  ...AGENT_SETTINGS,
  delayMs: 0,
  heartbeatMs: STEADY_FAILURE_DETECTION["heartbeat-ms"],
  suspectAfterMs: STEADY_FAILURE_DETECTION["suspect-after-ms"],
};
/** Port the simulated webs' URLs name (nothing listens: it only shapes their host keys). */
const SIMULATED_PORT = 8080;

/** `ubicrawl experiment scaling`. */
export const scalingExperiment: Experiment<typeof SCALING_FLAGS> = {
  name: "scaling",
  summary:
    "pages/s per agent as agents grow: real agents here, then a simulation of up to 1,000 (UbiCrawler)",
  description: `UbiCrawler's claim that pages a second per agent stay flat as agents are added. First
with real agents: for each of --agents, the agents crawl the test web as in the modes experiment, each
in a cgroup capped at --cpu-quota percent of one CPU (so that n agents do not share this machine's
CPUs unevenly). Their CPU from seeds to exit, less their heartbeats', fitted by least squares as pages
× a page's CPU + URLs sent × a received URL's + agents × seconds × an agent's own a second, gives the
costs; fetches of the test web timed one at a time from the experiment's process give the fetch times.
Then a discrete-event simulation of the same crawls (the same link graph, seeds, assignment, batch
policy, failure detection; fetch times drawn from the measured ones; each agent one CPU at its share;
heartbeat costs measured by bench/cluster.mjs --idle-seconds) is checked against them: coverage and
communication overhead within a few percent. Past this machine, the simulation runs --simulate agents,
each with a CPU of its own, on test webs of --sim-hosts-per-agent hosts and --sim-pages-per-agent
pages per agent, one message --latency-us apart: pages a second per agent, URLs and messages a page,
and the CPU the all-to-all heartbeats take (each pair of agents exchanges a request and an answer
every interval, each carrying the whole membership table). Where that would pass --heartbeat-budget
percent of an agent's CPU at the agents' 1 s interval, the interval grows to keep within it. A second
crawl of each size kills --kill-percent of the agents halfway: pages fetched twice (beyond the first
crawl's) and seconds until the survivors crawl the dead agents' hosts, with no takeover grace
(--takeover-delay-ms 0: the agents' default of 10 s would add to it). Fetch times are sampled with the
machine otherwise idle: under load they would be longer.`,
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
        // Uncapped, the agents and the test web share the machine's CPUs about evenly.
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
    return scalingReport(
      validations,
      projections,
      costs,
      {
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
      },
      scalingExperiment.description,
      LAB_SETTINGS.heartbeatMs,
    );
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
    cpuMsPerAgentSecond: costs.cpuMsPerAgentSecond / cpuShare,
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
    assignment.agents.map(({ id }) => [id, pick(id, (url) => assignment.ownerOf(hostKey(url)))] as const),
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
