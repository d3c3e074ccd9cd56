import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { invalidArgument } from "../../errors.js";
import { type FlagSpecs, formatInstant } from "../../flags/index.js";
import type { AgentFlagValues } from "../../launch/index.js";
import {
  averageFreshness as expectedAverageFreshness,
  optimalFrequencies,
  proportionalFrequencies,
} from "../../recrawl/index.js";
import { changeTimes, meanChangeIntervalMs, type PageChanges } from "../../testweb/index.js";
import { round } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { averageFreshness, freshnessOverTime, type PageTimeline } from "../freshness.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { choiceList } from "../lists.js";
import type { LocalClusterFault, LocalClusterRun } from "../local-cluster.js";
import { linePlot } from "../plot.js";

/**
 * Cho and Garcia-Molina's freshness policies with real agents: the test web's pages change as Poisson
 * processes of their own rates, an agent revisits them at a fixed budget under each policy, and the
 * copy's freshness and age are measured against the true change times.
 */

/** The revisit policies compared, each an agent's `--recrawl` mode at the same budget. */
const POLICIES = ["uniform", "proportional", "optimal"] as const;
type Policy = (typeof POLICIES)[number];

const FRESHNESS_FLAGS = {
  policies: {
    type: "string",
    help: `revisit policies to run, comma-separated: ${POLICIES.join(", ")} (uniform: --recrawl fixed at pages ÷ budget; proportional: --recrawl proportional; optimal: --recrawl adaptive)`,
    default: POLICIES.join(","),
    placeholder: "P,P,…",
  },
  budget: {
    type: "integer",
    help: "revisits a second the agent may spend (--recrawl-budget)",
    default: 10,
    min: 1,
  },
  "run-s": {
    type: "integer",
    help: "how long each policy's crawl runs, first pass included, s: its agents revisit pages until its start plus this (--recrawl-until)",
    default: 150,
    min: 20,
  },
  "change-s": {
    type: "integer",
    help: "the median changing page's mean time between changes, s (the pages' means spread ÷× --spread around it)",
    default: 20,
    min: 1,
  },
  spread: {
    type: "integer",
    help: "how far the pages' mean change intervals spread, either way",
    default: 10,
    min: 1,
  },
  "changing-percent": {
    type: "integer",
    help: "percentage of the HTML pages that change (the others never do)",
    default: 80,
    min: 1,
    max: 100,
  },
  agents: {
    type: "integer",
    help: "agents of each policy's crawl, each one's --recrawl-budget budget ÷ agents (under proportional and optimal spent together, each agent in proportion to its pages)",
    default: 1,
    min: 1,
    max: 16,
  },
  "join-leave": {
    type: "boolean",
    help: "with --agents 2 or more: an agent joins a third into the revisits, and another leaves gracefully two thirds in (their pages' schedules and histories move with their hosts)",
  },
  ...LAB_CRAWL_FLAGS,
  hosts: { ...LAB_CRAWL_FLAGS.hosts, default: 20 },
  pages: { ...LAB_CRAWL_FLAGS.pages, default: 400 },
} as const satisfies FlagSpecs;

/** One policy's crawl, measured. */
interface PolicyRun {
  readonly policy: Policy;
  /** Measured over the window after the first pass. */
  readonly freshness: number;
  readonly ageS: number;
  /**
   * Expected for this policy from the true rates (Cho and Garcia-Molina's model) at the budgets the
   * agents had over the window, each for its part of the window.
   */
  readonly model: number;
  /** The uniform policy's expectation at the same budgets: what uniform would have had with this run's. */
  readonly uniformModel: number;
  /** Revisits a second the agents could spend in all, on average over the window. */
  readonly budget: number;
  /** Revisits a second the agent made in the window. */
  readonly revisitsPerS: number;
  readonly windowS: number;
  readonly series: readonly { readonly atS: number; readonly freshness: number; readonly ageS: number }[];
  /**
   * Median relative error of the change rates the agent estimated from each page's own visits (the
   * crawl log's `changesPerDay` at its last visit), over pages revisited 5 times or more.
   */
  readonly rateError?: number;
}

