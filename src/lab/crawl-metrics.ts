import { AGENT_DEFAULTS } from "../agent/agent-options.js";
import type { Hasher64 } from "../hashing/index.js";
import { measureAgentDirs, readFetches } from "../report/index.js";
import { computeTruth, type RunningTestWeb, type Truth, type TruthLimits } from "../testweb/index.js";
import type { LocalClusterRun } from "./local-cluster.js";

/**
 * Cho and Garcia-Molina's measures of a parallel crawl, taken from a laboratory crawl's agents (their
 * crawl logs and `stopped` records) against the test web's ground truth; and the seeds such a crawl
 * starts from.
 */

/** The share of the truth's pages, by in-degree, the quality measure looks for. */
export const TOP_SHARE = 0.01;
/** The share of the crawl (by fetches) within which they should come. */
export const EARLY_SHARE = 0.1;

/** The measures of one crawl. */
export interface CrawlMetrics {
  /** URLs the crawl should fetch: the truth from its seeds (U). */
  readonly truthSize: number;
  /** Fetches (N). */
  readonly fetches: number;
  /** Distinct URLs fetched (I). */
  readonly distinct: number;
  /** Fetches that failed for good (timeouts, refused connections…): pages lost to the run, not the mode. */
  readonly failures: number;
  /** Truth URLs fetched / U. */
  readonly coverage: number;
  /** (N − I) / I. */
  readonly overlap: number;
  /** URLs sent to other agents. */
  readonly urlsSent: number;
  /** Messages (URL batches) sent to other agents. */
  readonly batchesSent: number;
  /** `urlsSent` / N: the communication overhead. */
  readonly overhead: number;
  /** Share of the truth's top pages by in-degree fetched within the first tenth of the fetches. */
  readonly quality: number;
  /** Links to other agents' hosts dropped by the firewall mode. */
  readonly dropped: number;
  /** URLs dropped before a fetch by reason, over all agents (their `stopped` records' `dropped`). */
  readonly drops: Readonly<Record<string, number>>;
  /** From the seeds given to the crawl's end. */
  readonly seconds: number;
}

/** The crawler limits the truth assumes: the agents' defaults. */
export function truthLimits(): TruthLimits {
  return {
    maxDepth: AGENT_DEFAULTS.maxDepth,
    maxPagesPerHost: AGENT_DEFAULTS.maxPagesPerHost,
    userAgent: AGENT_DEFAULTS.userAgent,
  };
}

/**
 * The seeds of a laboratory crawl: for each agent, `perAgent` home pages of its own normal hosts
 * (those a crawl of the web reaches), in an order fixed by the agent's id and the host's name.
 */
export function ownHomePages(
  web: Pick<RunningTestWeb, "model" | "port">,
  perAgent: number,
  hasher: Hasher64,
): (agentId: string, ownerOf: (url: string) => string) => string[] {
  const homes = computeTruth(web.model, web.port, truthLimits()).urls.filter((url) => {
    const parsed = new URL(url);
    const index = web.model.hostIndexByName.get(parsed.hostname);
    return parsed.pathname === "/" && index !== undefined && web.model.hosts[index]?.kind === "normal";
  });
  return (id, ownerOf) =>
    homes
      .filter((url) => ownerOf(url) === id)
      .map((url) => ({ url, rank: hasher.hashString(`${id} ${new URL(url).hostname}`) }))
      .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
      .slice(0, perAgent)
      .map(({ url }) => url);
}

/** Measures a finished crawl of `web`: U is what its seeds reach under the crawler's rules. */
export async function measureCrawl(web: RunningTestWeb, run: LocalClusterRun): Promise<CrawlMetrics> {
  const seeds = run.agents.flatMap((agent) => agent.seeds);
  const truth = computeTruth(web.model, web.port, truthLimits(), seeds, { inDegree: true });
  const dirs = run.agents.map((agent) => agent.dir);
  const report = await measureAgentDirs(dirs, new Set(truth.urls));
  let urlsSent = 0;
  let batchesSent = 0;
  const drops: Record<string, number> = {};
  // A killed agent's counters died with it: the figures are the others'.
  for (const agent of run.agents) {
    const exchange = agent.stopped?.exchange as { urlsSent?: number; batchesSent?: number } | undefined;
    urlsSent += exchange?.urlsSent ?? 0;
    batchesSent += exchange?.batchesSent ?? 0;
    for (const [reason, count] of Object.entries((agent.stopped?.dropped ?? {}) as Record<string, number>)) {
      drops[reason] = (drops[reason] ?? 0) + count;
    }
  }
  const fetches = (await Promise.all(dirs.map(readFetches))).flat().sort((a, b) => a.atMs - b.atMs);
  return {
    truthSize: truth.urls.length,
    fetches: report.fetches,
    distinct: report.distinctUrls,
    failures: report.failures,
    coverage: report.coverage?.fraction ?? 0,
    overlap: report.overlap,
    urlsSent,
    batchesSent,
    overhead: report.fetches === 0 ? 0 : urlsSent / report.fetches,
    quality: quality(truth, fetches),
    dropped: drops.firewall ?? 0,
    drops,
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

/** `value` rounded to `digits` decimals, for a table. */
export function round(value: number, digits = 4): number {
  return Number(value.toFixed(digits));
}
