import type { FlagSpecs } from "../../flags/index.js";
import {
  type AgentSpec,
  Assignment,
  DEFAULT_REPLICAS_PER_UNIT,
  type Hasher64,
  loadHasher64,
} from "../../hashing/index.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { choiceList, integerList } from "../lists.js";
import { markdownTable } from "../report-writer.js";

/**
 * UbiCrawler's balance measurement: how far identifier-seeded consistent hashing strays from giving each
 * agent its capacity-proportional share of hosts, against the number of agents and of replicas.
 */

const CAPACITY_MIXES = ["uniform", "mixed"] as const;
type CapacityMix = (typeof CAPACITY_MIXES)[number];
/** What the README says of the default's balance. */
const README_CLAIM = { percent: 10, agents: 1000 };
/** The mixed capacities, given to the agents in turn. */
const MIXED_CAPACITIES = [1, 1, 2, 4];

const BALANCE_FLAGS = {
  agents: {
    type: "string",
    help: "agent counts, comma-separated (2…5,000)",
    default: "2,4,8,16,32,64,128,256,512,1000",
    placeholder: "N,N,…",
  },
  replicas: {
    type: "string",
    help: "replicas per unit of capacity, comma-separated (1…6,400)",
    default: "10,25,50,100,200,400,800,1600,3200",
    placeholder: "R,R,…",
  },
  capacities: {
    type: "string",
    help: `capacity mixes: uniform (every agent 1), mixed (${MIXED_CAPACITIES.join(", ")} in turn)`,
    default: CAPACITY_MIXES.join(","),
    placeholder: "MIX,…",
  },
  trials: {
    type: "integer",
    help: "sets of agent ids measured per point (figures: their mean, and the worst)",
    default: 3,
    min: 1,
    max: 100,
  },
} as const satisfies FlagSpecs;

/** One point of the grid, over its trials. */
interface Point {
  readonly mix: CapacityMix;
  readonly agents: number;
  readonly replicas: number;
  /** Mean over trials of the largest relative deviation of an agent's share from its fair share. */
  readonly maxDeviation: number;
  /** The largest of those over trials. */
  readonly worstDeviation: number;
  /** Mean over trials and agents of the relative deviation. */
  readonly meanDeviation: number;
  readonly buildMs: number;
}

/** `ubicrawl experiment balance`. */
export const balanceExperiment: Experiment<typeof BALANCE_FLAGS> = {
  name: "balance",
  summary: "balance of identifier-seeded consistent hashing against agents and replicas (UbiCrawler)",
  description: `Measures how evenly identifier-seeded consistent hashing spreads hosts, as UbiCrawler's authors
did: for each capacity mix, number of agents and number of replicas per unit of capacity, the agents'
replicas are placed on the 64-bit circle exactly as a crawl places them (Mersenne Twister seeded with
each id, xxhash64 positions), and each agent's share of the circle — the share of hosts it owns in
expectation, free of the noise of any sample of host names — is compared with its capacity-proportional
share. Reports the largest relative deviation of any agent (mean and worst over --trials sets of ids),
checks it against the papers' claims and against the theory of random arcs (deviation about
1/sqrt(replicas), its maximum growing like sqrt(2 ln 2n) with n agents), and plots it.`,
  flags: BALANCE_FLAGS,
  async run(flags, context) {
    const agentCounts = integerList("agents", flags.agents, 2, 5000);
    const replicaCounts = integerList("replicas", flags.replicas, 1, 6400);
    const mixes = choiceList("capacities", flags.capacities, CAPACITY_MIXES);
    const hasher = await loadHasher64();
    const points: Point[] = [];
    for (const mix of mixes) {
      for (const agents of agentCounts) {
        for (const replicas of replicaCounts) {
          points.push(measure(mix, agents, replicas, flags.trials, hasher));
        }
        context.progress(`balance: ${mix} capacities, ${agents} agents done`);
      }
    }
    return report(points, { agentCounts, replicaCounts, mixes, trials: flags.trials });
  },
};

