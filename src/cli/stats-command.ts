import { DEFAULT_MAX_HOSTS_PER_IP, DEFAULT_MAX_IPS, HOST_NAMES_LISTED } from "../agent/index.js";
import { formatBytes } from "../agent/progress.js";
import { BUSIEST_IPS_REPORTED, type ClusterBusyAddress, clusterTotals } from "../cluster/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import { type AgentStats, type BusyAddress, PeerClient } from "../transport/index.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";
import { explainCallFailure, OPERATOR_CONNECTION_FLAGS, securityFrom } from "./operator-connection.js";

const STATS_FLAGS = {
  agent: { type: "string", help: "address of the agent to ask", placeholder: "HOST:PORT" },
  cluster: { type: "boolean", help: "gather every live agent's stats through that agent, with totals" },
  json: { type: "boolean", help: "print JSON instead of a table" },
  ...OPERATOR_CONNECTION_FLAGS,
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl stats --agent HOST:PORT [--cluster] [--json]";
const DESCRIPTION = `Shows an agent's partition stats: its view of the cluster, its share of the circle, hosts,
pages (since the crawl began in its data dir, and this run), bytes, distinct URLs queued, what waiting
hosts wait for, URLs exchanged per peer, communication overhead, links to other agents' hosts, pages
recovered from previous owners, errors, rate, and the ${BUSIEST_IPS_REPORTED} IP addresses its requests were
busiest at lately (requests started in the last minute, in flight and waiting; of the ${DEFAULT_MAX_IPS}
it used last): their hosts (counted up to ${DEFAULT_MAX_HOSTS_PER_IP}, ${HOST_NAMES_LISTED} named), the agent keeping their
politeness (the IP authority with --ip-limit cluster, itself otherwise), the requests' waits for a
slot, the line there, and a server's back-off or Crawl-delay in force.
With --cluster, every agent's stats are gathered through the one named, with totals: live agents as
they answer now, suspected and departed ones with their last known figures and how old those are; and
the cluster's busiest addresses, an address several agents crawl hosts at listed once with them all,
their figures summed. Its keeper is "each agent" with --ip-limit agent (each keeps its own line: the
lines are summed). Its hosts are a range, "least–most", when the agents' counts may overlap: an agent
counts each host it sent requests to while it remembers the address, so a host handed over from one
agent to another is counted by both, and with --partition url every agent counts every host; the
least is the most one agent counts, the most their sum.`;

/** `ubicrawl stats`: asks an agent for its (or the cluster's) partition stats, printed on `io.stdout`. */
export async function statsCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, STATS_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, STATS_FLAGS));
    return 0;
  }
  if (flags.agent === undefined) throw new UbiError(ErrorCode.InvalidArgument, "--agent is required");
  const security = await securityFrom(flags);
  const client = new PeerClient(flags.agent, { security, requestDeadlineMs: flags["timeout-ms"] });
  try {
    const reply = await client
      .operatorStats({ cluster: flags.cluster })
      .catch(async (error: unknown) =>
        Promise.reject(await explainCallFailure(error, flags.agent as string, security)),
      );
    const document = flags.cluster ? { ...reply, totals: clusterTotals(reply.agents) } : reply;
    io.stdout.write(
      flags.json ? `${JSON.stringify(document, null, 2)}\n` : formatStats(reply.agents, flags.cluster),
    );
    return 0;
  } finally {
    client.close();
  }
}

