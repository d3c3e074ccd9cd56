import type { DigestPeers } from "../dedup/index.js";
import type { IpLimiter } from "../frontier/index.js";
import type { BudgetOf } from "../recrawl/index.js";
import type { Admission } from "./crawl-rights.js";
import type { HandsChanges } from "./hands-changes.js";
import type { UrlExchange, UrlOwnership } from "./link-router.js";

/** How an agent learns who owns what and where foreign links go (absent for a lone agent). */
export interface ClusterHooks {
  readonly ownership: () => UrlOwnership;
  readonly exchange: UrlExchange;
  /**
   * True while this agent may hold URLs of `host`: it owns the host in its current view (or, under URL
   * partitioning, always).
   */
  readonly owns: (host: string) => boolean;
  /**
   * When this agent may crawl `host`, which it owns: 0 for now, or a later time — held for a crashed
   * previous owner, or being handed over by the agent that crawled it before (a promise meanwhile).
   */
  readonly admit: (host: string) => Admission | Promise<Admission>;
  /** True while this agent may send `host` a request: it owns it and holds its crawl. */
  readonly mayFetch: (host: string) => boolean;
  /** True when every live agent is idle and no URL batch is in transit (termination detection). */
  readonly isCrawlComplete: () => boolean;
  /** Where payload digests other agents own are asked about (`--dedup cluster`). */
  readonly digests: DigestPeers;
  /** The cluster-wide per-IP limit (absent: this agent's own `--max-per-ip` only). */
  readonly ipLimiter?: IpLimiter;
  /**
   * This agent's part of the cluster's revisit budgets, given what its policy shares (absent: its own
   * `--recrawl-budget`).
   */
  readonly revisitBudget?: BudgetOf;
  /**
   * Told when who may fetch which host changes (a view change, a host's crawl passed on): a URL whose
   * host is no longer this agent's to fetch stops waiting for its address's slot.
   */
  readonly hands?: HandsChanges;
  /**
   * A visit left URLs in the queue of a host this agent no longer owns (put back as they stopped
   * waiting): they are handed to its owner now, not at the next periodic look.
   */
  readonly stranded?: () => void;
  /**
   * False under URL partitioning: hosts are never handed over, so no link is noted for a hand-over
   * (`LinkOrigins`). Absent: true.
   */
  readonly handsOverHosts?: boolean;
}