function measure(
  mix: CapacityMix,
  agents: number,
  replicas: number,
  trials: number,
  hasher: Hasher64,
): Point {
  let maxSum = 0;
  let worst = 0;
  let meanSum = 0;
  let buildMs = 0;
  for (let trial = 0; trial < trials; trial++) {
    const specs: AgentSpec[] = Array.from({ length: agents }, (_, i) => ({
      id: `crawler-${trial}-${i}`,
      capacity: mix === "uniform" ? 1 : (MIXED_CAPACITIES[i % MIXED_CAPACITIES.length] as number),
    }));
    const started = performance.now();
    const assignment = Assignment.build(specs, { replicasPerUnit: replicas }, hasher);
    buildMs += performance.now() - started;
    const total = specs.reduce((sum, spec) => sum + (spec.capacity as number), 0);
    let max = 0;
    let sum = 0;
    for (const spec of specs) {
      const deviation = Math.abs(assignment.share(spec.id) / ((spec.capacity as number) / total) - 1);
      max = Math.max(max, deviation);
      sum += deviation;
    }
    maxSum += max;
    worst = Math.max(worst, max);
    meanSum += sum / agents;
  }
  return {
    mix,
    agents,
    replicas,
    maxDeviation: maxSum / trials,
    worstDeviation: worst,
    meanDeviation: meanSum / trials,
    buildMs: buildMs / trials,
  };
}

const percent = (fraction: number) => Number((fraction * 100).toFixed(2));

function report(
  points: readonly Point[],
  grid: {
    agentCounts: readonly number[];
    replicaCounts: readonly number[];
    mixes: readonly CapacityMix[];
    trials: number;
  },
): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "capacities",
      "agents",
      "replicas_per_unit",
      "max_rel_deviation_pct",
      "worst_rel_deviation_pct",
      "mean_rel_deviation_pct",
      "build_ms",
    ],
    rows: points.map((p) => [
      p.mix,
      p.agents,
      p.replicas,
      percent(p.maxDeviation),
      percent(p.worstDeviation),
      percent(p.meanDeviation),
      Number(p.buildMs.toFixed(1)),
    ]),
  };
  const data = points.map((p) => ({
    capacities: p.mix,
    agents: p.agents,
    replicas: p.replicas,
    deviation: percent(p.maxDeviation),
  }));
  return {
    title: "Balance of identifier-seeded consistent hashing",
    method: balanceExperiment.description,
    parameters: {
      agents: grid.agentCounts.join(", "),
      "replicas per unit of capacity": grid.replicaCounts.join(", "),
      capacities: grid.mixes
        .map((mix) => (mix === "mixed" ? `mixed (${MIXED_CAPACITIES.join(", ")})` : mix))
        .join(", "),
      trials: grid.trials,
      "default replicas per unit in a crawl": DEFAULT_REPLICAS_PER_UNIT,
    },
    tables: [summary],
    plots: [
      deviationPlot(
        "deviation-vs-agents",
        "Largest relative deviation from the fair share against the number of agents, one line per replicas per unit",
        data,
        { field: "agents", title: "agents" },
        { field: "replicas", title: "replicas per unit" },
      ),
      deviationPlot(
        "deviation-vs-replicas",
        "Largest relative deviation against replicas per unit of capacity, one line per number of agents",
        data,
        { field: "replicas", title: "replicas per unit" },
        { field: "agents", title: "agents" },
      ),
    ],
    checks: checks(points, grid),
    sections: grid.mixes.map((mix) => ({
      heading: `Largest relative deviation (%), ${mix} capacities (mean over ${grid.trials} trials)`,
      body: markdownTable(
        ["agents \\ replicas", ...grid.replicaCounts.map(String)],
        grid.agentCounts.map((agents) => [
          String(agents),
          ...grid.replicaCounts.map((replicas) => {
            const point = points.find((p) => p.mix === mix && p.agents === agents && p.replicas === replicas);
            return point ? percent(point.maxDeviation).toFixed(2) : "";
          }),
        ]),
      ),
    })),
  };
}

