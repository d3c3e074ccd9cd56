import { writeFile } from "node:fs/promises";
import type { FlagSpecs } from "../../flags/index.js";
import { computeTruth } from "../../testweb/index.js";
import { type CrawlMetrics, round, truthLimits } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { integerList } from "../lists.js";

/**
 * Cho and Garcia-Molina's replication: every agent knows the k most linked URLs of a previous crawl,
 * which are then never exchanged — how much communication that saves against k.
 */

const REPLICATION_FLAGS = {
  top: {
    type: "string",
    help: "numbers k of most linked URLs replicated at every agent, comma-separated (0 replicates none)",
    default: "0,10,100,1000,10000",
    placeholder: "K,K,…",
  },
  agents: { type: "integer", help: "agents of every crawl", default: 4, min: 2, max: 32 },
  ...LAB_CRAWL_FLAGS,
  // A web larger than the others' default, so that 10,000 URLs are half of it, not all of it.
  hosts: { ...LAB_CRAWL_FLAGS.hosts, default: 200 },
  pages: { ...LAB_CRAWL_FLAGS.pages, default: 20_000 },
} as const satisfies FlagSpecs;

/** One crawl: k URLs replicated. */
interface Point extends CrawlMetrics {
  readonly top: number;
  /** Links and seeds not sent because every agent has the URL. */
  readonly replicatedDrops: number;
}

/** `ubicrawl experiment replication`. */
export const replicationExperiment: Experiment<typeof REPLICATION_FLAGS> = {
  name: "replication",
  summary: "communication saved by replicating the k most linked URLs at every agent (Cho and Garcia-Molina)",
  description: `Cho and Garcia-Molina's replication of popular URLs, with real agents in the exchange mode: for
each k, every agent gets the k most linked URLs of the test web (by in-degree over its whole link graph,
which is what a complete previous crawl of this unchanging web counts) with --replicated-urls and, on
its own hosts, as seeds; a link to one of them is never sent to its owner, who has it. --agents agents
crawl as in the modes experiment (static assignment, seeds of their own hosts). Reports URLs sent
between agents per page fetched against k, the share saved against k = 0, coverage and overlap (which
replication must leave at 1 and 0) and quality.`,
  flags: REPLICATION_FLAGS,
  async run(flags, context) {
    const tops = integerList("top", flags.top, 0, 1_000_000).sort((a, b) => a - b);
    const crawls = await LabCrawls.open(flags, "replication");
    const points: Point[] = [];
    try {
      const { web } = crawls;
      const truth = computeTruth(web.model, web.port, truthLimits(), undefined, { inDegree: true });
      const inDegree = truth.inDegree ?? new Map<string, number>();
      const ranked = [...truth.urls].sort(
        (a, b) => (inDegree.get(b) ?? 0) - (inDegree.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0),
      );
      for (const top of tops) {
        const replicated = ranked.slice(0, top);
        const file = crawls.dirOf(`top-${top}.txt`);
        await writeFile(file, replicated.map((url) => `${url}\n`).join(""));
        const metrics = await crawls.crawl(
          `top-${top}`,
          flags.agents,
          top === 0 ? {} : { "replicated-urls": file },
          { moreSeeds: replicated },
        );
        const point: Point = { top, replicatedDrops: metrics.drops.replicated ?? 0, ...metrics };
        points.push(point);
        context.progress(
          `replication: top ${top}: ${point.overhead.toFixed(3)} URLs a page, coverage ${point.coverage.toFixed(3)}, ${point.seconds.toFixed(1)} s`,
        );
      }
    } finally {
      await crawls.close();
    }
    return report(points, { agents: flags.agents, ...crawls.description });
  },
};

