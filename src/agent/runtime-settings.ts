import { ErrorCode, UbiError } from "../errors.js";
import type { HostScheduler, TurnGovernor } from "../frontier/index.js";
import { UNSYNCED_PAGES_PER_HOST } from "./agent-assembly.js";
import type { HostVisitor } from "./host-visitor.js";

/** The settings {@link applyRuntimeSetting} changes while an agent runs, by flag name, with their ranges. */
const RUNTIME_SETTINGS = {
  "delay-ms": { min: 0, max: 3_600_000 },
  "max-active-hosts": { min: 1, max: 100_000 },
} as const;
type RuntimeSetting = keyof typeof RUNTIME_SETTINGS;

/** The parts a runtime setting changes. */
export interface RuntimeSettingTargets {
  readonly visitor: Pick<HostVisitor, "setDelayMs">;
  readonly scheduler: Pick<HostScheduler, "setMaxActiveHosts">;
  readonly turnGovernor: Pick<TurnGovernor, "setCeiling">;
}

/**
 * Changes a setting while the agent runs (`ubicrawl ctl set NAME=VALUE`), until it stops (the flags
 * decide again at the next start): `delay-ms` (from each host's next request) or `max-active-hosts`
 * (with the page turns' ceiling, which follows it). Throws `InvalidArgument` for another name or a
 * value out of range.
 */
export function applyRuntimeSetting(name: string, value: number, targets: RuntimeSettingTargets): void {
  const range = RUNTIME_SETTINGS[name as RuntimeSetting];
  if (range === undefined) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${name} cannot change at runtime: only ${Object.keys(RUNTIME_SETTINGS).join(", ")} can`,
    );
  }
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${name} must be an integer from ${range.min} to ${range.max}, got ${value}`,
    );
  }
  if (name === "delay-ms") targets.visitor.setDelayMs(value);
  else {
    targets.scheduler.setMaxActiveHosts(value);
    targets.turnGovernor.setCeiling(value * UNSYNCED_PAGES_PER_HOST);
  }
}
