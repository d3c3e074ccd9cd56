/**
 * The decentralized cluster: membership, ownership, host hand-overs (page recovery), URL exchange,
 * termination.
 */

export type { ClusterBusyAddress } from "./busy-addresses.js";
export {
  type ChosenSeeds,
  chooseSeeds,
  DEFAULT_JOIN_TIMEOUT_MS,
  REMEMBERED_ONLY_WAIT_MS,
  type SeedProbe,
} from "./cluster-join.js";
export {
  ClusterNode,
  type ClusterNodeDeps,
  DEFAULT_LEAVE_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_SUBMITS,
  type LeaveOutcome,
} from "./cluster-node.js";
export type { ClusterOptions } from "./cluster-options.js";
export { type ClusterTotals, clusterTotals } from "./cluster-totals.js";
export { CrawlTenure } from "./crawl-tenure.js";
export { type BatchState, FlushPolicy, type FlushPolicyOptions } from "./flush-policy.js";
export { type LeaveReport, leaveReport } from "./graceful-leave.js";
export { HandOverDesk, packFingerprints, unpackFingerprints } from "./hand-over.js";
export { DEFAULT_RECOVERY_K, HostClaims, type HostClaimsOptions } from "./host-claims.js";
export { DEFAULT_IP_LIMIT, IP_LIMITS, type IpLimit } from "./ip-authority.js";
export {
  KNOWN_PEERS_FILE,
  type KnownPeer,
  KnownPeers,
  MAX_KNOWN_PEERS,
  readKnownPeers,
} from "./known-peers.js";
export {
  DEFAULT_PARTITIONING,
  Ownership,
  PARTITIONINGS,
  type Partitioning,
  partitionKey,
} from "./ownership.js";
export { BUSIEST_IPS_REPORTED, loneAgentStats, PartitionStats } from "./partition-stats.js";
export {
  type LookupAll,
  SeedAddresses,
  type SeedAddressesDeps,
  selfAddressMatcher,
} from "./seed-addresses.js";
export { DEFAULT_TAKEOVER_DELAY_MS, TakeoverGrace, type TakeoverGraceDeps } from "./takeover-grace.js";
export { TerminationDetector, type WorkLoad } from "./termination.js";
export { UrlExchange } from "./url-exchange.js";
export { DEFAULT_BATCH_URLS, type UrlExchangeOptions } from "./url-exchange-options.js";