/** A log-log line plot of the deviation against `x`, a line per `line` value, a panel per capacity mix. */
function deviationPlot(
  name: string,
  title: string,
  data: readonly Record<string, string | number>[],
  x: { field: string; title: string },
  line: { field: string; title: string },
): Plot {
  return {
    name,
    title,
    spec: {
      data: { values: [...data] },
      facet: { column: { field: "capacities", type: "nominal", title: "capacities" } },
      spec: {
        width: 320,
        height: 240,
        mark: { type: "line", point: true },
        encoding: {
          x: { ...x, type: "quantitative", scale: { type: "log" } },
          y: {
            field: "deviation",
            type: "quantitative",
            scale: { type: "log" },
            title: "max relative deviation (%)",
          },
          color: { ...line, type: "ordinal" },
        },
      },
    },
  };
}

/** The claims: what UbiCrawler reports, and what the theory of random arcs predicts. */
function checks(
  points: readonly Point[],
  grid: { agentCounts: readonly number[]; replicaCounts: readonly number[]; mixes: readonly CapacityMix[] },
): Check[] {
  const at = (mix: CapacityMix, agents: number, replicas: number) =>
    points.find((p) => p.mix === mix && p.agents === agents && p.replicas === replicas);
  const result: Check[] = [];
  const fewest = Math.min(...grid.replicaCounts);
  const most = Math.max(...grid.replicaCounts);
  if (fewest < most) {
    // Slope of log(deviation) against log(replicas), per mix and agent count, by least squares; with
    // fewer than 16 agents one trial's largest deviation is too noisy a figure to fit.
    const fitted = grid.agentCounts.filter((agents) => agents >= 16);
    const slopeAgents = fitted.length > 0 ? fitted : grid.agentCounts;
    const slopes = grid.mixes.flatMap((mix) =>
      slopeAgents.map((agents) => {
        const xs = grid.replicaCounts.map(Math.log);
        const ys = grid.replicaCounts.map((r) => Math.log(at(mix, agents, r)?.maxDeviation ?? Number.NaN));
        return slope(xs, ys);
      }),
    );
    const lo = Math.min(...slopes);
    const hi = Math.max(...slopes);
    result.push({
      claim:
        "More replicas balance better: the deviation falls about as 1/√replicas (UbiCrawler; random arcs)",
      holds: lo >= -0.7 && hi <= -0.3,
      detail: `log-log slopes against replicas, ${slopeAgents.join(", ")} agents: ${lo.toFixed(2)} … ${hi.toFixed(2)} (−0.5 expected)`,
    });
  }
  const fewAgents = Math.min(...grid.agentCounts);
  const manyAgents = Math.max(...grid.agentCounts);
  if (grid.mixes.includes("uniform")) {
    // An agent's share is the sum of its R arcs out of nR: its relative deviation is about normal with
    // σ = √((1 − 1/n) / R), and the largest of n such is about σ·√(2 ln 2n).
    const ratios = points
      .filter((p) => p.mix === "uniform" && p.replicas >= 50)
      .map(
        (p) =>
          p.maxDeviation /
          (Math.sqrt((1 - 1 / p.agents) / p.replicas) * Math.sqrt(2 * Math.log(2 * p.agents))),
      );
    if (ratios.length > 0) {
      const growth =
        (at("uniform", manyAgents, most)?.maxDeviation ?? Number.NaN) /
        (at("uniform", fewAgents, most)?.maxDeviation ?? Number.NaN);
      result.push({
        claim:
          "The deviation hardly grows with the number of agents (UbiCrawler): it stays within the largest of n sums of random arcs, √((1 − 1/n)/R)·√(2 ln 2n)",
        holds: Math.max(...ratios) <= 1.3,
        detail:
          `measured / predicted at ≥ 50 replicas: ${Math.min(...ratios).toFixed(2)} … ${Math.max(...ratios).toFixed(2)}; ` +
          `from ${fewAgents} to ${manyAgents} agents (×${(manyAgents / fewAgents).toFixed(0)}) at ${most} replicas it grows ×${growth.toFixed(2)}`,
      });
    }
  }
  if (grid.mixes.includes("uniform") && grid.mixes.includes("mixed")) {
    const ratios = grid.agentCounts.flatMap((agents) =>
      grid.replicaCounts
        .filter((replicas) => replicas >= 100)
        .map(
          (replicas) =>
            (at("mixed", agents, replicas)?.maxDeviation ?? Number.NaN) /
            (at("uniform", agents, replicas)?.maxDeviation ?? Number.NaN),
        ),
    );
    if (ratios.length > 0) {
      const mean = ratios.reduce((sum, r) => sum + r, 0) / ratios.length;
      result.push({
        claim:
          "Capacities are honoured: with mixed capacities each agent gets its proportional share as closely as with equal ones (UbiCrawler)",
        holds: mean <= 1.5,
        detail: `mixed / uniform deviation at ≥ 100 replicas per unit: ${mean.toFixed(2)} on average (${Math.min(...ratios).toFixed(2)} … ${Math.max(...ratios).toFixed(2)})`,
      });
    }
  }
  const claimed = points.filter(
    (p) => p.replicas === DEFAULT_REPLICAS_PER_UNIT && p.agents <= README_CLAIM.agents,
  );
  if (claimed.length > 0) {
    result.push(readmeCheck(claimed, points));
  }
  return result;
}

