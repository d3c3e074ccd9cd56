import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_DEFAULTS } from "../../agent/agent-options.js";
import { LINK_MODES, type LinkMode } from "../../agent/link-router.js";
import type { FlagSpecs } from "../../cli/flags.js";
import { type Hasher64, loadHasher64 } from "../../hashing/index.js";
import { measureAgentDirs, readFetches } from "../../report/index.js";
import { computeTruth, type RunningTestWeb, startTestWeb, type Truth } from "../../testweb/index.js";
import { hostKey } from "../../url/index.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { choiceList, integerList } from "../lists.js";
import { type LocalClusterRun, runLocalCluster } from "../local-cluster.js";
import { markdownTable } from "../report-writer.js";

/**
 * Cho and Garcia-Molina's *Parallel Crawlers* experiment: the firewall, cross-over and exchange modes
 * compared by coverage, overlap, communication overhead and quality as the number of agents grows —
 * with real agents as processes on the built-in test web, under a static assignment.
 */

const MODES_FLAGS = {
  modes: {
    type: "string",
    help: `modes compared, comma-separated: ${LINK_MODES.join(", ")}`,
    default: "firewall,cross,exchange",
    placeholder: "MODE,…",
  },
  agents: {
    type: "string",
    help: "agent counts, comma-separated (1…32; one agent is one crawl, the same in every mode)",
    default: "1,2,4,8,16",
    placeholder: "N,N,…",
  },
  hosts: { type: "integer", help: "hosts of the test web", default: 100, min: 10, max: 2000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 5000, min: 200, max: 200_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1, min: 0 },
  "cross-links": {
    type: "integer",
    help: "percentage of an article's links that go to other hosts (the built-in web's 20 makes every host's cluster dense; fewer isolates partitions)",
    default: 20,
    min: 0,
    max: 50,
  },
  "seeds-per-agent": {
    type: "integer",
    help: "home pages of its own hosts each agent starts from",
    default: 1,
    min: 1,
    max: 50,
  },
  "timeout-s": {
    type: "integer",
    help: "longest a single crawl may take before the experiment fails",
    default: 300,
    min: 10,
  },
  data: {
    type: "string",
    help: "folder for the crawls' data, kept (default: a temp folder, removed at the end)",
    placeholder: "DIR",
  },
} as const satisfies FlagSpecs;

/** The share of the truth's pages, by in-degree, the quality metric looks for. */
const TOP_SHARE = 0.01;
/** The share of the crawl (by fetches) within which they should come. */
const EARLY_SHARE = 0.1;

/** One crawl: a mode at a number of agents. */
interface Point {
  readonly mode: LinkMode;
  readonly agents: number;
  /** URLs the crawl should fetch: the truth from its seeds (U). */
  readonly truthSize: number;
  /** Fetches (N). */
  readonly fetches: number;
  /** Distinct URLs fetched (I). */
  readonly distinct: number;
  /** Truth URLs fetched / U. */
  readonly coverage: number;
  /** (N − I) / I. */
  readonly overlap: number;
  /** URLs sent to other agents. */
  readonly urlsSent: number;
  /** `urlsSent` / N. */
  readonly overhead: number;
  /** Share of the truth's top pages by in-degree fetched within the first tenth of the fetches. */
  readonly quality: number;
  /** Links to other agents' hosts dropped (firewall). */
  readonly dropped: number;
  readonly seconds: number;
}

