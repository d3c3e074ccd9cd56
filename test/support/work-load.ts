import type { WorkLoad } from "../../src/cluster/termination.js";

/** An idle load with some finished work (so the crawl counts as started), with `overrides` applied. */
export function idle(overrides: Partial<WorkLoad> = {}): WorkLoad {
  return {
    idle: true,
    urlBatchesSent: 3,
    urlBatchesReceived: 3,
    pagesFetched: 10,
    queuedUrls: 0,
    spareHostSlots: 0,
    revisitPages: 0,
    revisitBudget: 0,
    ...overrides,
  };
}
