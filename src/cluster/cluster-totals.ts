import type { AgentStats } from "../transport/index.js";
import { type ClusterBusyAddress, clusterBusiestIps } from "./busy-addresses.js";
import { BUSIEST_IPS_REPORTED } from "./partition-stats.js";

/** Cluster-wide sums (the JSON form's \`totals\`), and how many agents are in each state. */
export interface ClusterTotals {
  readonly agents: number;
  readonly alive: number;
  readonly suspected: number;
  readonly left: number;
  readonly pagesFetched: number;
  readonly pagesFetchedThisRun: number;
  readonly bytesFetched: number;
  readonly queuedUrls: number;
  readonly hostsOwned: number;
  readonly pagesPerSecond: number;
  readonly pagesRecovered: number;
  readonly errors: Record<string, number>;
  /** The cluster's busiest IP addresses, from the live agents' own lists (see busy-addresses.ts). */
  readonly busiestIps: readonly ClusterBusyAddress[];
}

/** Sums the agents' figures (a departed agent's pages count: they were fetched). */
export function clusterTotals(agents: readonly AgentStats[]): ClusterTotals {
  const sum = (pick: (stats: AgentStats) => number) =>
    agents.reduce((total, stats) => total + pick(stats), 0);
  const summed = new Map<string, number>();
  for (const stats of agents) {
    for (const [name, count] of Object.entries(stats.errors))
      summed.set(name, (summed.get(name) ?? 0) + count);
  }
  // By name, so the same figures print the same whichever agent gathered them (its order of arrival).
  const errors = Object.fromEntries([...summed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    agents: agents.length,
    alive: agents.filter((stats) => stats.status === "ALIVE").length,
    suspected: agents.filter((stats) => stats.status === "SUSPECTED").length,
    left: agents.filter((stats) => stats.status === "LEFT").length,
    pagesFetched: sum((stats) => stats.pagesFetched),
    // This run: the live agents' runs (a departed agent's last one is known only to some).
    pagesFetchedThisRun: sum((stats) => (stats.status === "ALIVE" ? stats.pagesFetchedThisRun : 0)),
    bytesFetched: sum((stats) => stats.bytesFetched),
    // A departed agent's queue went to the others (or died with it): only live queues count.
    queuedUrls: sum((stats) => (stats.status === "ALIVE" ? stats.queuedUrls : 0)),
    hostsOwned: sum((stats) => (stats.status === "ALIVE" ? stats.hostsOwned : 0)),
    pagesPerSecond: sum((stats) => stats.pagesPerSecond),
    pagesRecovered: sum((stats) => stats.pagesRecovered),
    errors,
    busiestIps: clusterBusiestIps(agents, BUSIEST_IPS_REPORTED),
  };
}