/** `ubicrawl experiment modes`. */
export const modesExperiment: Experiment<typeof MODES_FLAGS> = {
  name: "modes",
  summary: "firewall, cross-over and exchange modes against agents (Cho and Garcia-Molina)",
  description: `Cho and Garcia-Molina's comparison of a parallel crawler's modes, with real agents: for each
mode and number of agents, starts the agents as processes (agent-1 … agent-n, capacity 1, --mode MODE),
waits until each sees all the others, so the assignment is static while they crawl, then gives each
agent --seeds-per-agent home pages of its own hosts and lets the crawl run to its end. From the crawl
logs and the test web's ground truth (U = every URL reachable from those seeds under the crawler's
rules): coverage I/U, overlap (N − I)/I with N fetches and I distinct URLs fetched, communication
overhead = URLs sent between agents / N, and quality = share of the truth's top 1% pages by in-degree
fetched within the first 10% of the fetches (all agents' logs merged by time). The firewall mode drops
links to other agents' hosts; the cross-over mode crawls them itself once its own hosts are done; the
exchange mode sends them to their owners. The report checks the paper's table of the modes.`,
  flags: MODES_FLAGS,
  async run(flags, context) {
    const modes = choiceList("modes", flags.modes, LINK_MODES);
    const agentCounts = integerList("agents", flags.agents, 1, 32).sort((a, b) => a - b);
    const web = await startTestWeb({
      seed: flags.seed,
      hosts: flags.hosts,
      pages: flags.pages,
      crossLinkPercent: flags["cross-links"],
    });
    const dataRoot = flags.data ?? (await mkdtemp(join(tmpdir(), "ubicrawl-modes-")));
    const hasher = await loadHasher64();
    const points: Point[] = [];
    try {
      const homes = homePages(web);
      for (const agents of agentCounts) {
        // One agent has no other agent's host: its crawl is the same in every mode.
        const runModes = agents === 1 ? ([modes[0]] as LinkMode[]) : modes;
        for (const mode of runModes) {
          const run = await runLocalCluster({
            dir: join(dataRoot, `${mode}-${agents}`),
            web,
            agents,
            flags: { mode },
            seedsOf: (id, ownerOf) => pickSeeds(homes, id, ownerOf, flags["seeds-per-agent"], hasher),
            timeoutMs: flags["timeout-s"] * 1000,
          });
          const point = await measure(web, mode, agents, run);
          if (agents === 1) for (const each of modes) points.push({ ...point, mode: each });
          else points.push(point);
          context.progress(
            `modes: ${agents === 1 ? "any mode" : mode}, ${agents} agents: coverage ${point.coverage.toFixed(3)}, ` +
              `overlap ${point.overlap.toFixed(3)}, overhead ${point.overhead.toFixed(3)}, ${point.seconds.toFixed(1)} s`,
          );
        }
      }
    } finally {
      await web.stop();
      if (flags.data === undefined) await rm(dataRoot, { recursive: true, force: true });
    }
    return report(points, {
      modes,
      agentCounts,
      web: `${flags.hosts} hosts, about ${flags.pages} pages, seed ${flags.seed}, ${flags["cross-links"]}% of article links to other hosts`,
      seedsPerAgent: flags["seeds-per-agent"],
    });
  },
};

/** Home pages of the web's normal hosts that a crawl from its seeds fetches: the seeds to pick from. */
function homePages(web: RunningTestWeb): string[] {
  const truth = computeTruth(web.model, web.port, truthLimits());
  return truth.urls.filter((url) => {
    const parsed = new URL(url);
    const index = web.model.hostIndexByName.get(parsed.hostname);
    return parsed.pathname === "/" && index !== undefined && web.model.hosts[index]?.kind === "normal";
  });
}

/** `count` of `homes` on hosts `id` owns, in an order fixed by the id and the URL. */
function pickSeeds(
  homes: readonly string[],
  id: string,
  ownerOf: (host: string) => string,
  count: number,
  hasher: Hasher64,
): string[] {
  return homes
    .filter((url) => ownerOf(hostKey(url)) === id)
    .map((url) => ({ url, rank: hasher.hashString(`${id} ${url}`) }))
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
    .slice(0, count)
    .map(({ url }) => url);
}

function truthLimits() {
  return {
    maxDepth: AGENT_DEFAULTS.maxDepth,
    maxPagesPerHost: AGENT_DEFAULTS.maxPagesPerHost,
    userAgent: AGENT_DEFAULTS.userAgent,
  };
}

/** The metrics of one crawl, from its agents' crawl logs and `stopped` records. */
async function measure(
  web: RunningTestWeb,
  mode: LinkMode,
  agents: number,
  run: LocalClusterRun,
): Promise<Point> {
  const seeds = run.agents.flatMap((agent) => agent.seeds);
  const truth = computeTruth(web.model, web.port, truthLimits(), seeds, { inDegree: true });
  const dirs = run.agents.map((agent) => agent.dir);
  const report = await measureAgentDirs(dirs, new Set(truth.urls));
  let urlsSent = 0;
  let dropped = 0;
  for (const agent of run.agents) {
    const exchange = agent.stopped.exchange as { urlsSent?: number } | undefined;
    urlsSent += exchange?.urlsSent ?? 0;
    dropped += (agent.stopped.dropped as Record<string, number> | undefined)?.firewall ?? 0;
  }
  const fetches = (await Promise.all(dirs.map(readFetches))).flat().sort((a, b) => a.atMs - b.atMs);
  return {
    mode,
    agents,
    truthSize: truth.urls.length,
    fetches: report.fetches,
    distinct: report.distinctUrls,
    coverage: report.coverage?.fraction ?? 0,
    overlap: report.overlap,
    urlsSent,
    overhead: report.fetches === 0 ? 0 : urlsSent / report.fetches,
    quality: quality(truth, fetches),
    dropped,
    seconds: run.seconds,
  };
}

