import type { WaitReason } from "../frontier/index.js";
import { backOff, easeOff, retryAfterMs } from "./server-push-back.js";

/** What paces a host's requests: this agent's own delay, the site's Crawl-delay, or a server's 429/503. */
export type PaceReason = Extract<WaitReason, "polite" | "crawl-delay" | "throttled">;

/** The delays that space a host's requests, besides the back-off its server's answers add. */
export interface PaceDelays {
  /** This agent's delay between requests to a host (--delay-ms), ms. */
  readonly delayMs: number;
  /** Times the last request's duration to wait when longer (--delay-factor; 0: never). */
  readonly delayFactor: number;
  /** The site's robots.txt Crawl-delay, ms, when it gives one. */
  readonly crawlDelayMs: number | undefined;
}

/**
 * A host whose next request is due later than this parks (its worker slot goes to another host)
 * instead of waiting in its visit: a Crawl-delay of minutes must not hold one of the agent's workers.
 */
export const PARK_LONGER_WAITS_MS = 2_000;

/**
 * When one host's next request may start, and why: the longest of this agent's delay, the site's
 * Crawl-delay and the back-off its server's 429/503 answers added (AIMD, see server-push-back.ts),
 * counted from the end of the last request; a server's `Retry-After` holds the host until then.
 */
export class HostPace {
  /** When the next request may start (clock ms). */
  nextFetchAtMs = 0;
  /** Which delay set {@link nextFetchAtMs}. */
  pacedBy: PaceReason = "polite";
  /** The delay the server's 429/503 answers added, ms. */
  private backoffMs = 0;
  /** The back-off delay at the server's last refusal (the rate it refused), ms; 0 when unknown. */
  private refusedAtMs = 0;

  /**
   * A request that took `tookMs` ended at `nowMs`: the next one waits the longest delay, never
   * sooner than a wait already set (a `Retry-After`).
   */
  afterRequest(nowMs: number, tookMs: number, delays: PaceDelays): void {
    const candidates: [number, PaceReason][] = [
      [Math.max(delays.delayMs, delays.delayFactor * tookMs), "polite"],
      [delays.crawlDelayMs ?? 0, "crawl-delay"],
      [this.backoffMs, "throttled"],
    ];
    const [waitMs, reason] = candidates.reduce((longest, delay) => (delay[0] > longest[0] ? delay : longest));
    if (nowMs + waitMs >= this.nextFetchAtMs) {
      this.nextFetchAtMs = nowMs + waitMs;
      this.pacedBy = reason;
    }
  }

  /** The server answered a request (not with 429 or 503): the back-off comes down a step. */
  answered(): void {
    this.backoffMs = easeOff(this.backoffMs, this.refusedAtMs);
  }

  /**
   * The server answered 429 or 503 at `nowMs`, with its `Retry-After` header if any: the host backs
   * off (twice its delay, at least `hostDelayMs`'s worth) and waits out the `Retry-After`.
   * @returns when the host may be asked again (clock ms)
   */
  pushedBack(nowMs: number, hostDelayMs: number, retryAfter: string | undefined): number {
    // Refused at full speed, the rate is unknown: the first back-off's rate stands in for it.
    if (this.backoffMs > 0) this.refusedAtMs = this.backoffMs;
    this.backoffMs = backOff(this.backoffMs, hostDelayMs);
    const asked = retryAfterMs(retryAfter, nowMs) ?? 0;
    this.nextFetchAtMs = Math.max(this.nextFetchAtMs, nowMs + this.backoffMs, nowMs + asked);
    this.pacedBy = "throttled";
    return this.nextFetchAtMs;
  }

  /** When the next request is so far off (see {@link PARK_LONGER_WAITS_MS}) that the host should park. */
  longWait(nowMs: number): { untilMs: number; reason: PaceReason } | undefined {
    if (this.nextFetchAtMs - nowMs <= PARK_LONGER_WAITS_MS) return undefined;
    return { untilMs: this.nextFetchAtMs, reason: this.pacedBy };
  }
}
