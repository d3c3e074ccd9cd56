/**
 * A sitemap's `<changefreq>` (sitemaps.org): how often its owner says a page changes. A hint, not the
 * truth: the sitemap parser reads it, queued URLs, the crawl log and hand-overs carry it, and
 * `--recrawl adaptive` takes it for a page's interval only until the page's own visits tell.
 */

/** sitemaps.org's values, from the most frequent change to none. */
export const CHANGE_FREQUENCIES = [
  "always",
  "hourly",
  "daily",
  "weekly",
  "monthly",
  "yearly",
  "never",
] as const;
/** One of {@link CHANGE_FREQUENCIES}. */
export type ChangeFrequency = (typeof CHANGE_FREQUENCIES)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The time between changes each value says, ms: `always` (a page that changes at every access) 0,
 * `never` (an archived page) infinite; a month is 30 days, a year 365.
 */
const PERIOD_MS: Readonly<Record<ChangeFrequency, number>> = {
  always: 0,
  hourly: HOUR_MS,
  daily: DAY_MS,
  weekly: 7 * DAY_MS,
  monthly: 30 * DAY_MS,
  yearly: 365 * DAY_MS,
  never: Number.POSITIVE_INFINITY,
};

/** The value `text` names (blanks around it and letter case aside), or undefined when it names none. */
export function readChangeFrequency(text: string): ChangeFrequency | undefined {
  const value = text.trim().toLowerCase();
  return (CHANGE_FREQUENCIES as readonly string[]).includes(value) ? (value as ChangeFrequency) : undefined;
}

/** The time between changes `frequency` says, ms (0 for `always`, infinite for `never`). */
export function changePeriodMs(frequency: ChangeFrequency): number {
  return PERIOD_MS[frequency];
}