/** `ubicrawl experiment freshness`. */
export const freshnessExperiment: Experiment<typeof FRESHNESS_FLAGS> = {
  name: "freshness",
  summary:
    "freshness and age of a continuous crawl under the uniform, proportional and optimal policies (Cho and Garcia-Molina)",
  description: `Cho and Garcia-Molina's revisit policies with a real agent: the test web's HTML pages
(--changing-percent of them) change as Poisson processes, each page's mean interval drawn log-uniformly
within --change-s ÷× --spread. For each policy --agents agents (one by default) crawl the web and then
revisit it until --run-s seconds after the crawl's start (every agent's --recrawl-until) at --budget
revisits a second in all (uniform: every page every pages ÷ budget, --recrawl fixed; proportional: --recrawl proportional; optimal: --recrawl adaptive, the rates
estimated from the visits; each agent's --recrawl-budget is budget ÷ agents, and under proportional
and optimal the agents spend their budgets together, each in proportion to its pages), with --join-leave an
agent joining a third into the revisits and another leaving gracefully two thirds in. The copy's
freshness (the share of pages unchanged since their last fetch) and age (how long a changed page has
been stale) are measured against the true change times over the window after the first pass, and set
beside what the model expects for each policy from the true rates at the budget the agents had (the
joined agent's adds to it while it and the leaver both run).`,
  flags: FRESHNESS_FLAGS,
  async run(flags, context) {
    const policies = choiceList("policies", flags.policies, POLICIES);
    const changes: PageChanges = {
      everyMs: flags["change-s"] * 1000,
      percent: flags["changing-percent"],
      process: "poisson",
      spread: flags.spread,
    };
    if (flags["join-leave"] && flags.agents < 2) invalidArgument("--join-leave needs --agents 2 or more");
    // Each crawl revisits until --run-s after its start; its revisits queued by then end it.
    const timeoutS = Math.max(flags["timeout-s"], 2 * flags["run-s"] + 120);
    const crawls = await LabCrawls.open({ ...flags, "timeout-s": timeoutS }, "freshness", { changes });
    const runs: PolicyRun[] = [];
    try {
      const pages = crawls.expectedRequests - crawls.web.model.hosts.length;
      for (const policy of policies) {
        // One end for every agent, the joined one included: a horizon would count from each one's start.
        const untilMs = Date.now() + flags["run-s"] * 1000;
        const fault = flags["join-leave"] ? joinAndLeave(crawls.expectedRequests, untilMs) : undefined;
        const crawl = await crawls.crawl(
          policy,
          flags.agents,
          policyFlags(policy, flags, pages, untilMs),
          fault === undefined ? {} : { fault },
        );
        const logs = await Promise.all(crawl.run.agents.map((agent) => readLog(agent.dir)));
        const extraBudget =
          policy === "uniform" ? undefined : joinedBudget(crawl.run, logs, flags.budget / flags.agents);
        const run = measure(
          policy,
          logs.flat(),
          changes,
          crawls.web.startedAtMs,
          untilMs,
          flags,
          extraBudget,
        );
        runs.push(run);
        context.progress(
          `freshness: ${policy}: freshness ${run.freshness.toFixed(3)} (model ${run.model.toFixed(3)}), age ${run.ageS.toFixed(1)} s, ${run.revisitsPerS.toFixed(1)} revisits/s`,
        );
      }
    } finally {
      await crawls.close();
    }
    return report(runs, {
      budget: `${flags.budget} revisits/s`,
      agents: flags["join-leave"]
        ? `${flags.agents}, one more joining a third into the revisits, one leaving gracefully two thirds in`
        : flags.agents,
      "revisiting for": `${flags["run-s"]} s a policy`,
      "change rates": `${flags["changing-percent"]}% of the HTML pages, mean intervals ${flags["change-s"]} s ÷× ${flags.spread}`,
      ...crawls.description,
    });
  },
};

/**
 * The fault of a `--join-leave` crawl: an agent joins a third of the way from the end of the first pass
 * (most of `firstPassRequests`, the ground truth's count, served: the crawl's own differs by a few) to
 * the end of revisits (`untilMs`), another leaves gracefully halfway from the join to that end. By time,
 * not by requests: a policy may spend less than the budget; and from the moments themselves, so a first
 * pass slowed by a loaded machine still leaves the joined agent a third of the revisits.
 */
