// The end of a crawl: how long its last pages take, and how fast its last host is crawled once it is
// crawled alone. A polite crawl's end is set by its biggest hosts (one request at a time each): while
// many hosts are active the biggest one gets a share of the agent's turns; once it is the only one
// left, the gap between its requests is the agent's own per-page latency (fetch, parse, store, commit).
import { median } from "./report.mjs";

/** Share of the pages fetched when the tail begins. */
export const TAIL_FROM_SHARE = 0.9;

/**
 * The crawl's tail: from the moment `share` of its pages had been fetched (the start time of the page
 * that makes it `share`: page ⌈share × n⌉ in time order) to its last page, in seconds and as a share of
 * the crawl's wall time (`startedAtMs` to `endedAtMs`). NaN figures when there are no pages.
 * @param {readonly number[]} pageTimesMs epoch ms of each page fetched, ascending
 * @param {number} startedAtMs epoch ms the crawl started
 * @param {number} endedAtMs epoch ms it ended
 * @param {number} [share]
 * @returns {import("./crawl-tail.d.mts").CrawlTail}
 */
export function crawlTail(pageTimesMs, startedAtMs, endedAtMs, share = TAIL_FROM_SHARE) {
  const pages = pageTimesMs.length;
  if (pages === 0) return { fromSeconds: Number.NaN, seconds: Number.NaN, shareOfCrawl: Number.NaN };
  const fromMs = /** @type {number} */ (pageTimesMs[Math.max(0, Math.ceil(pages * share) - 1)]);
  const lastMs = /** @type {number} */ (pageTimesMs[pages - 1]);
  const wallMs = endedAtMs - startedAtMs;
  return {
    fromSeconds: (fromMs - startedAtMs) / 1000,
    seconds: (lastMs - fromMs) / 1000,
    shareOfCrawl: wallMs > 0 ? (lastMs - fromMs) / wallMs : Number.NaN,
  };
}

/**
 * `host`'s requests while it was crawled alone: those after the last request to any other host (all
 * request times from the crawl logs, answered ones only). The gaps are between successive such
 * requests' start times (start to start, so a gap holds the request itself and whatever the agent did
 * before the next one), at the crawl log's millisecond resolution; `seconds` runs from the last
 * request to another host to `host`'s last one (0 when another host had the last request).
 * @param {ReadonlyMap<string, readonly number[]>} timesByHost ascending epoch ms by host name
 * @param {string} host
 * @returns {import("./crawl-tail.d.mts").HostAlone}
 */
export function hostAlone(timesByHost, host) {
  const own = timesByHost.get(host) ?? [];
  let othersLastMs = Number.NEGATIVE_INFINITY;
  for (const [name, times] of timesByHost) {
    if (name !== host && times.length > 0)
      othersLastMs = Math.max(othersLastMs, /** @type {number} */ (times.at(-1)));
  }
  const alone = own.filter((atMs) => atMs > othersLastMs);
  const gaps = alone.slice(1).map((atMs, i) => atMs - /** @type {number} */ (alone[i]));
  const lastMs = own.at(-1);
  return {
    requests: alone.length,
    seconds:
      alone.length === 0 || lastMs === undefined
        ? 0
        : (lastMs - (Number.isFinite(othersLastMs) ? othersLastMs : /** @type {number} */ (alone[0]))) / 1000,
    gaps: gaps.length,
    medianGapMs: median(gaps),
    p90GapMs: nearestRank(gaps, 0.9),
  };
}

/**
 * The host with the most URLs in `urls` (a ground truth), and how many it has; the first such host in
 * name order on a tie.
 * @param {Iterable<string>} urls
 * @returns {{ host: string, urls: number, share: number }} share: of all URLs
 */
export function biggestHost(urls) {
  const counts = new Map();
  let total = 0;
  for (const url of urls) {
    const host = new URL(url).hostname;
    counts.set(host, (counts.get(host) ?? 0) + 1);
    total++;
  }
  let best = { host: "", urls: 0 };
  for (const [host, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (count > best.urls) best = { host, urls: count };
  }
  return { ...best, share: total === 0 ? Number.NaN : best.urls / total };
}

/**
 * The `fraction` percentile of `values` by nearest rank (the ⌈fraction × n⌉-th smallest); NaN when empty.
 * @param {readonly number[]} values
 * @param {number} fraction
 */
export function nearestRank(values, fraction) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return /** @type {number} */ (sorted[Math.max(0, Math.ceil(values.length * fraction) - 1)]);
}
