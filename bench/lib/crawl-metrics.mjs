// What a crawl did, read from the agents' crawl logs (one JSON line a fetch) and their `stopped` log
// records, measured against the test web's ground truth (coverage and overlap as in Cho & Garcia-Molina).
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { parseLogRecord } from "../../dist/logging/index.js";

/**
 * The ground truth file of `ubicrawl testweb --truth`: one URL a line.
 * @param {string} path
 * @returns {Promise<Set<string>>}
 */
export async function readTruth(path) {
  const text = await readFile(path, "utf8");
  return new Set(text.split("\n").filter((line) => line !== ""));
}

/**
 * Reads crawl logs and measures the union of their fetches against `truth`. A fetch counts when it
 * reached a server (status > 0). Overlap = (fetches − unique URLs) / unique URLs; coverage = truth URLs
 * fetched / truth size.
 * @param {readonly string[]} paths crawl.log files (a missing file counts as empty)
 * @param {ReadonlySet<string>} truth
 * @returns {Promise<CrawlMetrics>}
 */
export async function measureCrawlLogs(paths, truth) {
  const fetchedUrls = new Set();
  const loggedUrls = new Set();
  let entries = 0;
  let fetches = 0;
  let failures = 0;
  let bytes = 0;
  let firstMs = Number.POSITIVE_INFINITY;
  let lastMs = Number.NEGATIVE_INFINITY;
  const pageTimesMs = [];
  for (const path of paths) {
    for await (const entry of readLines(path)) {
      entries++;
      const atMs = Date.parse(entry.ts);
      if (atMs < firstMs) firstMs = atMs;
      if (atMs > lastMs) lastMs = atMs;
      loggedUrls.add(entry.url);
      if (!(entry.status > 0)) {
        failures++;
        continue;
      }
      fetches++;
      bytes += entry.bytes ?? 0;
      fetchedUrls.add(entry.url);
      pageTimesMs.push(atMs);
    }
  }
  pageTimesMs.sort((a, b) => a - b);
  let covered = 0;
  for (const url of truth) if (fetchedUrls.has(url)) covered++;
  const unique = fetchedUrls.size;
  return {
    entries,
    fetches,
    failures,
    unique,
    loggedUrls: loggedUrls.size,
    bytes,
    covered,
    truthSize: truth.size,
    extra: unique - covered,
    coverage: truth.size === 0 ? 0 : covered / truth.size,
    overlap: unique === 0 ? 0 : (fetches - unique) / unique,
    spanSeconds: entries === 0 ? 0 : (lastMs - firstMs) / 1000,
    lastEntryEpochMs: entries === 0 ? Number.NaN : lastMs,
    pageTimesMs,
  };
}

/**
 * @typedef {object} CrawlMetrics
 * @property {number} entries crawl log lines
 * @property {number} fetches lines with status > 0 (requests answered by a server)
 * @property {number} failures lines with status 0 (DNS failure, timeout, refused…)
 * @property {number} unique distinct URLs fetched
 * @property {number} loggedUrls distinct URLs logged, failures included
 * @property {number} bytes body bytes of the fetches
 * @property {number} covered truth URLs fetched
 * @property {number} truthSize URLs in the truth
 * @property {number} extra URLs fetched that are not in the truth
 * @property {number} coverage covered / truthSize
 * @property {number} overlap (fetches − unique) / unique
 * @property {number} spanSeconds time from the first to the last crawl log line
 * @property {number} lastEntryEpochMs time of the last crawl log line (NaN when none)
 * @property {number[]} pageTimesMs time of each fetch counted in `fetches` (epoch ms), ascending
 */

/**
 * Each host's requests in the union of crawl logs: the start times (epoch ms, the lines' `ts`) of the
 * requests a server answered (status > 0), ascending, by host name; and the hosts met whose every
 * request failed (status 0: no address in the hosts file, refused…), sorted.
 * @param {readonly string[]} paths crawl.log files (a missing file counts as empty)
 * @returns {Promise<{ answered: Map<string, number[]>, failedHosts: string[] }>}
 */
