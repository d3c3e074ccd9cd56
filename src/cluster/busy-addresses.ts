import { byActivity, HOST_NAMES_LISTED } from "../agent/index.js";
import type { AgentStats, BusyAddress } from "../transport/index.js";

/** One IP address among the cluster's busiest: the live agents' figures there, together. */
export interface ClusterBusyAddress {
  readonly ip: string;
  /** The agents that list it among their busiest, by id: more than one when its hosts are several agents'. */
  readonly agents: readonly string[];
  /** Their hosts there, summed (each agent counts its own, up to its bound). */
  readonly hosts: number;
  /** True when some agent counted more hosts there than it says. */
  readonly moreHosts: boolean;
  /** A few of the hosts there, the agents' in the order of their ids. */
  readonly hostNames: readonly string[];
  /** The keeper of its politeness: as the keeper itself says when it lists the address, else as most of the agents do. */
  readonly keeper: string;
  /** Summed over the agents. */
  readonly inFlight: number;
  readonly waiting: number;
  readonly startedRecently: number;
  readonly started: number;
  readonly refusalsRecently: number;
  /** The agents' mean recent wait, weighted by their recent starts, ms. */
  readonly meanWaitMsRecently: number;
  /** The longest of the agents' (the keeper knows the whole line; the others their own asks in it). */
  readonly maxWaitMsRecently: number;
  readonly line: number;
  readonly blockedForMs: number;
  readonly delayMs: number;
}

/**
 * The `limit` busiest addresses of the cluster, from the live agents' own busiest lists (an agent that
 * could not be asked is busy nowhere now), ranked as each agent ranks its own (see ip-activity.ts).
 * An address busy at an agent but not among its listed ones is missed: each list is bounded.
 */
export function clusterBusiestIps(agents: readonly AgentStats[], limit: number): ClusterBusyAddress[] {
  const byIp = new Map<string, { id: string; entry: BusyAddress }[]>();
  for (const stats of agents) {
    if (stats.status !== "ALIVE") continue;
    for (const entry of stats.busiestIps) {
      const reports = byIp.get(entry.ip) ?? [];
      reports.push({ id: stats.id, entry });
      byIp.set(entry.ip, reports);
    }
  }
  // By agent id, so the same figures merge the same whichever agent gathered them.
  const ordered = <T extends { id: string }>(reports: T[]) =>
    reports.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return [...byIp]
    .map(([ip, reports]) => merged(ip, ordered(reports)))
    .sort(byActivity)
    .slice(0, limit);
}

function merged(ip: string, reports: readonly { id: string; entry: BusyAddress }[]): ClusterBusyAddress {
  const entries = reports.map((report) => report.entry);
  const sum = (pick: (entry: BusyAddress) => number) =>
    entries.reduce((total, entry) => total + pick(entry), 0);
  const max = (pick: (entry: BusyAddress) => number) => Math.max(...entries.map(pick));
  const startedRecently = sum((entry) => entry.startedRecently);
  return {
    ip,
    agents: reports.map((report) => report.id),
    hosts: sum((entry) => entry.hosts),
    moreHosts: entries.some((entry) => entry.moreHosts),
    hostNames: [...new Set(entries.flatMap((entry) => entry.hostNames))].slice(0, HOST_NAMES_LISTED),
    keeper: keeperOf(reports),
    inFlight: sum((entry) => entry.inFlight),
    waiting: sum((entry) => entry.waiting),
    startedRecently,
    started: sum((entry) => entry.started),
    refusalsRecently: sum((entry) => entry.refusalsRecently),
    meanWaitMsRecently:
      startedRecently === 0
        ? 0
        : Math.round(sum((entry) => entry.meanWaitMsRecently * entry.startedRecently) / startedRecently),
    maxWaitMsRecently: max((entry) => entry.maxWaitMsRecently),
    line: max((entry) => entry.line),
    blockedForMs: max((entry) => entry.blockedForMs),
    delayMs: max((entry) => entry.delayMs),
  };
}

/** The keeper as it says itself, else the one most agents name (views may differ for a moment). */
function keeperOf(reports: readonly { id: string; entry: BusyAddress }[]): string {
  const itself = reports.find((report) => report.id === report.entry.keeper);
  if (itself) return itself.id;
  const votes = new Map<string, number>();
  for (const { entry } of reports) votes.set(entry.keeper, (votes.get(entry.keeper) ?? 0) + 1);
  return [...votes].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))[0]?.[0] ?? "";
}
