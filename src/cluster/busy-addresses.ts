import { byActivity, HOST_NAMES_LISTED } from "../agent/index.js";
import type { AgentStats, BusyAddress } from "../transport/index.js";

/** One IP address among the cluster's busiest: the live agents' figures there, together. */
export interface ClusterBusyAddress {
  readonly ip: string;
  /** The agents that list it among their busiest, by id: more than one when its hosts are several agents'. */
  readonly agents: readonly string[];
  /**
   * Hosts there, at most: the agents' counts summed. An agent counts each host it sent requests to
   * while it remembers the address, so a host several agents sent requests to is counted by each: one
   * handed over from one to another, or every host with `--partition url`.
   */
  readonly hosts: number;
  /** Hosts there, at least: the most one agent counts, or the distinct names listed when more. */
  readonly hostsAtLeast: number;
  /** True when some agent counted more hosts there than it says. */
  readonly moreHosts: boolean;
  /** A few of the hosts there, the agents' in the order of their ids. */
  readonly hostNames: readonly string[];
  /**
   * The agents keeping its politeness: its IP authority alone with `--ip-limit cluster` (as it says
   * itself when it lists the address, else as most of the agents do); with `--ip-limit agent` each
   * agent keeps its own, so every listing agent names itself and all of them are listed.
   */
  readonly keepers: readonly string[];
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
  /**
   * Asks waiting in its line: the keepers' own figures when they list it (a keeper knows its whole
   * line; with `--ip-limit agent` each agent's line is its own, so they are summed), else the agents'
   * own asks held in the keeper's line, summed.
   */
  readonly line: number;
  /** The most any agent knows. */
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
  const sum = (of: readonly BusyAddress[], pick: (entry: BusyAddress) => number) =>
    of.reduce((total, entry) => total + pick(entry), 0);
  const max = (pick: (entry: BusyAddress) => number) => Math.max(...entries.map(pick));
  const startedRecently = sum(entries, (entry) => entry.startedRecently);
  const hostNames = [...new Set(entries.flatMap((entry) => entry.hostNames))];
  const keepers = keepersOf(reports);
  const keeping = reports.filter((report) => keepers.includes(report.id)).map((report) => report.entry);
  return {
    ip,
    agents: reports.map((report) => report.id),
    hosts: sum(entries, (entry) => entry.hosts),
    hostsAtLeast: Math.max(
      hostNames.length,
      max((entry) => entry.hosts),
    ),
    moreHosts: entries.some((entry) => entry.moreHosts),
    hostNames: hostNames.slice(0, HOST_NAMES_LISTED),
    keepers,
    inFlight: sum(entries, (entry) => entry.inFlight),
    waiting: sum(entries, (entry) => entry.waiting),
    startedRecently,
    started: sum(entries, (entry) => entry.started),
    refusalsRecently: sum(entries, (entry) => entry.refusalsRecently),
    meanWaitMsRecently:
      startedRecently === 0
        ? 0
        : Math.round(
            sum(entries, (entry) => entry.meanWaitMsRecently * entry.startedRecently) / startedRecently,
          ),
    maxWaitMsRecently: max((entry) => entry.maxWaitMsRecently),
    line: sum(keeping.length > 0 ? keeping : entries, (entry) => entry.line),
    blockedForMs: max((entry) => entry.blockedForMs),
    delayMs: max((entry) => entry.delayMs),
  };
}

/**
 * The keepers: every agent when each names itself (`--ip-limit agent`), else the one that names itself
 * (the authority), else the one most agents name (views may differ for a moment).
 */
function keepersOf(reports: readonly { id: string; entry: BusyAddress }[]): string[] {
  const itself = reports.filter((report) => report.id === report.entry.keeper).map((report) => report.id);
  if (itself.length === reports.length) return itself;
  if (itself.length > 0) return itself.slice(0, 1);
  const votes = new Map<string, number>();
  for (const { entry } of reports) votes.set(entry.keeper, (votes.get(entry.keeper) ?? 0) + 1);
  return [...votes]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, 1)
    .map(([keeper]) => keeper);
}