/**
 * Cho and Garcia-Molina's quality: of the truth's top {@link TOP_SHARE} URLs by in-degree (ties broken
 * by URL), the share fetched within the first {@link EARLY_SHARE} of the fetches, in time order.
 */
function quality(truth: Truth, fetches: readonly { url: string }[]): number {
  const inDegree = truth.inDegree ?? new Map<string, number>();
  const ranked = [...truth.urls].sort(
    (a, b) => (inDegree.get(b) ?? 0) - (inDegree.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0),
  );
  const top = new Set(ranked.slice(0, Math.max(1, Math.ceil(ranked.length * TOP_SHARE))));
  const early = new Set(fetches.slice(0, Math.ceil(fetches.length * EARLY_SHARE)).map((f) => f.url));
  let found = 0;
  for (const url of top) if (early.has(url)) found++;
  return found / top.size;
}

const round = (value: number, digits = 4) => Number(value.toFixed(digits));

function report(
  points: readonly Point[],
  setup: { modes: readonly LinkMode[]; agentCounts: readonly number[]; web: string; seedsPerAgent: number },
): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "mode",
      "agents",
      "coverage",
      "overlap",
      "communication_overhead",
      "quality",
      "fetches",
      "distinct_urls",
      "truth_urls",
      "urls_sent",
      "links_dropped",
      "seconds",
    ],
    rows: points.map((p) => [
      p.mode,
      p.agents,
      round(p.coverage),
      round(p.overlap),
      round(p.overhead),
      round(p.quality),
      p.fetches,
      p.distinct,
      p.truthSize,
      p.urlsSent,
      p.dropped,
      round(p.seconds, 1),
    ]),
  };
  const data = points.map((p) => ({
    mode: p.mode,
    agents: p.agents,
    coverage: round(p.coverage),
    overlap: round(p.overlap),
    overhead: round(p.overhead),
    quality: round(p.quality),
  }));
  const metricPlot = (field: keyof (typeof data)[number], title: string, yTitle: string): Plot => ({
    name: `${field}-vs-agents`,
    title,
    spec: {
      data: { values: data },
      width: 360,
      height: 240,
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "agents", type: "quantitative", scale: { type: "log", base: 2 }, title: "agents" },
        y: { field, type: "quantitative", title: yTitle },
        color: { field: "mode", type: "nominal", title: "mode" },
      },
    },
  });
  const metricTable = (heading: string, pick: (p: Point) => number) => ({
    heading,
    body: markdownTable(
      ["agents", ...setup.modes],
      setup.agentCounts.map((agents) => [
        String(agents),
        ...setup.modes.map((mode) => {
          const point = points.find((p) => p.mode === mode && p.agents === agents);
          return point ? pick(point).toFixed(3) : "";
        }),
      ]),
    ),
  });
  return {
    title: "Firewall, cross-over and exchange modes (Cho and Garcia-Molina)",
    method: modesExperiment.description,
    parameters: {
      modes: setup.modes.join(", "),
      agents: setup.agentCounts.join(", "),
      "test web": setup.web,
      "seeds per agent": setup.seedsPerAgent,
      quality: `top ${TOP_SHARE * 100}% of the truth by in-degree, within the first ${EARLY_SHARE * 100}% of the fetches`,
    },
    tables: [summary],
    plots: [
      metricPlot("coverage", "Coverage (I/U) against agents, per mode", "coverage"),
      metricPlot("overlap", "Overlap ((N − I)/I) against agents, per mode", "overlap"),
      metricPlot(
        "overhead",
        "Communication overhead (URLs sent / pages) against agents, per mode",
        "URLs sent per page",
      ),
      metricPlot(
        "quality",
        "Quality: top 1% pages by in-degree fetched in the first 10% of the crawl",
        "quality",
      ),
    ],
    checks: checks(points, setup),
    sections: [
      metricTable("Coverage I/U", (p) => p.coverage),
      metricTable("Overlap (N − I)/I", (p) => p.overlap),
      metricTable("Communication overhead: URLs sent between agents per page fetched", (p) => p.overhead),
      metricTable("Quality", (p) => p.quality),
    ],
  };
}

