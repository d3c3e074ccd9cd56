export {
  DEDUP_MODES,
  DEFAULT_CLAIM_LEASE_MS,
  type DedupMode,
  type DigestQuestion,
  DigestRegistry,
  type DigestSettlement,
  type DigestVerdict,
} from "./digest-registry.js";
export { type DigestPeers, type Duplicate, DuplicateDetector } from "./duplicate-detector.js";
