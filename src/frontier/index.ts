/** The URLs still to fetch and when: the seen set, durable per-host queues, the polite host scheduler. */

export {
  type AdoptedHost,
  type Completion,
  DEFAULT_MAX_WINDOWED_HOSTS,
  DEFAULT_QUEUE_WINDOW,
  Frontier,
  type FrontierDeps,
  type FrontierOptions,
} from "./frontier.js";
export { IpGate } from "./ip-gate.js";
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
