export {
  DEFAULT_FORGET_AFTER_MS,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_SUSPECT_AFTER_MS,
} from "./constants.js";
export {
  type AliveSetListener,
  FailureDetector,
  type FailureDetectorDeps,
  type FailureDetectorOptions,
  type HeartbeatTarget,
  type LivesListener,
} from "./failure-detector.js";
export type { GossipEntry, MemberEntry, MemberStatus, RemoteHeartbeat } from "./member.js";
export {
  MembershipView,
  type MergeResult,
  type RisenIncarnation,
  type SelfIdentity,
} from "./membership-view.js";
