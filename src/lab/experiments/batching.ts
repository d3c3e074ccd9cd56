import type { FlagSpecs } from "../../flags/index.js";
import { MAX_URLS_PER_BATCH } from "../../transport/index.js";
import { type CrawlMetrics, round } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { integerList } from "../lists.js";
import { linePlot } from "../plot.js";

/**
 * Cho and Garcia-Molina's batch communication: the exchange mode's links sent each at once, or in
 * batches of 10 … 10,000 URLs — URLs and messages per page, and what waiting for a batch costs.
 */

const BATCHING_FLAGS = {
  batches: {
    type: "string",
    help: `URLs per batch (--batch-urls of the agents), comma-separated (1…${MAX_URLS_PER_BATCH.toLocaleString("en")}; 1 sends each URL at once)`,
    default: "1,10,100,1000,10000",
    placeholder: "B,B,…",
  },
  agents: { type: "integer", help: "agents of every crawl", default: 4, min: 2, max: 32 },
  ...LAB_CRAWL_FLAGS,
} as const satisfies FlagSpecs;

/** One crawl: a batch size. */
interface Point extends CrawlMetrics {
  readonly batchUrls: number;
}

/** `ubicrawl experiment batching`. */
export const batchingExperiment: Experiment<typeof BATCHING_FLAGS> = {
  name: "batching",
  summary: "URLs and messages per page against the batch size of the exchange (Cho and Garcia-Molina)",
  description: `Cho and Garcia-Molina's batch communication, with real agents in the exchange mode: for each
batch size B, --agents agents crawl the test web as in the modes experiment (static assignment, seeds
of their own hosts) with --batch-urls B: a batch to another agent goes once it holds B URLs, and a
smaller one within 30 s, or 250 ms when its destination is short of work or the sender is idle. B = 1
sends every URL in a message of its own. Reports URLs sent per page fetched (the communication
overhead), messages (batches) per page, coverage, overlap, quality (top 1% pages by in-degree within
the first 10% of the fetches) and the crawl's time.`,
  flags: BATCHING_FLAGS,
  async run(flags, context) {
    const sizes = integerList("batches", flags.batches, 1, MAX_URLS_PER_BATCH).sort((a, b) => a - b);
    const crawls = await LabCrawls.open(flags, "batching");
    const points: Point[] = [];
    try {
      for (const batchUrls of sizes) {
        const point: Point = {
          batchUrls,
          ...(await crawls.crawl(`batch-${batchUrls}`, flags.agents, { "batch-urls": batchUrls })),
        };
        points.push(point);
        context.progress(
          `batching: ${batchUrls} URLs a batch: ${(point.overhead).toFixed(3)} URLs and ` +
            `${messagesPerPage(point).toFixed(4)} messages a page, ${point.seconds.toFixed(1)} s`,
        );
      }
    } finally {
      await crawls.close();
    }
    return report(points, { agents: flags.agents, ...crawls.description });
  },
};

function messagesPerPage(point: CrawlMetrics): number {
  return point.fetches === 0 ? 0 : point.batchesSent / point.fetches;
}

function report(points: readonly Point[], parameters: Record<string, string | number>): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "batch_urls",
      "urls_per_page",
      "messages_per_page",
      "urls_per_message",
      "coverage",
      "overlap",
      "quality",
      "fetches",
      "failures",
      "urls_sent",
      "messages",
      "seconds",
    ],
    rows: points.map((p) => [
      p.batchUrls,
      round(p.overhead),
      round(messagesPerPage(p), 5),
      p.batchesSent === 0 ? 0 : round(p.urlsSent / p.batchesSent, 1),
      round(p.coverage),
      round(p.overlap),
      round(p.quality),
      p.fetches,
      p.failures,
      p.urlsSent,
      p.batchesSent,
      round(p.seconds, 1),
    ]),
  };
  const data = points.flatMap((p) => [
    { batch: p.batchUrls, measure: "URLs per page", value: round(p.overhead, 5) },
    { batch: p.batchUrls, measure: "messages per page", value: round(messagesPerPage(p), 5) },
  ]);
  const batch = { field: "batch", title: "URLs per batch (--batch-urls)", log: true } as const;
  const plots: Plot[] = [
    linePlot(
      "per-page-vs-batch",
      "URLs and messages sent between agents per page fetched, against the batch size",
      data,
      {
        x: batch,
        y: { field: "value", title: "per page fetched", log: true },
        color: { field: "measure", title: "" },
      },
    ),
    linePlot(
      "quality-vs-batch",
      "Quality (top 1% pages by in-degree fetched in the first 10% of the crawl) against the batch size",
      points.map((p) => ({ batch: p.batchUrls, quality: round(p.quality) })),
      { x: batch, y: { field: "quality", title: "quality" } },
    ),
  ];
  return {
    title: "Batch communication in the exchange mode (Cho and Garcia-Molina)",
    method: batchingExperiment.description,
    parameters: { "batch sizes": points.map((p) => p.batchUrls).join(", "), ...parameters },
    tables: [summary],
    plots,
    checks: checks(points),
    sections: [{ heading: "Reading the figures", body: READING }],
  };
}

/** What the figures mean here. */
const READING = `- **URLs per page** hardly move with the batch size: an agent sends each URL once, whatever the
  batch it goes in (its seen set and its record of what it sent drop the repeats), so batching does
  not save URLs here as it does in the paper, where only repeats within one batch are dropped.
- **Messages per page** fall with the batch size until batches stop filling: past a few hundred URLs,
  a batch goes when its time is up (30 s, or 250 ms when its destination is short of work), not when
  it is full, and the figure levels off.
- **Quality** and the crawl's time show what waiting costs: a URL waiting in a batch is a page its
  owner cannot fetch yet.`;

function checks(points: readonly Point[]): Check[] {
  const result: Check[] = [];
  const series = (pick: (p: Point) => number) =>
    points.map((p) => `${p.batchUrls}: ${pick(p).toFixed(4)}`).join(", ");
  result.push({
    claim: "Batching changes how links travel, not the crawl: coverage 1 and overlap 0 at every batch size",
    holds: points.every((p) => p.coverage === 1 && p.fetches === p.distinct),
    detail: `coverage by batch size: ${series((p) => p.coverage)}; overlap: ${series((p) => p.overlap)}`,
  });
  const single = points.find((p) => p.batchUrls === 1);
  if (single) {
    result.push({
      claim: "Sending each URL at once costs one message per URL",
      holds: single.batchesSent === single.urlsSent,
      detail: `batch size 1: ${single.urlsSent} URLs in ${single.batchesSent} messages`,
    });
  }
  if (points.length > 1) {
    const first = points[0] as Point;
    const last = points.at(-1) as Point;
    const falling = points.every(
      (p, i) => i === 0 || messagesPerPage(p) <= messagesPerPage(points[i - 1] as Point) * 1.05,
    );
    result.push({
      claim: "Batches cut the messages exchanged per page (Cho and Garcia-Molina)",
      holds: falling && messagesPerPage(last) < messagesPerPage(first),
      detail: `messages per page by batch size: ${series(messagesPerPage)}`,
    });
    const overheads = points.map((p) => p.overhead);
    const spread = Math.max(...overheads) / Math.max(Math.min(...overheads), Number.MIN_VALUE);
    result.push({
      claim: "URLs exchanged per page do not depend on the batch size: each URL goes once per agent",
      holds: spread <= 1.15,
      detail: `URLs per page by batch size: ${series((p) => p.overhead)} (largest / smallest ${spread.toFixed(2)})`,
    });
  }
  return result;
}