export async function requestTimesByHost(paths) {
  const answered = new Map();
  const met = new Set();
  for (const path of paths) {
    for await (const entry of readLines(path)) {
      const host = new URL(entry.url).hostname;
      met.add(host);
      if (!(entry.status > 0)) continue;
      const times = answered.get(host) ?? [];
      if (times.length === 0) answered.set(host, times);
      times.push(Date.parse(entry.ts));
    }
  }
  for (const times of answered.values()) times.sort((a, b) => a - b);
  return { answered, failedHosts: [...met].filter((host) => !answered.has(host)).sort() };
}

async function* readLines(path) {
  const input = createReadStream(path);
  const opened = new Promise((resolve, reject) => {
    input.once("open", resolve);
    input.once("error", reject);
  });
  try {
    await opened;
  } catch (error) {
    if (error.code === "ENOENT") return;
    throw error;
  }
  try {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line !== "") yield JSON.parse(line);
    }
  } finally {
    input.destroy();
  }
}

/** Drop reasons of URLs that were queued (so in the seen set) and then not fetched. */
const QUEUED_DROPS = ["robots", "page-limit", "abandoned", "blacklisted", "fetched-before"];

/**
 * What an agent's `stopped` log record says (its last record, written with `--log-format json`): run
 * time, this run's pages, URLs dropped by reason, the seen set, and for a cluster agent the URL exchange,
 * its links to other agents' hosts and the digest and IP limit messages it sent. Fields the record lacks
 * stay undefined, but the message counts, which an agent leaves out when they are 0.
 * @param {readonly string[]} lines the agent's stderr lines
 * @returns {AgentSummary}
 */
export function parseAgentSummary(lines) {
  const summary = { seconds: undefined, pagesFetched: undefined, dropped: {}, seenUrls: undefined };
  summary.seenSetBytes = undefined;
  summary.exchange = undefined;
  summary.linksToOtherAgents = undefined;
  summary.digestMessages = 0;
  summary.ipMessages = 0;
  const stopped = lines.map(parseLogRecord).findLast((record) => record?.event === "stopped");
  if (stopped === undefined) return summary;
  summary.seconds = stopped.seconds;
  summary.pagesFetched = stopped.pagesFetchedThisRun;
  summary.dropped = { ...stopped.dropped };
  summary.seenUrls = stopped.seenUrls;
  summary.seenSetBytes = stopped.seenSetBytes;
  summary.exchange = stopped.exchange;
  summary.linksToOtherAgents = stopped.linksToOtherAgents;
  summary.digestMessages = stopped.digestMessages ?? 0;
  summary.ipMessages = stopped.ipMessages ?? 0;
  return summary;
}

/**
 * @typedef {object} AgentSummary
 * @property {number | undefined} seconds the agent's own run time
 * @property {number | undefined} pagesFetched
 * @property {Record<string, number>} dropped URLs not fetched, by reason
 * @property {number | undefined} seenUrls size of the seen set, when the agent prints it
 * @property {number | undefined} seenSetBytes memory of the seen set, when the agent prints it
 * @property {{urlsSent: number, batchesSent: number, urlsReceived: number, batchesReceived: number} | undefined} exchange
 *   the URL exchange with peers, when a cluster agent prints it
 * @property {number | undefined} linksToOtherAgents links found to other agents' hosts (each URL
 *   among them is sent once), when a cluster agent prints it
 * @property {number} digestMessages digest questions and settlements sent to other agents (cluster dedup)
 * @property {number} ipMessages messages sent to IP authorities (cluster-wide per-IP limit)
 */

/**
 * The number of URLs in an agent's seen set, estimated when it does not print it: every URL logged in
 * the crawl log was queued, and so were those dropped after queueing (robots, page limit, abandoned…).
 * @param {number} loggedUrls distinct URLs in the agent's crawl log (failures included)
 * @param {Record<string, number>} dropped the summary's drop counts
 */
export function estimateSeenUrls(loggedUrls, dropped) {
  let queuedThenDropped = 0;
  for (const reason of QUEUED_DROPS) queuedThenDropped += dropped[reason] ?? 0;
  return loggedUrls + queuedThenDropped;
}
