import type { TransportSecurity } from "../transport/index.js";
import type { IpLimit } from "./ip-authority.js";
import type { Ownership, Partitioning } from "./ownership.js";
import type { DEFAULT_BATCH_URLS } from "./url-exchange-options.js";

/** How an agent takes part in a cluster; the CLI's `--listen`, `--join`, … flags. */
export interface ClusterOptions {
  /** `host:port` of this agent's gRPC server (port 0 picks one). */
  readonly listen: string;
  /**
   * `host:port` the other agents are told to reach this agent at (behind NAT, a container or a proxy);
   * it is this agent's address in every membership view. @default the bound `listen` address
   */
  readonly advertise?: string;
  /** Addresses of live agents to join through (empty: start a new cluster). */
  readonly join: readonly string[];
  /**
   * The name each `join` address resolved from a `--join` name must show a certificate for (see
   * `SeedAddresses`), by address. @default none: each checked against its own host
   */
  readonly joinServerNames?: ReadonlyMap<string, string>;
  /** This agent's capacity: its share of hosts is proportional to it. @default 1 */
  readonly capacity: number;
  /** @default 1000 */
  readonly heartbeatIntervalMs: number;
  /** @default 5000 */
  readonly suspectAfterMs: number;
  /**
   * Agents a new owner asks at most, along the circle, for a host it claims before it takes a host none
   * of them holds (UbiCrawler's k; 0 takes hosts without asking). @default 16
   */
  readonly recoveryK?: number;
  /**
   * URLs a batch to another agent holds at most, and the count that sends it at once (1: every URL in
   * a message of its own). @default {@link DEFAULT_BATCH_URLS}
   */
  readonly batchUrls?: number;
  /**
   * How long hosts of a crashed agent wait for it to come back before their new owners crawl them
   * (0: at once). An agent restarted on its data dir within it refetches nothing but the pages in flight.
   * @default 10000
   */
  readonly takeoverDelayMs?: number;
  /**
   * Whose requests `--max-per-ip` counts: this agent's, or the whole cluster's (each address's
   * politeness kept by its authority: see ip-authority.ts). @default DEFAULT_IP_LIMIT
   */
  readonly ipLimit?: IpLimit;
  /** Replicas per unit of capacity on the circle; every agent of a cluster must use the same value. */
  readonly replicasPerUnit?: number;
  /**
   * How URLs are spread over the agents; every agent of a cluster must use the same. `url` is for
   * experiments (see {@link Ownership}). @default "host"
   */
  readonly partitioning?: Partitioning;
  /** Transport security of agent-to-agent traffic. */
  readonly security: TransportSecurity;
  /** How long joining keeps trying the `join` addresses before giving up. @default 30000 */
  readonly joinTimeoutMs?: number;
  /**
   * `SubmitUrls` batches handled at once at most; further ones are answered `Overloaded` at once so
   * their senders back off and retry, which bounds the memory a flood of batches can take.
   * @default 32
   */
  readonly maxConcurrentSubmits?: number;
}
