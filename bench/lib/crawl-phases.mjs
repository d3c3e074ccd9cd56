// A crawl's CPU in three phases: its start (process start-up, V8 compiling the hot code, the first
// hosts' robots.txt and connections), its steady middle, and its tail (few hosts left with work, then
// the stop). The whole-process CPU a page mixes fixed costs with per-page ones; the steady middle is the
// per-page cost alone, and the start says what each extra process pays whatever its share of the web.

/** Share of the pages in the start and in the tail (the steady middle is the rest). */
export const EDGE_SHARE = 0.1;

/**
 * CPU seconds at `atMs`, linearly between the samples around it (the first or last sample outside).
 * @param {readonly (readonly [number, number])[]} series [epoch ms, CPU seconds], in time order
 * @param {number} atMs
 */
export function cpuAt(series, atMs) {
  if (series.length === 0) return 0;
  const first = /** @type {readonly [number, number]} */ (series[0]);
  if (atMs <= first[0]) return first[1];
  for (let i = 1; i < series.length; i++) {
    const [t1, c1] = /** @type {readonly [number, number]} */ (series[i]);
    if (atMs <= t1) {
      const [t0, c0] = /** @type {readonly [number, number]} */ (series[i - 1]);
      return t1 === t0 ? c1 : c0 + ((c1 - c0) * (atMs - t0)) / (t1 - t0);
    }
  }
  return /** @type {readonly [number, number]} */ (series[series.length - 1])[1];
}

/**
 * Splits one crawl into start (spawn to the page at `edge` of all pages), steady middle and tail (the
 * page at 1 − `edge` to the exit). The phases' CPU adds up to `cpuSeconds`, the process's exact total;
 * the CPU at a page's time comes from `series`, sampled while the process ran.
 * @param {{ series: readonly (readonly [number, number])[], pageTimesMs: readonly number[], startedAtMs: number, exitedAtMs: number, cpuSeconds: number, edge?: number }} crawl
 *   `pageTimesMs`: epoch ms of each page fetched, ascending; `startedAtMs`/`exitedAtMs`: epoch ms of the
 *   spawn and the exit
 * @returns {import("./crawl-phases.d.mts").CrawlPhases}
 */
export function crawlPhases({ series, pageTimesMs, startedAtMs, exitedAtMs, cpuSeconds, edge = EDGE_SHARE }) {
  const pages = pageTimesMs.length;
  // As many pages in the start as in the tail.
  const edgePages = Math.floor(pages * edge);
  const steadyFromMs = pages === 0 ? startedAtMs : /** @type {number} */ (pageTimesMs[edgePages]);
  const steadyToMs = pages === 0 ? exitedAtMs : /** @type {number} */ (pageTimesMs[pages - 1 - edgePages]);
  const cpuFrom = Math.min(cpuSeconds, cpuAt(series, steadyFromMs));
  const cpuTo = Math.min(cpuSeconds, Math.max(cpuFrom, cpuAt(series, steadyToMs)));
  /** @returns {import("./crawl-phases.d.mts").CrawlPhase} */
  const phase = (phasePages, fromMs, toMs, cpu) => ({
    pages: phasePages,
    seconds: (toMs - fromMs) / 1000,
    cpuSeconds: cpu,
    pagesPerSecond: toMs > fromMs ? (phasePages * 1000) / (toMs - fromMs) : Number.NaN,
    cpuMsPerPage: phasePages > 0 ? (cpu * 1000) / phasePages : Number.NaN,
  });
  return {
    edge,
    start: phase(edgePages, startedAtMs, steadyFromMs, cpuFrom),
    steady: phase(pages - 2 * edgePages, steadyFromMs, steadyToMs, cpuTo - cpuFrom),
    tail: phase(edgePages, steadyToMs, exitedAtMs, cpuSeconds - cpuTo),
  };
}
