import { LINK_MODES, type LinkMode } from "../../agent/link-router.js";
import type { FlagSpecs } from "../../flags/index.js";
import { type CrawlMetrics, EARLY_SHARE, round, TOP_SHARE } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { choiceList, integerList } from "../lists.js";
import { linePlot } from "../plot.js";
import { byAgentsTable } from "../report-writer.js";

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
  ...LAB_CRAWL_FLAGS,
} as const satisfies FlagSpecs;

/** One crawl: a mode at a number of agents. */
interface Point extends CrawlMetrics {
  readonly mode: LinkMode;
  readonly agents: number;
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
    const crawls = await LabCrawls.open(flags, "modes");
    const points: Point[] = [];
    try {
      for (const agents of agentCounts) {
        // One agent has no other agent's host: its crawl is the same in every mode.
        const runModes = agents === 1 ? ([modes[0]] as LinkMode[]) : modes;
        for (const mode of runModes) {
          const point: Point = {
            mode,
            agents,
            ...(await crawls.crawl(`${mode}-${agents}`, agents, { mode })),
          };
          if (agents === 1) for (const each of modes) points.push({ ...point, mode: each });
          else points.push(point);
          context.progress(
            `modes: ${agents === 1 ? "any mode" : mode}, ${agents} agents: coverage ${point.coverage.toFixed(3)}, ` +
              `overlap ${point.overlap.toFixed(3)}, overhead ${point.overhead.toFixed(3)}, ${point.seconds.toFixed(1)} s`,
          );
        }
      }
    } finally {
      await crawls.close();
    }
    return report(points, { modes, agentCounts, parameters: crawls.description });
  },
};

/** What the figures mean where the paper's setting and this one differ. */
const READING = `- The **firewall** mode loses the pages its agents reach only through other agents' hosts. How many
  depends on how densely the web's hosts link each other: on the built-in web every home page links
  3 popular hosts and its two neighbours in a ring of hosts, and about 20% of an article's links leave
  its host, so a partition of a few hosts is seldom cut off; \`--cross-links\` makes that sparser.
- The **cross-over** mode is run to the crawl's end, as the paper defines it (an agent follows links
  to other agents' hosts once its own are done): by then every agent has crossed into nearly every
  host, so coverage is 1 and overlap about n − 1. The paper shows the same trade as a curve: overlap
  rising with the coverage reached.
- The **exchange** mode sends each URL at most once per agent, not once per link: an agent's seen set
  and its record of what it sent drop the rest (Cho and Garcia-Molina only drop repeats within a
  batch). So overhead grows faster than (n − 1)/n: with more agents, each finds a smaller part of the
  web, and a URL linked from pages of several agents is sent by each of them.
- **Quality** counts, in the first 10% of all fetches by time, the top 1% pages by in-degree. With one
  agent the popular hosts' home pages come early; with many, an agent is deep in its own hosts before
  links to other agents' popular pages reach their owners in batches, which is the paper's point that
  less frequent exchange costs quality.`;

function report(
  points: readonly Point[],
  setup: {
    modes: readonly LinkMode[];
    agentCounts: readonly number[];
    parameters: Record<string, string | number>;
  },
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
      "failures",
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
      p.failures,
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
  const metricPlot = (field: keyof (typeof data)[number], title: string, yTitle: string): Plot =>
    linePlot(`${field}-vs-agents`, title, data, {
      x: { field: "agents", title: "agents", log: 2 },
      y: { field, title: yTitle },
      color: { field: "mode", title: "mode" },
    });
  const metricTable = (heading: string, pick: (p: Point) => number) => ({
    heading,
    body: byAgentsTable(setup.agentCounts, setup.modes, String, (agents, mode) => {
      const point = points.find((p) => p.mode === mode && p.agents === agents);
      return point && pick(point).toFixed(3);
    }),
  });
  return {
    title: "Firewall, cross-over and exchange modes (Cho and Garcia-Molina)",
    method: modesExperiment.description,
    parameters: {
      modes: setup.modes.join(", "),
      agents: setup.agentCounts.join(", "),
      ...setup.parameters,
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
      { heading: "Reading the figures", body: READING },
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