function joinAndLeave(firstPassRequests: number, untilMs: number): LocalClusterFault {
  return {
    afterRequests: Math.round(0.9 * firstPassRequests),
    delayMs: (servedAtMs) => Math.max(0, (untilMs - servedAtMs) / 3),
    add: 1,
    leave: 1,
    leaveAfterMs: (joinedAtMs) => Math.max(0, (untilMs - joinedAtMs) / 2),
  };
}

/**
 * While the joined agent and the leaver both crawled, the agents' budgets added up to one agent's
 * (`perS`) more: from the joined agent's first fetch (its hosts handed over to it) to the leaver's
 * signal (it hands its own over and exits). Undefined without a join, or before it fetched.
 */
function joinedBudget(
  run: LocalClusterRun,
  logs: readonly (readonly LoggedVisit[])[],
  perS: number,
): ExtraBudget | undefined {
  const joined = run.fault?.added[0];
  const index = run.agents.findIndex((agent) => agent.id === joined);
  const fetches = (logs[index] ?? []).map((visit) => visit.atMs);
  if (run.fault === undefined || fetches.length === 0) return undefined;
  const fromMs = Math.min(...fetches);
  return { fromMs, toMs: run.fault.leftAtMs ?? Number.POSITIVE_INFINITY, perS };
}

/** The agent flags of a policy's crawl: revisits until `untilMs` (ms since the epoch), then exit. */
function policyFlags(
  policy: Policy,
  flags: { readonly budget: number; readonly "run-s": number; readonly agents: number },
  pages: number,
  untilMs: number,
): AgentFlagValues {
  const runMs = flags["run-s"] * 1000;
  const common: AgentFlagValues = {
    "delay-ms": 20,
    "log-level": "debug",
    sitemaps: "off",
    "recrawl-until": formatInstant(untilMs),
    "recrawl-min": 1000,
    // Pages the allocation gives no visit (never changing, or too fast for the budget) get none in the run.
    "recrawl-max": runMs * 100,
    "recrawl-budget": flags.budget / flags.agents,
  };
  if (policy === "uniform") {
    return {
      ...common,
      recrawl: "fixed",
      "recrawl-interval": Math.max(1000, Math.round((pages / flags.budget) * 1000)),
    };
  }
  return { ...common, recrawl: policy === "optimal" ? "adaptive" : "proportional" };
}

/**
 * A fetch of a crawl log: its URL, when it started, its content type, and the page's change rate the
 * agent estimated from its visits as of this one (per second; from its third visit on).
 */
interface LoggedVisit {
  readonly url: string;
  readonly atMs: number;
  readonly html: boolean;
  readonly estimatedRate?: number;
}

/** The answered fetches of `dir`'s crawl log (robots.txt left out). */
async function readLog(dir: string): Promise<LoggedVisit[]> {
  const text = await readFile(join(dir, "crawl.log"), "utf8");
  const visits: LoggedVisit[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as {
      url: string;
      ts: string;
      status: number;
      contentType?: string;
      willRetry?: boolean;
      changesPerDay?: number;
    };
    if (!(entry.status > 0) || entry.willRetry || entry.url.endsWith("/robots.txt")) continue;
    visits.push({
      url: entry.url,
      atMs: Date.parse(entry.ts),
      html: (entry.contentType ?? "").startsWith("text/html"),
      ...(entry.changesPerDay === undefined ? {} : { estimatedRate: entry.changesPerDay / 86_400 }),
    });
  }
  return visits;
}

/** Revisits a second the agents had beyond --budget for a while: a joined agent's, until another left. */
interface ExtraBudget {
  readonly fromMs: number;
  readonly toMs: number;
  readonly perS: number;
}

/**
 * A policy's figures from its agents' crawl logs: freshness and age against the true change times over
 * the window from the end of the first pass to the agents' end of revisits (`endMs`), the model's expectation at the budget the
 * agents had over the window on average (`extra` included), the revisit rate and how well the visits
 * estimate the pages' rates.
 */
