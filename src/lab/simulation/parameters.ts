import { AGENT_DEFAULTS, QUANTUM_PAGES } from "../../agent/index.js";
import { DEFAULT_BATCH_URLS, DEFAULT_RECOVERY_K } from "../../cluster/index.js";
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SUSPECT_AFTER_MS } from "../../failure-detector/index.js";

/**
 * What a simulated crawl is made of besides its web: the agents' settings (the real agents' defaults
 * unless told otherwise), the costs and delays that stand for the machines and the network, and the
 * fault to inject.
 */

/** The agents' settings: those of `ubicrawl agent` that shape a crawl's timing and traffic. */
export interface SimulationSettings {
  /** Hosts an agent visits at once (`--max-active-hosts`). */
  readonly maxActiveHosts: number;
  /** Pause between two requests to a host, ms (`--delay-ms`). */
  readonly delayMs: number;
  /** Pages a host's visit fetches before it yields to the hosts waiting for a slot. */
  readonly quantumPages: number;
  /** URLs per batch, and the size that sends a batch at once (`--batch-urls`). */
  readonly batchUrls: number;
  /** Heartbeat interval and failure detector timeout (`--heartbeat-ms`, `--suspect-after-ms`). */
  readonly heartbeatMs: number;
  readonly suspectAfterMs: number;
  /** Agents asked, one after the other, before a host is crawled by a new owner (`--recovery-k`). */
  readonly recoveryK: number;
  /** First retry delay of a batch whose receiver does not answer (doubles up to 5 s). */
  readonly retryMinMs: number;
}

/** The real agents' defaults. */
export const AGENT_SETTINGS: SimulationSettings = {
  maxActiveHosts: AGENT_DEFAULTS.maxActiveHosts,
  delayMs: AGENT_DEFAULTS.delayMs,
  quantumPages: QUANTUM_PAGES,
  batchUrls: DEFAULT_BATCH_URLS,
  heartbeatMs: DEFAULT_HEARTBEAT_INTERVAL_MS,
  suspectAfterMs: DEFAULT_SUSPECT_AFTER_MS,
  recoveryK: DEFAULT_RECOVERY_K,
  retryMinMs: 200,
};

/** The costs and delays that stand for the machines and the network. */
export interface SimulationTiming {
  /** Durations of fetches (ms), robots.txt included: one is drawn at random for each fetch. */
  readonly fetchMs: readonly number[];
  /** CPU ms an agent spends on each page it fetched (parsing, storing, routing its links). */
  readonly cpuMsPerPage: number;
  /**
   * CPU ms an agent spends a second for itself, whatever its pages (its timers, its code warming up,
   * the crawl's end): spent in slices through its life.
   */
  readonly cpuMsPerAgentSecond: number;
  /** CPU ms an agent spends on each URL of a batch it receives. */
  readonly cpuMsPerUrlReceived: number;
  /** CPU ms of one heartbeat message sent or answered, besides its membership table... */
  readonly cpuMsPerHeartbeat: number;
  /** ...and per member of that table (each heartbeat carries the whole table). */
  readonly cpuMsPerGossipEntry: number;
  /** One-way latency of a message between two agents. */
  readonly latencyMs: number;
}

/**
 * Heartbeat costs measured on the real agents (bench/README.md, `bench/cluster.mjs --idle-seconds`):
 * an idle agent of 8 at a 500 ms heartbeat spends about 13 ms of CPU a second against 3.3 ms alone,
 * for 28 heartbeat messages a second (0.35 ms each); leaving the membership table out of them saved
 * about a tenth (a measured trial), so about 0.035 ms of a message is its 8 members' entries.
 */
export const MEASURED_HEARTBEAT_COSTS = { cpuMsPerHeartbeat: 0.31, cpuMsPerGossipEntry: 0.0044 } as const;

/** A fault injected in a simulated crawl, as the laboratory injects it in a real one. */
export interface SimulationFault {
  /** When: once the agents have fetched this many pages. */
  readonly afterFetches: number;
  /** Agents that die then: the last ones. @default 0 */
  readonly kill?: number;
  /** Agents that join then (`agent-(n+1)` …), with no seeds. @default 0 */
  readonly add?: number;
}
