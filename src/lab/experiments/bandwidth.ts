import { ErrorCode, UbiError } from "../../errors.js";
import { type FlagSpecs, MIN_MAX_BANDWIDTH, parseByteRate } from "../../flags/index.js";
import type { AgentFlagValues } from "../../launch/index.js";
import { readFetches } from "../../report/index.js";
import { round } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls } from "../lab-crawls.js";
import { integerList } from "../lists.js";

/**
 * Diligenti et al.'s bandwidth-bounded crawler, measured: one agent against test-web hosts throttled to
 * different speeds, with no bound, the naive stop-and-go control and the predictive one at several
 * search depths — the bandwidth it uses over time against the bound.
 */

const BANDWIDTH_FLAGS = {
  bound: {
    type: "string",
    help: "the agent's --max-bandwidth",
    default: "2MB/s",
    placeholder: "RATE",
  },
  depths: {
    type: "string",
    help: "--bandwidth-search-depth values of the predictive control, comma-separated (1…100,000)",
    default: "1,10,100",
    placeholder: "D,D,…",
  },
  "host-rates": {
    type: "string",
    help: "the range of the hosts' own rates (each host's drawn from its name, evenly on a log scale)",
    default: "50KB/s-1MB/s",
    placeholder: "MIN-MAX",
  },
  "pages-per-host": {
    type: "integer",
    help: "the agent's --max-pages-per-host: no slow host's own pace makes a long tail of the crawl",
    default: 30,
    min: 1,
  },
  ...LAB_CRAWL_FLAGS,
} as const satisfies FlagSpecs;

/** A second of a crawl: the bytes moved in it (each download spread over its duration). */
interface Bin {
  readonly second: number;
  readonly bytesPerSecond: number;
}

/** One crawl: a control. */
interface Point {
  /** `none`, `stop-and-go`, or `predictive, depth D`. */
  readonly control: string;
  readonly depth: number | undefined;
  readonly pages: number;
  readonly seconds: number;
  /** Mean bandwidth over the steady part of the crawl (from 10% to 70% of its bytes; all of a short one). */
  readonly mean: number;
  /** Standard deviation of the steady part's 1 s bins, over their mean. */
  readonly variation: number;
  /** The most bytes any 1 s window (sliding by 50 ms) moved over the bound's. */
  readonly worstExcess: number;
  /** The largest page. */
  readonly largestPage: number;
  readonly bins: readonly Bin[];
}

/** `ubicrawl experiment bandwidth`. */
export const bandwidthExperiment: Experiment<typeof BANDWIDTH_FLAGS> = {
  name: "bandwidth",
  summary:
    "bandwidth over time against --max-bandwidth: predictive vs stop-and-go vs none (Diligenti et al.)",
  description: `Diligenti et al.'s bandwidth-bounded crawler: one agent crawls a test web whose hosts each send at
their own rate (--host-rates), first with no bound, then under --bound with the naive stop-and-go control
(every download starts while the last second's bytes are under the bound, none while over), then with
the predictive control (a download starts when the servers' forecast rates in flight fit under the
bound, paced by bytes) at each search depth of --depths (waiting downloads looked at for one that fits).
Every crawl stops at --pages-per-host pages a host. From the crawl log, each download's bytes spread
over its duration: the bandwidth in 1 s bins, its mean and variation over the steady part of the crawl
(from the second 10% of its bytes were in to the one 70% were: before, rates are being learnt; after,
fewer hosts are left than the bound needs), and the most any 1 s window went over the bound.`,
  flags: BANDWIDTH_FLAGS,
  async run(flags, context) {
    const bound = parseByteRate(flags.bound, "--bound", MIN_MAX_BANDWIDTH);
    const depths = integerList("depths", flags.depths, 1, 100_000);
    const hostRates = rateRange(flags["host-rates"]);
    const crawls = await LabCrawls.open(flags, "bandwidth", { hostBytesPerSecond: hostRates });
    const perHost: AgentFlagValues = { "max-pages-per-host": flags["pages-per-host"] };
    const controls: { name: string; depth?: number; flags: AgentFlagValues }[] = [
      { name: "none", flags: perHost },
      {
        name: "stop-and-go",
        flags: { ...perHost, "max-bandwidth": flags.bound, "bandwidth-control": "stop-and-go" },
      },
      ...depths.map((depth) => ({
        name: `predictive, depth ${depth}`,
        depth,
        flags: { ...perHost, "max-bandwidth": flags.bound, "bandwidth-search-depth": depth },
      })),
    ];
    const points: Point[] = [];
    try {
      for (const [i, control] of controls.entries()) {
        const crawl = await crawls.crawl(`control-${i}`, 1, control.flags);
        const agent = crawl.run.agents[0];
        if (!agent) throw new UbiError(ErrorCode.ExperimentFailed, "the crawl had no agent");
        const point = measure(control.name, control.depth, await downloadsOf(agent.dir), bound);
        points.push(point);
        context.progress(
          `bandwidth: ${control.name}: mean ${(point.mean / 1024).toFixed(0)} KB/s, variation ${point.variation.toFixed(2)}, ` +
            `worst second +${(point.worstExcess / 1024).toFixed(0)} KB, ${point.seconds.toFixed(1)} s`,
        );
      }
    } finally {
      await crawls.close();
    }
    return report(points, bound, {
      bound: flags.bound,
      "host rates": flags["host-rates"],
      ...crawls.description,
    });
  },
};