function measure(
  policy: Policy,
  logged: readonly LoggedVisit[],
  changes: PageChanges,
  startedAtMs: number,
  endMs: number,
  flags: { readonly budget: number },
  extra?: ExtraBudget,
): PolicyRun {
  // Several agents' logs: each page's visits in the order they came.
  const visits = [...logged].sort((a, b) => a.atMs - b.atMs);
  const byUrl = new Map<string, LoggedVisit[]>();
  for (const visit of visits) byUrl.set(visit.url, [...(byUrl.get(visit.url) ?? []), visit]);
  const start = Math.min(...visits.map((v) => v.atMs));
  const firstPassEnd = Math.max(...[...byUrl.values()].map((list) => (list[0] as LoggedVisit).atMs));
  const end = endMs;
  const pages: PageTimeline[] = [];
  const rates: number[] = [];
  const errors: number[] = [];
  for (const [url, list] of byUrl) {
    const { pathname, search } = new URL(url);
    const target = `${pathname}${search}`;
    const html = (list[0] as LoggedVisit).html;
    pages.push({
      fetches: list.map((v) => v.atMs).sort((a, b) => a - b),
      changes: html ? changeTimes(changes, startedAtMs, target, end) : [],
    });
    const meanMs = html ? meanChangeIntervalMs(changes, target) : undefined;
    const rate = meanMs === undefined ? 0 : 1000 / meanMs;
    rates.push(rate);
    const estimate = (list.at(-1) as LoggedVisit).estimatedRate;
    if (rate > 0 && list.length - 1 >= 5 && estimate !== undefined)
      errors.push(Math.abs(estimate - rate) / rate);
  }
  const measured = averageFreshness(pages, firstPassEnd, end);
  const revisits = visits.filter((v) => v.atMs >= firstPassEnd && v.atMs < end).length;
  const windowS = (end - firstPassEnd) / 1000;
  const extraMs =
    extra === undefined ? 0 : Math.max(0, Math.min(end, extra.toMs) - Math.max(firstPassEnd, extra.fromMs));
  // The budget as it was: --budget, and --budget plus a joined agent's for that part of the window.
  const share = windowS > 0 ? extraMs / 1000 / windowS : 0;
  const budgets = [
    { budget: flags.budget, weight: 1 - share },
    { budget: flags.budget + (extra?.perS ?? 0), weight: share },
  ].filter((part) => part.weight > 0);
  const expected = (policyOf: Policy) =>
    budgets.reduce((sum, { budget, weight }) => sum + weight * modelFreshness(policyOf, rates, budget), 0);
  const budget = budgets.reduce((sum, part) => sum + part.weight * part.budget, 0);
  const sorted = [...errors].sort((a, b) => a - b);
  return {
    policy,
    freshness: measured.freshness,
    ageS: measured.ageMs / 1000,
    model: expected(policy),
    uniformModel: expected("uniform"),
    budget,
    revisitsPerS: windowS > 0 ? revisits / windowS : 0,
    windowS,
    series: freshnessOverTime(pages, start, end, 20).map((s) => ({
      atS: s.atMs / 1000,
      freshness: s.freshness,
      ageS: s.ageMs / 1000,
    })),
    ...(sorted.length === 0 ? {} : { rateError: sorted[Math.floor(sorted.length / 2)] as number }),
  };
}

/** What Cho and Garcia-Molina's model expects of `policy` for pages changing at `rates`, at `budget` visits a second. */
function modelFreshness(policy: Policy, rates: readonly number[], budget: number): number {
  const frequencies =
    policy === "uniform"
      ? rates.map(() => budget / rates.length)
      : policy === "proportional"
        ? proportionalFrequencies(rates, budget)
        : optimalFrequencies(rates, budget);
  return expectedAverageFreshness(rates, frequencies);
}