/**
 * The README's claim of the default replicas, checked over the agent counts this run measured
 * (`claimed`: those at the default replicas, up to the README's count): the claim and its detail
 * name that range, and say when it falls short of the README's, so that a run of a few agent counts
 * never reports the README's whole range as checked.
 */
function readmeCheck(claimed: readonly Point[], points: readonly Point[]): Check {
  const counts = claimed.map((p) => p.agents);
  const fewest = Math.min(...counts);
  const most = Math.max(...counts);
  const range = (from: number, to: number) =>
    from === to ? `${to.toLocaleString("en")}` : `${from.toLocaleString("en")}–${to.toLocaleString("en")}`;
  const readmeRange = range(2, README_CLAIM.agents);
  const whole = fewest <= 2 && most >= README_CLAIM.agents;
  const worst = Math.max(...claimed.map((p) => p.worstDeviation));
  const beyond = points.filter(
    (p) => p.replicas === DEFAULT_REPLICAS_PER_UNIT && p.agents > README_CLAIM.agents,
  );
  const beyondWorst = beyond.length > 0 ? Math.max(...beyond.map((p) => p.worstDeviation)) : undefined;
  return {
    claim:
      `ubicrawl's default, ${DEFAULT_REPLICAS_PER_UNIT} replicas per unit, keeps every agent within about ${README_CLAIM.percent}% of its share ` +
      (whole
        ? `for ${readmeRange} agents (README)`
        : `for ${range(fewest, most)} agents, as measured here (the README claims it for ${readmeRange})`),
    // "About": a tenth of the bound over, since the worst of a few trials is a noisy figure.
    holds: worst * 100 <= README_CLAIM.percent * 1.1,
    detail:
      `worst deviation at ${range(fewest, most)} agents (${new Set(counts).size} counts measured): ${percent(worst).toFixed(2)}%` +
      (most < README_CLAIM.agents
        ? `; not measured above ${most.toLocaleString("en")} agents (--agents up to ${README_CLAIM.agents} checks the README's whole range)`
        : "") +
      (beyondWorst === undefined
        ? ""
        : `; up to ${Math.max(...beyond.map((p) => p.agents)).toLocaleString("en")} agents: ${percent(beyondWorst).toFixed(2)}%`),
  };
}

/** Least-squares slope of `ys` against `xs`. */
function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return num / den;
}
