/** The decentralized cluster: membership, ownership, URL exchange, page recovery, termination. */

export { DEFAULT_JOIN_TIMEOUT_MS } from "./cluster-join.js";
export {
  ClusterNode,
  type ClusterNodeDeps,
  type ClusterOptions,
  DEFAULT_MAX_CONCURRENT_SUBMITS,
} from "./cluster-node.js";
export { ClusterService } from "./cluster-service.js";
export { type BatchState, FlushPolicy, type FlushPolicyOptions } from "./flush-policy.js";
export { Ownership } from "./ownership.js";
export { DEFAULT_RECOVERY_K, PageRecovery, type PageRecoveryOptions } from "./page-recovery.js";
export { DEFAULT_TAKEOVER_DELAY_MS, TakeoverGrace, type TakeoverGraceDeps } from "./takeover-grace.js";
export { TerminationDetector, type WorkLoad } from "./termination.js";
export { UrlExchange, type UrlExchangeOptions } from "./url-exchange.js";
