/**
 * Freshness and age of a crawler's copy of changing pages, measured against the ground truth (Cho and
 * Garcia-Molina, "Synchronizing a database to improve freshness"): a page's copy is fresh at time t
 * when the page has not changed since the copy was fetched, and its age at t is how long ago it first
 * changed after that fetch (0 while fresh). A page not fetched yet has no copy: stale, its age counted
 * from the window's start. Averages are over pages and over time, integrated exactly between events.
 */

/** One page: when the crawler fetched it and when it changed, each sorted, ms since the epoch. */
export interface PageTimeline {
  readonly fetches: readonly number[];
  readonly changes: readonly number[];
}

/** A collection's time-averaged freshness (0–1) and age (ms) over a window. */
export interface FreshnessFigures {
  readonly freshness: number;
  readonly ageMs: number;
}

/**
 * The time-averaged freshness and age of `pages` over [`fromMs`, `toMs`): each page's fresh time and
 * age integral over the window, averaged over the pages. Empty pages or window: freshness 1, age 0.
 */
export function averageFreshness(
  pages: readonly PageTimeline[],
  fromMs: number,
  toMs: number,
): FreshnessFigures {
  const span = toMs - fromMs;
  if (pages.length === 0 || !(span > 0)) return { freshness: 1, ageMs: 0 };
  let fresh = 0;
  let age = 0;
  for (const page of pages) {
    const figures = integrate(page, fromMs, toMs);
    fresh += figures.freshMs;
    age += figures.ageMsMs;
  }
  return { freshness: fresh / span / pages.length, ageMs: age / span / pages.length };
}

/**
 * Freshness and age of `pages` at each of `steps` equal windows of [`fromMs`, `toMs`) (each one's
 * average), for a plot over time: the window's start, in ms from `fromMs`, and its figures.
 */
export function freshnessOverTime(
  pages: readonly PageTimeline[],
  fromMs: number,
  toMs: number,
  steps: number,
): (FreshnessFigures & { readonly atMs: number })[] {
  const width = (toMs - fromMs) / steps;
  return Array.from({ length: steps }, (_, i) => ({
    atMs: i * width,
    ...averageFreshness(pages, fromMs + i * width, fromMs + (i + 1) * width),
  }));
}

/** A page's fresh time (ms) and the integral of its age (ms × ms) over [`fromMs`, `toMs`). */
function integrate(page: PageTimeline, fromMs: number, toMs: number): { freshMs: number; ageMsMs: number } {
  let freshMs = 0;
  let ageMsMs = 0;
  // The stretches between fetches: before the first, the page has no copy (stale since the window's start).
  const firstFetch = page.fetches[0] ?? Number.POSITIVE_INFINITY;
  ageMsMs += staleIntegral(fromMs, fromMs, Math.min(firstFetch, toMs));
  let c = 0;
  for (let i = 0; i < page.fetches.length; i++) {
    const fetchedAt = page.fetches[i] as number;
    const until = Math.min(page.fetches[i + 1] ?? Number.POSITIVE_INFINITY, toMs);
    if (until <= fromMs || fetchedAt >= toMs) continue;
    // The first change after this fetch.
    while (c < page.changes.length && (page.changes[c] as number) <= fetchedAt) c++;
    const changedAt = Math.min(page.changes[c] ?? Number.POSITIVE_INFINITY, until);
    freshMs += overlap(fetchedAt, changedAt, fromMs, toMs);
    ageMsMs += staleIntegral(changedAt, Math.max(changedAt, fromMs), until);
  }
  return { freshMs, ageMsMs };
}

/** Length of [a, b) ∩ [from, to). */
function overlap(a: number, b: number, from: number, to: number): number {
  return Math.max(0, Math.min(b, to) - Math.max(a, from));
}

/** ∫ (t − staleSince) dt over [from, to): the age of a copy stale since `staleSince` (≤ from). */
function staleIntegral(staleSince: number, from: number, to: number): number {
  if (!(to > from)) return 0;
  return ((to - staleSince) ** 2 - (from - staleSince) ** 2) / 2;
}