function rateRange(text: string): { min: number; max: number } {
  const [min, max] = text.split("-").map((part) => parseByteRate(part, "--host-rates"));
  if (min === undefined || max === undefined || max < min) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `--host-rates must be MIN-MAX with MIN ≤ MAX, such as 20KB/s-400KB/s, got "${text}"`,
    );
  }
  return { min: Math.round(min), max: Math.round(max) };
}

interface Download {
  readonly startMs: number;
  readonly endMs: number;
  readonly bytes: number;
}

/** The downloads of an agent's crawl log: fetches that got an answer, with their bytes and duration. */
async function downloadsOf(dir: string): Promise<Download[]> {
  return (await readFetches(dir)).map((f) => ({
    startMs: f.atMs,
    endMs: f.atMs + Math.max(1, f.durationMs),
    bytes: f.bytes,
  }));
}

function bytesWithin(downloads: readonly Download[], from: number, to: number): number {
  let bytes = 0;
  for (const d of downloads) {
    const overlap = Math.min(to, d.endMs) - Math.max(from, d.startMs);
    if (overlap > 0) bytes += (d.bytes * overlap) / (d.endMs - d.startMs);
  }
  return bytes;
}

function measure(
  control: string,
  depth: number | undefined,
  downloads: readonly Download[],
  bound: number,
): Point {
  const start = Math.min(...downloads.map((d) => d.startMs));
  const end = Math.max(...downloads.map((d) => d.endMs));
  const bins: Bin[] = [];
  for (let from = start, second = 0; from < end; from += 1000, second++) {
    bins.push({ second, bytesPerSecond: bytesWithin(downloads, from, from + 1000) });
  }
  // The steady part: from the second the first 10% of the bytes were in to the one 70% were.
  const total = bins.reduce((sum, b) => sum + b.bytesPerSecond, 0);
  let sum = 0;
  let first = bins.length;
  let last = -1;
  for (const bin of bins) {
    sum += bin.bytesPerSecond;
    if (sum >= 0.1 * total && first === bins.length) first = bin.second + 1;
    if (sum <= 0.7 * total) last = bin.second;
  }
  // A crawl of a second or two has no such part: then every second counts.
  const within = bins.filter((b) => b.second >= first && b.second <= last);
  const steady = within.length > 0 ? within : bins;
  const mean = steady.reduce((sum, b) => sum + b.bytesPerSecond, 0) / Math.max(1, steady.length);
  const variance =
    steady.reduce((sum, b) => sum + (b.bytesPerSecond - mean) ** 2, 0) / Math.max(1, steady.length);
  let worstExcess = Number.NEGATIVE_INFINITY;
  for (let from = start; from + 1000 <= end; from += 50) {
    worstExcess = Math.max(worstExcess, bytesWithin(downloads, from, from + 1000) - bound);
  }
  return {
    control,
    depth,
    pages: downloads.length,
    seconds: (end - start) / 1000,
    mean,
    variation: mean > 0 ? Math.sqrt(variance) / mean : 0,
    worstExcess,
    largestPage: Math.max(...downloads.map((d) => d.bytes)),
    bins,
  };
}