function report(runs: readonly PolicyRun[], parameters: Record<string, string | number>): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "policy",
      "freshness",
      "model_freshness",
      "budget_per_s",
      "age_s",
      "revisits_per_s",
      "window_s",
      "rate_error_median",
    ],
    rows: runs.map((r) => [
      r.policy,
      round(r.freshness),
      round(r.model),
      round(r.budget, 2),
      round(r.ageS, 2),
      round(r.revisitsPerS, 2),
      round(r.windowS, 1),
      r.rateError === undefined ? "" : round(r.rateError, 3),
    ]),
  };
  const series = runs.flatMap((r) => r.series.map((s) => ({ policy: r.policy, ...s })));
  const time = { field: "atS", title: "time since the crawl began (s)" } as const;
  const plots: Plot[] = [
    linePlot("freshness-over-time", "Freshness of the copy over time, by policy", series, {
      x: time,
      y: { field: "freshness", title: "freshness" },
      color: { field: "policy", title: "policy" },
    }),
    linePlot("age-over-time", "Age of the copy over time (s), by policy", series, {
      x: time,
      y: { field: "ageS", title: "age (s)" },
      color: { field: "policy", title: "policy" },
    }),
  ];
  return {
    title: "Revisit policies and the freshness of a continuous crawl (Cho and Garcia-Molina)",
    method: freshnessExperiment.description,
    parameters: { policies: runs.map((r) => r.policy).join(", "), ...parameters },
    tables: [summary],
    plots,
    checks: checks(runs),
    sections: [{ heading: "Reading the figures", body: READING }],
  };
}

const READING = `- **freshness** and **age** are measured: the true change times of every page fetched, against
  the times the agent fetched it, averaged over the pages and over the window from the end of the
  first pass (every page fetched once) to the end of the revisits.
- **model_freshness** is what Cho and Garcia-Molina's model expects of the policy from the pages'
  true rates at the budget the agents had (**budget_per_s**, on average over the window: with
  \`--join-leave\` a joined agent adds its own until the leaver goes, each part of the window weighed); the measured figure falls short of it by what the agent spends
  learning the rates (optimal, proportional) and by the first pass.
- **rate_error_median**: the median relative error of the change rate the agent estimated from each
  page's own visits (the crawl log's \`changesPerDay\` at the page's last visit: Cho and Garcia-Molina's
  estimator from its Last-Modified dates, or from its visits alone) against the true rate, over pages
  revisited 5 times or more. The optimal policy allocates on these estimates shrunk towards the other
  pages' (their Gamma prior), which this figure leaves out.`;

function checks(runs: readonly PolicyRun[]): Check[] {
  const of = (policy: Policy) => runs.find((r) => r.policy === policy);
  const uniform = of("uniform");
  const proportional = of("proportional");
  const optimal = of("optimal");
  const result: Check[] = [];
  if (uniform && proportional) {
    result.push({
      claim: "A uniform policy keeps a collection fresher than a proportional one (Cho and Garcia-Molina)",
      holds: uniform.freshness > proportional.freshness,
      detail: `freshness: uniform ${uniform.freshness.toFixed(3)}, proportional ${proportional.freshness.toFixed(3)}`,
    });
  }
  if (uniform && optimal) {
    // A joined agent adds its budget to the adaptive policies', not to uniform's (its interval is pages ÷
    // budget): uniform is then judged at the optimal run's budgets, its measured freshness scaled by the
    // model's expectations at the two.
    const scaled = uniform.freshness * (optimal.uniformModel / uniform.model);
    const sameBudget = Math.abs(optimal.budget - uniform.budget) < 1e-9;
    result.push({
      claim: "The optimal policy keeps a collection fresher than the uniform one (Cho and Garcia-Molina)",
      holds: optimal.freshness > (sameBudget ? uniform.freshness : scaled),
      detail: `freshness: optimal (rates estimated) ${optimal.freshness.toFixed(3)}, uniform ${uniform.freshness.toFixed(3)}${
        sameBudget
          ? ""
          : ` at ${uniform.budget.toFixed(2)} revisits/s, ${scaled.toFixed(3)} scaled by the model to the optimal run's ${optimal.budget.toFixed(2)}`
      }`,
    });
    result.push({
      claim:
        "The optimal policy, its rates estimated as it goes, comes within 5% of the optimum computed from the true rates",
      holds: optimal.freshness >= 0.95 * optimal.model,
      detail: `measured ${optimal.freshness.toFixed(3)}, optimum from the true rates ${optimal.model.toFixed(3)}`,
    });
  }
  if (optimal?.rateError !== undefined) {
    result.push({
      claim:
        "Change rates estimated from the visits come near the true ones (median relative error under 35%)",
      holds: optimal.rateError < 0.35,
      detail: `median relative error ${optimal.rateError.toFixed(3)} of the agent's estimates over pages revisited 5 times or more`,
    });
  }
  return result;
}
