import { invalidArgument } from "../errors.js";
import type { PageHistory } from "./page-history.js";

/** The `--recrawl` modes: no revisits (one-shot crawls), or every page at one interval. */
export const RECRAWL_MODES = ["off", "fixed"] as const;
/** One of {@link RECRAWL_MODES}. */
export type RecrawlMode = (typeof RECRAWL_MODES)[number];

/** How pages are revisited (`--recrawl*` flags). */
export interface RecrawlOptions {
  readonly mode: RecrawlMode;
  /** `fixed`: time between two fetches of a page, ms. */
  readonly intervalMs: number;
  /** No revisit is planned later than this long after the agent started, ms; undefined: no end. */
  readonly horizonMs?: number;
}

/** Checks `options`; throws `InvalidArgument` naming the flag at fault. */
export function validateRecrawlOptions(options: RecrawlOptions): void {
  if (options.mode === "off") return;
  if (!(options.intervalMs > 0)) invalidArgument("--recrawl-interval must be longer than 0");
  if (options.horizonMs !== undefined && !(options.horizonMs > 0))
    invalidArgument("--recrawl-horizon must be longer than 0");
}

/** Picks the time to a page's next visit from its history. */
export interface RevisitPolicy {
  /** The interval, ms, before the next visit of the page `key` (any stable id) whose last visit `history` records. */
  nextIntervalMs(key: string, history: PageHistory): number;
}

/** `--recrawl fixed`: every page every `intervalMs`. */
export class FixedPolicy implements RevisitPolicy {
  constructor(private readonly intervalMs: number) {}

  /** Always the interval. */
  nextIntervalMs(): number {
    return this.intervalMs;
  }
}

/** The policy of `options` (not `off`). */
export function revisitPolicy(options: RecrawlOptions): RevisitPolicy {
  return new FixedPolicy(options.intervalMs);
}
