import type { PageHistory } from "../../src/recrawl/index.js";

/**
 * The history of a page visited `visits` times `intervalMs` apart, `changes` of the revisits finding it
 * changed, its last visit at `over.lastAtMs` (0 by default); `over` sets any other field.
 */
export function regularHistory(
  visits: number,
  changes: number,
  intervalMs: number,
  over: Partial<PageHistory> = {},
): PageHistory {
  return {
    url: "http://a.test/",
    depth: 0,
    visits,
    changes,
    observedMs: (visits - 1) * intervalMs,
    lastAtMs: 0,
    ...over,
  };
}