function report(
  points: readonly Point[],
  bound: number,
  parameters: Record<string, string | number>,
): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "control",
      "search_depth",
      "mean_kb_s",
      "mean_over_bound",
      "variation",
      "worst_second_excess_kb",
      "largest_page_kb",
      "pages",
      "seconds",
    ],
    rows: points.map((p) => [
      p.control,
      p.depth ?? "",
      round(p.mean / 1024, 1),
      round(p.mean / bound, 3),
      round(p.variation, 3),
      round(Math.max(0, p.worstExcess) / 1024, 1),
      round(p.largestPage / 1024, 1),
      p.pages,
      round(p.seconds, 1),
    ]),
  };
  const series: Table = {
    name: "bandwidth-over-time",
    columns: ["control", "second", "kb_s"],
    rows: points.flatMap((p) => p.bins.map((b) => [p.control, b.second, round(b.bytesPerSecond / 1024, 1)])),
  };
  const plots: Plot[] = [
    {
      name: "bandwidth-over-time",
      title: "Bandwidth of the agent's downloads, 1 s bins, by control (dashed: the bound)",
      spec: {
        width: 480,
        height: 260,
        layer: [
          {
            data: { values: series.rows.map(([control, second, kb]) => ({ control, second, kb })) },
            mark: { type: "line" },
            encoding: {
              x: { field: "second", type: "quantitative", title: "seconds into the crawl" },
              y: { field: "kb", type: "quantitative", title: "KB/s" },
              color: { field: "control", type: "nominal", title: "control" },
            },
          },
          {
            data: { values: [{ kb: round(bound / 1024, 1) }] },
            mark: { type: "rule", strokeDash: [4, 4] },
            encoding: { y: { field: "kb", type: "quantitative" } },
          },
        ],
      },
    },
  ];
  return {
    title: "The bandwidth-bounded crawler (Diligenti et al.)",
    method: bandwidthExperiment.description,
    parameters: { ...parameters, "bound, bytes/s": Math.round(bound) },
    tables: [summary, series],
    plots,
    checks: checks(points, bound),
    sections: [{ heading: "Reading the figures", body: READING }],
  };
}

/** What the figures mean here. */
const READING = `- **No bound**: the agent takes what the servers give, many times the bound.
- **Stop-and-go** measures the last second and starts every waiting download while it is under the
  bound: the downloads come in waves, over the bound at each one, and its mean is over the bound too.
- **Predictive**: a download starts when the forecast shares of the downloads in flight leave room for
  its own, paced so that the bytes started never run ahead of the bound: the bandwidth stays flat just
  under the bound (the pacing's timers and the forecasts' errors cost a few percent), and no second goes
  over it by a page. The search depth matters when downloads are long and servers' rates differ (a
  slow download fits where a fast one would not); a page of tens of kilobytes takes a small share of
  the link whatever its server, so here the pacing decides and the depths come out alike.`;

function checks(points: readonly Point[], bound: number): Check[] {
  const result: Check[] = [];
  const none = points.find((p) => p.control === "none");
  const stopAndGo = points.find((p) => p.control === "stop-and-go");
  const predictive = points.filter((p) => p.depth !== undefined);
  if (none) {
    result.push({
      claim: "Unbounded, the crawl goes over the bound (the bound binds on this web)",
      holds: none.mean > bound,
      detail: `mean ${(none.mean / 1024).toFixed(0)} KB/s, bound ${(bound / 1024).toFixed(0)} KB/s`,
    });
  }
  for (const p of predictive) {
    result.push({
      claim: `Predictive control, depth ${p.depth}: mean bandwidth within 10% of the bound (Diligenti et al.)`,
      holds: Math.abs(p.mean / bound - 1) <= 0.1,
      detail: `mean ${(p.mean / 1024).toFixed(0)} KB/s = ${(p.mean / bound).toFixed(3)} × the bound`,
    });
    result.push({
      claim: `Predictive control, depth ${p.depth}: no second over the bound by more than one page`,
      holds: p.worstExcess <= p.largestPage,
      detail: `worst second +${(Math.max(0, p.worstExcess) / 1024).toFixed(1)} KB; largest page ${(p.largestPage / 1024).toFixed(1)} KB`,
    });
  }
  const reference = predictive.find((p) => p.depth === 10) ?? predictive[0];
  if (stopAndGo && reference) {
    result.push({
      claim: "The predictive control oscillates less than stop-and-go (Diligenti et al.)",
      holds: reference.variation < stopAndGo.variation,
      detail: `variation of the 1 s bins: ${reference.variation.toFixed(3)} predictive (depth ${reference.depth}), ${stopAndGo.variation.toFixed(3)} stop-and-go`,
    });
  }
  return result;
}