/** A human-readable report: one block per agent, then (for a cluster) a table with totals. */
export function formatStats(agents: readonly AgentStats[], cluster: boolean): string {
  const lines: string[] = [];
  // The agent asked answers first: the crashed agents whose hosts it still holds for them.
  const held = new Set(agents[0]?.heldFor ?? []);
  const statusOf = (stats: AgentStats) =>
    stats.status === "SUSPECTED" && !held.has(stats.id) ? "gone" : stats.status.toLowerCase();
  for (const stats of agents) {
    if (stats.status !== "ALIVE" || stats.reportedMsAgo > 0) {
      const status = statusOf(stats);
      lines.push(
        `agent ${stats.id} at ${stats.address}: ${status}${
          status === "gone"
            ? " (its hosts are crawled by the others)"
            : status === "suspected"
              ? " (its hosts are held for it)"
              : ""
        }, last known ${(stats.reportedMsAgo / 1000).toFixed(1)} s ago`,
        `  pages: ${stats.pagesFetched} fetched`,
      );
      continue;
    }
    const waiting = stats.waiting
      .map((entry) => `${entry.hosts} ${entry.reason} (next in ${Math.ceil(entry.nextInMs / 1000)} s)`)
      .join(", ");
    lines.push(
      `agent ${stats.id} at ${stats.address}${stats.paused ? " (paused)" : ""}${stats.idle ? " (idle)" : ""}`,
      `  capacity ${stats.capacity}, ${stats.replicas} replicas, ${(stats.circleShare * 100).toFixed(2)}% of the circle`,
      `  view: ${stats.view.map((peer) => `${peer.id}=${peer.status.toLowerCase()}(${peer.lastHeardMsAgo}ms)`).join(" ")}`,
      `  hosts: ${stats.hostsOwned} owned, ${stats.hostsKnown} known, ${stats.hostsActive} active, ${stats.hostsDone} done${
        stats.hostsHeld > 0 || stats.heldFor.length > 0
          ? `, ${stats.hostsHeld} held for crashed ${stats.heldFor.join(", ")} (takeover grace)`
          : ""
      }`,
      `  pages: ${stats.pagesFetched} fetched (${stats.pagesFetchedThisRun} this run, ${stats.pagesPerSecond.toFixed(1)}/s), ${formatBytes(stats.bytesFetched)}, ${stats.queuedUrls} distinct URLs queued, ${stats.pagesRecovered} recovered from previous owners`,
      `  duplicates: ${stats.duplicates} pages stored as revisits, ${formatBytes(stats.duplicateBytes)} not stored again, ${stats.digestMessages} digest messages sent; ${stats.payloadCopies} copies stored by races, ${stats.payloadsUnchecked} payloads stored unchecked`,
      ...revisitLines(stats),
      `  waiting hosts: ${waiting || "none"}`,
      `  exchange: overhead ${stats.communicationOverhead.toFixed(3)} URLs sent per page; ${
        stats.peers
          .map(
            (peer) =>
              `${peer.peerId} sent ${peer.urlsSent} URLs in ${peer.batchesSent} batches, received ${peer.urlsReceived} in ${peer.batchesReceived}`,
          )
          .join("; ") || "no peers"
      }`,
      `  links to other agents' hosts: ${stats.linksToOtherAgents} (a URL handed away is not sent again)`,
      ...busyLines(stats.busiestIps),
      `  errors: ${
        Object.entries(stats.errors)
          .map(([name, count]) => `${name}=${count}`)
          .join(" ") || "none"
      }`,
      `  uptime ${(stats.uptimeMs / 1000).toFixed(1)} s, idle ${yesNo(stats.idle)}, paused ${yesNo(stats.paused)}`,
    );
  }
  if (cluster) {
    const totals = clusterTotals(agents);
    // A row that is not alive keeps its pages (they were fetched); its queue and hosts are others' now.
    const rows = agents.map((stats) => {
      const alive = stats.status === "ALIVE";
      return [
        stats.id,
        statusOf(stats),
        String(stats.pagesFetched),
        alive ? String(stats.queuedUrls) : "-",
        alive ? String(stats.hostsOwned) : "-",
        alive ? stats.pagesPerSecond.toFixed(1) : "-",
        stats.communicationOverhead.toFixed(3),
        alive ? yesNo(stats.idle) : "-",
      ];
    });
    rows.push([
      "TOTAL",
      `${totals.alive}/${totals.agents} alive`,
      String(totals.pagesFetched),
      String(totals.queuedUrls),
      String(totals.hostsOwned),
      totals.pagesPerSecond.toFixed(1),
      "",
      agents.every((stats) => stats.idle || stats.status !== "ALIVE") ? "yes" : "no",
    ]);
    lines.push(
      "",
      table(["agent", "status", "pages", "queued", "hosts", "pages/s", "overhead", "idle"], rows),
    );
    if (totals.busiestIps.length > 0)
      lines.push("", "busiest addresses (cluster):", busyTable(totals.busiestIps));
  }
  return `${lines.join("\n")}\n`;
}