function report(points: readonly Point[], parameters: Record<string, string | number>): ExperimentResult {
  const base = points.find((p) => p.top === 0);
  const saved = (p: Point) => (base && base.overhead > 0 ? 1 - p.overhead / base.overhead : 0);
  const summary: Table = {
    name: "summary",
    columns: [
      "top_k",
      "urls_per_page",
      "saved",
      "coverage",
      "overlap",
      "quality",
      "fetches",
      "failures",
      "urls_sent",
      "links_not_sent",
      "seconds",
    ],
    rows: points.map((p) => [
      p.top,
      round(p.overhead),
      round(saved(p)),
      round(p.coverage),
      round(p.overlap),
      round(p.quality),
      p.fetches,
      p.failures,
      p.urlsSent,
      p.replicatedDrops,
      round(p.seconds, 1),
    ]),
  };
  // A log scale has no 0: k = 0 is the baseline the savings are measured against, drawn as a rule.
  const plotted = points.filter((p) => p.top > 0).map((p) => ({ top: p.top, overhead: round(p.overhead) }));
  const plots: Plot[] = [
    {
      name: "overhead-vs-top",
      title:
        "URLs sent between agents per page fetched against k, the most linked URLs replicated (rule: k = 0)",
      spec: {
        width: 360,
        height: 240,
        layer: [
          {
            data: { values: plotted },
            mark: { type: "line", point: true },
            encoding: {
              x: { field: "top", type: "quantitative", scale: { type: "log" }, title: "k (URLs replicated)" },
              y: {
                field: "overhead",
                type: "quantitative",
                title: "URLs sent per page",
                scale: { zero: true },
              },
            },
          },
          ...(base
            ? [
                {
                  data: { values: [{ overhead: round(base.overhead) }] },
                  mark: { type: "rule" as const, strokeDash: [4, 4] },
                  encoding: { y: { field: "overhead", type: "quantitative" as const } },
                },
              ]
            : []),
        ],
      },
    },
  ];
  return {
    title: "Replicating the most linked URLs (Cho and Garcia-Molina)",
    method: replicationExperiment.description,
    parameters: { k: points.map((p) => p.top).join(", "), ...parameters },
    tables: [summary],
    plots,
    checks: checks(points, saved),
    sections: [{ heading: "Reading the figures", body: READING }],
  };
}

/** What the figures mean here. */
const READING = `- The URLs most linked are the ones most often sent: home pages and sections of popular hosts,
  linked from every host. Replicating a few of them removes a large part of the traffic; the rest of
  the saving comes slowly, as each further URL replicated was sent by fewer agents.
- An agent sends each URL once whatever the number of links to it, so a URL linked a thousand times
  costs at most one message per agent here, not one per link as in the paper's count: the savings
  are smaller than the paper's for the same k.
- Replication costs memory, not pages: every agent holds the k URLs, and owners crawl the ones of
  their hosts as seeds; coverage and overlap do not move.`;

function checks(points: readonly Point[], saved: (p: Point) => number): Check[] {
  const series = (pick: (p: Point) => number) =>
    points.map((p) => `${p.top}: ${pick(p).toFixed(3)}`).join(", ");
  const result: Check[] = [
    {
      claim: "Replication loses nothing: coverage 1 and overlap 0 at every k",
      holds: points.every((p) => p.coverage === 1 && p.fetches === p.distinct),
      detail: `coverage by k: ${series((p) => p.coverage)}; overlap: ${series((p) => p.overlap)}`,
    },
  ];
  if (points.length > 1 && points[0]?.top === 0) {
    const falling = points.every((p, i) => i === 0 || p.overhead <= (points[i - 1] as Point).overhead * 1.02);
    const last = points.at(-1) as Point;
    result.push({
      claim:
        "Replicating the most linked URLs cuts the URLs exchanged, more as k grows (Cho and Garcia-Molina)",
      holds: falling && last.overhead < (points[0] as Point).overhead,
      detail: `URLs sent per page by k: ${series((p) => p.overhead)}`,
    });
    result.push({
      claim: "The saving reaches tens of percent (Cho and Garcia-Molina)",
      holds: saved(last) >= 0.1,
      detail: `share saved against k = 0 by k: ${series(saved)}`,
    });
  }
  return result;
}
