import { Gauge, type Registry } from "prom-client";
import { DEFAULT_MAX_HOSTS_PER_IP } from "../agent/index.js";
import { BUSIEST_IPS_REPORTED } from "../cluster/index.js";
import type { AgentStats, BusyAddress } from "../transport/index.js";

/** The end of each figure's help: what its `rank` label is. */
const RANKED = `(label rank: 1 to ${BUSIEST_IPS_REPORTED}, busiest first; ubicrawl_busiest_ip_info names its address)`;

/** One gauge per figure, labelled by the address's rank (and by `labels` besides). */
const FIGURES: readonly {
  readonly name: string;
  readonly help: string;
  readonly labels?: readonly string[];
  readonly values: (ip: BusyAddress) => readonly [Record<string, string>, number][];
}[] = [
  {
    name: "ubicrawl_busiest_ip_info",
    help: `The address ranked rank among this agent's ${BUSIEST_IPS_REPORTED} busiest, and the keeper of its politeness (its IP authority, or this agent) (always 1)`,
    labels: ["ip", "keeper"],
    values: (ip) => [[{ ip: ip.ip, keeper: ip.keeper }, 1]],
  },
  {
    name: "ubicrawl_busiest_ip_hosts",
    help: `Hosts this agent sent requests to at a busiest address (counted up to ${DEFAULT_MAX_HOSTS_PER_IP}) ${RANKED}`,
    values: (ip) => [[{}, ip.hosts]],
  },
  {
    name: "ubicrawl_busiest_ip_requests_in_flight",
    help: `This agent's requests in flight at a busiest address ${RANKED}`,
    values: (ip) => [[{}, ip.inFlight]],
  },
  {
    name: "ubicrawl_busiest_ip_requests_waiting",
    help: `This agent's requests waiting for a slot at a busiest address ${RANKED}`,
    values: (ip) => [[{}, ip.waiting]],
  },
  {
    name: "ubicrawl_busiest_ip_requests_started_last_minute",
    help: `Requests this agent started at a busiest address in the last minute ${RANKED}`,
    values: (ip) => [[{}, ip.startedRecently]],
  },
  {
    name: "ubicrawl_busiest_ip_wait_seconds",
    help: `Mean and longest wait for a slot of the requests started at a busiest address in the last minute ${RANKED}`,
    labels: ["stat"],
    values: (ip) => [
      [{ stat: "mean" }, ip.meanWaitMsRecently / 1000],
      [{ stat: "max" }, ip.maxWaitMsRecently / 1000],
    ],
  },
  {
    name: "ubicrawl_busiest_ip_line",
    help: `Asks waiting in a busiest address's line at its keeper, as far as this agent knows ${RANKED}`,
    values: (ip) => [[{}, ip.line]],
  },
  {
    name: "ubicrawl_busiest_ip_blocked_seconds",
    help: `Seconds before a request may start at a busiest address after its server pushed back (0: none) ${RANKED}`,
    values: (ip) => [[{}, ip.blockedForMs / 1000]],
  },
  {
    name: "ubicrawl_busiest_ip_delay_seconds",
    help: `The least gap between two starts at a busiest address (IP delay, or a longer Crawl-delay) ${RANKED}`,
    values: (ip) => [[{}, ip.delayMs / 1000]],
  },
  {
    name: "ubicrawl_busiest_ip_refusals_last_minute",
    help: `Answers 429 or 503 from a busiest address's server to this agent in the last minute ${RANKED}`,
    values: (ip) => [[{}, ip.refusalsRecently]],
  },
];

/**
 * Gauges of the agent's busiest IP addresses (`AgentStats.busiest_ips`), by rank: the figures are
 * labelled `rank` ("1" to "10") alone, so each has at most ten series however many addresses take
 * turns in the top ten; the address is a label of `ubicrawl_busiest_ip_info{rank,ip,keeper}` only,
 * whose series (one per rank at a scrape) is new whenever another address or keeper takes the rank —
 * join them with `* on(rank) group_left(ip, keeper) ubicrawl_busiest_ip_info`. `stats` gives the
 * scrape's partition stats, undefined before the agent is ready.
 */
export function registerBusyIpMetrics(registry: Registry, stats: () => AgentStats | undefined): void {
  for (const figure of FIGURES) {
    const gauge: Gauge = new Gauge({
      name: figure.name,
      help: figure.help,
      labelNames: ["rank", ...(figure.labels ?? [])],
      registers: [registry],
      collect: () => {
        gauge.reset();
        for (const [index, ip] of (stats()?.busiestIps ?? []).entries())
          for (const [labels, value] of figure.values(ip))
            gauge.set({ rank: String(index + 1), ...labels }, value);
      },
    });
  }
}