/** The paper's table of the modes, checked. */
function checks(
  points: readonly Point[],
  setup: { modes: readonly LinkMode[]; agentCounts: readonly number[] },
): Check[] {
  const of = (mode: LinkMode) => points.filter((p) => p.mode === mode).sort((a, b) => a.agents - b.agents);
  const list = (series: readonly Point[], pick: (p: Point) => number) =>
    series.map((p) => `${p.agents}: ${pick(p).toFixed(3)}`).join(", ");
  const result: Check[] = [];
  const many = setup.agentCounts.length > 1 && Math.max(...setup.agentCounts) > 1;
  if (setup.modes.includes("firewall")) {
    const series = of("firewall");
    const first = series[0];
    const last = series.at(-1);
    result.push({
      claim: "Firewall mode: no overlap at any number of agents (Cho and Garcia-Molina)",
      holds: series.every((p) => p.fetches === p.distinct),
      detail: `overlap by agents: ${list(series, (p) => p.overlap)}`,
    });
    if (many && first && last) {
      result.push({
        claim: "Firewall mode: coverage falls as agents are added (Cho and Garcia-Molina)",
        holds: last.coverage < first.coverage,
        detail: `coverage by agents: ${list(series, (p) => p.coverage)}`,
      });
    }
  }
  if (setup.modes.includes("cross") && many) {
    const series = of("cross").filter((p) => p.agents > 1);
    const firewall = of("firewall");
    result.push({
      claim:
        "Cross-over mode: overlap appears with several agents and rises with them (Cho and Garcia-Molina)",
      holds:
        series.length > 0 &&
        (series.at(-1)?.overlap ?? 0) > 0 &&
        (series.at(-1)?.overlap ?? 0) >= (series[0]?.overlap ?? 0),
      detail: `overlap by agents: ${list(series, (p) => p.overlap)}`,
    });
    if (firewall.length > 0) {
      const pairs = series.flatMap((p) => {
        const f = firewall.find((q) => q.agents === p.agents);
        return f ? [{ agents: p.agents, cross: p.coverage, firewall: f.coverage }] : [];
      });
      result.push({
        claim: "Cross-over mode: coverage at least the firewall mode's (Cho and Garcia-Molina)",
        holds: pairs.every((p) => p.cross >= p.firewall),
        detail: pairs.map((p) => `${p.agents}: ${p.cross.toFixed(3)} vs ${p.firewall.toFixed(3)}`).join(", "),
      });
    }
  }
  if (setup.modes.includes("exchange")) {
    const series = of("exchange");
    result.push({
      claim: "Exchange mode: coverage 1 and overlap 0 at every number of agents (Cho and Garcia-Molina)",
      holds: series.every((p) => p.coverage === 1 && p.fetches === p.distinct),
      detail: `coverage / overlap by agents: ${series.map((p) => `${p.agents}: ${p.coverage.toFixed(4)} / ${p.overlap.toFixed(4)}`).join(", ")}`,
    });
    if (many) {
      const rising = series.every((p, i) => i === 0 || p.overhead >= (series[i - 1]?.overhead ?? 0));
      result.push({
        claim:
          "Exchange mode: overhead grows with the agents — a link crosses to another agent's host with probability (n − 1)/n (Cho and Garcia-Molina)",
        holds: rising && (series[0]?.agents !== 1 || series[0]?.overhead === 0),
        detail: `URLs sent per page (and per page ÷ (n − 1)/n) by agents: ${series
          .map((p) =>
            p.agents === 1
              ? `1: ${p.overhead.toFixed(3)}`
              : `${p.agents}: ${p.overhead.toFixed(3)} (${(p.overhead / ((p.agents - 1) / p.agents)).toFixed(3)})`,
          )
          .join(", ")}`,
      });
    }
  }
  return result;
}
