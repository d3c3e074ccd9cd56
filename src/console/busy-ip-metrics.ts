import { Gauge, type Registry } from "prom-client";
import { DEFAULT_MAX_HOSTS_PER_IP } from "../agent/index.js";
import type { AgentStats, BusyAddress } from "../transport/index.js";

/** One gauge per figure, labelled by address (and by `labels` besides). */
const FIGURES: readonly {
  readonly name: string;
  readonly help: string;
  readonly labels?: readonly string[];
  readonly values: (ip: BusyAddress) => readonly [Record<string, string>, number][];
}[] = [
  {
    name: "ubicrawl_busiest_ip_info",
    help: "The keeper of a busiest address's politeness (its IP authority, or this agent) (always 1)",
    labels: ["keeper"],
    values: (ip) => [[{ keeper: ip.keeper }, 1]],
  },
  {
    name: "ubicrawl_busiest_ip_hosts",
    help: `Hosts this agent sent requests to at a busiest address (counted up to ${DEFAULT_MAX_HOSTS_PER_IP})`,
    values: (ip) => [[{}, ip.hosts]],
  },
  {
    name: "ubicrawl_busiest_ip_requests_in_flight",
    help: "This agent's requests in flight at a busiest address",
    values: (ip) => [[{}, ip.inFlight]],
  },
  {
    name: "ubicrawl_busiest_ip_requests_waiting",
    help: "This agent's requests waiting for a slot at a busiest address",
    values: (ip) => [[{}, ip.waiting]],
  },
  {
    name: "ubicrawl_busiest_ip_requests_started_last_minute",
    help: "Requests this agent started at a busiest address in the last minute",
    values: (ip) => [[{}, ip.startedRecently]],
  },
  {
    name: "ubicrawl_busiest_ip_wait_seconds",
    help: "Mean and longest wait for a slot of the requests started at a busiest address in the last minute",
    labels: ["stat"],
    values: (ip) => [
      [{ stat: "mean" }, ip.meanWaitMsRecently / 1000],
      [{ stat: "max" }, ip.maxWaitMsRecently / 1000],
    ],
  },
  {
    name: "ubicrawl_busiest_ip_line",
    help: "Asks waiting in a busiest address's line at its keeper, as far as this agent knows",
    values: (ip) => [[{}, ip.line]],
  },
  {
    name: "ubicrawl_busiest_ip_blocked_seconds",
    help: "Seconds before a request may start at a busiest address after its server pushed back (0: none)",
    values: (ip) => [[{}, ip.blockedForMs / 1000]],
  },
  {
    name: "ubicrawl_busiest_ip_delay_seconds",
    help: "The least gap between two starts at a busiest address (IP delay, or a longer Crawl-delay)",
    values: (ip) => [[{}, ip.delayMs / 1000]],
  },
  {
    name: "ubicrawl_busiest_ip_refusals_last_minute",
    help: "Answers 429 or 503 from a busiest address's server to this agent in the last minute",
    values: (ip) => [[{}, ip.refusalsRecently]],
  },
];

/**
 * Gauges of the agent's busiest IP addresses (`AgentStats.busiest_ips`), labelled `ip`: the top 10
 * only, so the labels stay bounded — an address that drops out of them drops its series at the next
 * scrape. `stats` gives the scrape's partition stats, undefined before the agent is ready.
 */
export function registerBusyIpMetrics(registry: Registry, stats: () => AgentStats | undefined): void {
  for (const figure of FIGURES) {
    const gauge: Gauge = new Gauge({
      name: figure.name,
      help: figure.help,
      labelNames: ["ip", ...(figure.labels ?? [])],
      registers: [registry],
      collect: () => {
        gauge.reset();
        for (const ip of stats()?.busiestIps ?? [])
          for (const [labels, value] of figure.values(ip)) gauge.set({ ip: ip.ip, ...labels }, value);
      },
    });
  }
}
