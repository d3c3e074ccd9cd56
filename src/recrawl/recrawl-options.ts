import type { Clock } from "../clock.js";
import { invalidArgument } from "../errors.js";
import { MAX_RECRAWL_BUDGET } from "../transport/limits.js";
import { AdaptivePolicy } from "./adaptive-policy.js";
import { optimalFrequencies, proportionalFrequencies } from "./change-rate.js";
import { type BudgetOf, FixedPolicy, type RevisitPolicy } from "./revisit-policy.js";

/**
 * The `--recrawl` modes: no revisits (one-shot crawls), every page at one interval, adapted to its
 * change rate (the freshness-optimal allocation), or in proportion to it (a worse policy, kept for
 * experiments that compare them).
 */
export const RECRAWL_MODES = ["off", "fixed", "adaptive", "proportional"] as const;
/** One of {@link RECRAWL_MODES}. */
export type RecrawlMode = (typeof RECRAWL_MODES)[number];

/** How pages are revisited (`--recrawl*` flags). */
export interface RecrawlOptions {
  readonly mode: RecrawlMode;
  /** `fixed`: time between two fetches of a page, ms. */
  readonly intervalMs: number;
  /** `adaptive`: the shortest interval a page gets, ms. */
  readonly minMs: number;
  /** `adaptive`: the longest interval a page gets, ms (pages that never change, or change too often). */
  readonly maxMs: number;
  /** `adaptive`: revisits a second this agent may spend in all. */
  readonly budget: number;
  /** No revisit is planned later than this long after the agent started, ms; undefined: no end. */
  readonly horizonMs?: number;
  /**
   * No revisit is planned after this instant, ms since the epoch: the same for every agent of a
   * cluster, whenever each started; undefined: no end. With `horizonMs` too, the earlier ends.
   */
  readonly untilMs?: number;
}

/** When revisits end for an agent started at `startedAtMs`: `horizonMs` after it, or `untilMs`, the earlier. */
export function revisitsEndAt(
  options: Pick<RecrawlOptions, "horizonMs" | "untilMs">,
  startedAtMs: number,
): number {
  return Math.min(
    options.horizonMs === undefined ? Number.POSITIVE_INFINITY : startedAtMs + options.horizonMs,
    options.untilMs ?? Number.POSITIVE_INFINITY,
  );
}

/** Checks `options`; throws `InvalidArgument` naming the flag at fault. */
export function validateRecrawlOptions(options: RecrawlOptions): void {
  if (options.mode === "off") return;
  if (!(options.intervalMs > 0)) invalidArgument("--recrawl-interval must be longer than 0");
  if (!(options.minMs > 0)) invalidArgument("--recrawl-min must be longer than 0");
  if (options.maxMs < options.minMs) invalidArgument("--recrawl-max must not be shorter than --recrawl-min");
  if (!(options.budget > 0)) invalidArgument("--recrawl-budget must be a number of pages a second above 0");
  if (options.budget > MAX_RECRAWL_BUDGET)
    invalidArgument(`--recrawl-budget must be at most ${MAX_RECRAWL_BUDGET} pages a second`);
  if (options.horizonMs !== undefined && !(options.horizonMs > 0))
    invalidArgument("--recrawl-horizon must be longer than 0");
}

/** The policy of `options` (not `off`); `budgetOf` gives it its part of a cluster's budgets. */
export function revisitPolicy(options: RecrawlOptions, clock: Clock, budgetOf?: BudgetOf): RevisitPolicy {
  if (options.mode === "adaptive") return new AdaptivePolicy(options, clock, optimalFrequencies, budgetOf);
  if (options.mode === "proportional")
    return new AdaptivePolicy(options, clock, proportionalFrequencies, budgetOf);
  return new FixedPolicy(options.intervalMs);
}
