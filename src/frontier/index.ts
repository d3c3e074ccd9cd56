/** The URLs still to fetch and when: the seen set, durable per-host queues, the polite host scheduler. */

export {
  type AdoptedHost,
  type AsideCount,
  type AsideOutcome,
  type AsideRestore,
  type Completion,
  DEFAULT_MAX_ASIDE_PER_HOST,
  DEFAULT_MAX_WINDOWED_HOSTS,
  DEFAULT_QUEUE_WINDOW,
  type ForcedOutcome,
  Frontier,
  type FrontierDeps,
  type FrontierOptions,
} from "./frontier.js";
export {
  IpGate,
  type IpGateDeps,
  type IpLimiter,
  type IpPoliteness,
  type IpRelease,
  ipRelease,
} from "./ip-gate.js";
export { IpSpacing } from "./ip-spacing.js";
export { type PageTurnCounts, PageTurns } from "./page-turns.js";
export {
  DEFAULT_MAX_ACTIVE_HOSTS,
  HostScheduler,
  type HostSchedulerDeps,
  type HostSchedulerOptions,
  type VisitOutcome,
  type WaitingHosts,
  type WaitReason,
} from "./scheduler.js";
export { SeenSet, type SeenSetOptions } from "./seen-set.js";
export {
  type LoopLoad,
  TURN_GOVERNOR_DEFAULTS,
  TurnGovernor,
  type TurnGovernorDeps,
  type TurnGovernorOptions,
} from "./turn-governor.js";