function yesNo(flag: boolean): string {
  return flag ? "yes" : "no";
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const format = (row: string[]) => row.map((cell, column) => cell.padStart(widths[column] ?? 0)).join("  ");
  return [format(header), ...rows.map(format)].join("\n");
}

/** The report's revisits line (none with `--recrawl off`). */
function revisitLines(stats: AgentStats): string[] {
  const r = stats.revisits;
  if (r === null) return [];
  const late = r.overdueMs >= 1000 ? `, the earliest ${Math.round(r.overdueMs / 1000)} s overdue` : "";
  const fresh =
    r.freshnessPages > 0
      ? `  estimated freshness of the share: ${r.estimatedFreshness.toFixed(3)} (over ${r.freshnessPages} pages sampled)`
      : undefined;
  const budget =
    r.budgetPages > 0
      ? `  revisit budget: ${r.budget.toFixed(2)}/s over ${r.budgetPages} pages (in a cluster, its part of the live agents' budgets, by pages)`
      : undefined;
  return [
    ...(fresh === undefined ? [] : [fresh]),
    ...(budget === undefined ? [] : [budget]),
    `  revisits: ${r.revisited} answered (${r.notModified} not modified, ${r.unchanged} unchanged, ${r.changed} changed, ${r.missed} failed), ${r.queued} queued, ${r.planned} planned${late}, ${r.received} histories received with hosts`,
  ];
}

/** An agent's busiest addresses, one line each (none when it sent no request lately). */
function busyLines(busiest: readonly BusyAddress[]): string[] {
  if (busiest.length === 0) return ["  busiest addresses: none lately"];
  return [
    "  busiest addresses (last minute):",
    ...busiest.map(
      (ip) =>
        `    ${ip.ip}: ${hostsOf(ip)}, kept by ${ip.keeper}; ${ip.inFlight} in flight, ${ip.waiting} waiting, ${ip.startedRecently} started (${ip.started} in all); wait ${ip.meanWaitMsRecently} ms mean, ${ip.maxWaitMsRecently} ms max (${seconds(ip.waitedMs)} in all)${politenessOf(ip)}`,
    ),
  ];
}

/** The cluster's busiest addresses as a table. */
function busyTable(busiest: readonly ClusterBusyAddress[]): string {
  return table(
    [
      "address",
      "hosts",
      "agents",
      "keeper",
      "in flight",
      "waiting",
      "started",
      "wait mean/max ms",
      "line",
      "back-off",
    ],
    busiest.map((ip) => [
      ip.ip,
      `${ip.hostsAtLeast === ip.hosts ? "" : `${ip.hostsAtLeast}–`}${ip.hosts}${ip.moreHosts ? "+" : ""}`,
      ip.agents.join(","),
      ip.keepers.length === 1 ? (ip.keepers[0] as string) : "each agent",
      String(ip.inFlight),
      String(ip.waiting),
      String(ip.startedRecently),
      `${ip.meanWaitMsRecently}/${ip.maxWaitMsRecently}`,
      String(ip.line),
      backOffOf(ip).join(", ") || "-",
    ]),
  );
}

function hostsOf(ip: BusyAddress): string {
  const count = `${ip.hosts}${ip.moreHosts ? "+" : ""} host${ip.hosts === 1 && !ip.moreHosts ? "" : "s"}`;
  const more = ip.moreHosts || ip.hosts > ip.hostNames.length ? ", …" : "";
  return `${count} (${ip.hostNames.join(", ")}${more})`;
}

/** The line and the back-off at an address, when any ("; "-led). */
function politenessOf(ip: BusyAddress): string {
  const parts = [ip.line > 0 ? `line ${ip.line}` : "", ...backOffOf(ip)].filter((part) => part !== "");
  return parts.length === 0 ? "" : `; ${parts.join(", ")}`;
}

/** The back-off in force at an address: a block, a delay, refusals (the line is not one). */
function backOffOf(ip: {
  readonly blockedForMs: number;
  readonly delayMs: number;
  readonly refusalsRecently: number;
}): string[] {
  return [
    ip.blockedForMs > 0 ? `blocked ${seconds(ip.blockedForMs)} more` : "",
    ip.delayMs > 0 ? `${ip.delayMs} ms between starts` : "",
    ip.refusalsRecently > 0 ? `${ip.refusalsRecently} refused (429/503)` : "",
  ].filter((part) => part !== "");
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
