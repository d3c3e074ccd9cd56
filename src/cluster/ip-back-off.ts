/**
 * The back-off an IP's authority applies to the whole cluster when its server pushes back (429, 503):
 * the curve careful crawlers converged on. `Retry-After` is honoured as asked; without it, the address
 * is blocked for a step that doubles at each incident up to a cap, is forgotten after a quiet period,
 * and is jittered upwards (never shorter than the step: when in doubt, slower). Refusals reported while
 * a block runs are the same incident (their requests started before it): they do not double it again.
 */

/** The curve's parameters, ms. */
export interface BackOffCurve {
  /** The first block after a quiet period. */
  readonly baseMs: number;
  /** The longest block without `Retry-After`. */
  readonly capMs: number;
  /** With no refusal for this long, the next one starts from {@link baseMs} again. */
  readonly quietMs: number;
  /** Each block is lengthened by up to this share of itself, at random. */
  readonly jitter: number;
}

/** The curve IP authorities use. */
export const IP_BACK_OFF: BackOffCurve = { baseMs: 1_000, capMs: 120_000, quietMs: 300_000, jitter: 0.25 };

/** One address's back-off: when it is blocked until, and the step of its next incident. */
export class ServerBackOff {
  private stepMs = 0;
  private lastIncidentAtMs = Number.NEGATIVE_INFINITY;
  private blockedUntil = 0;

  /** @param random a number in [0, 1), for the jitter (injected: tests pass a fixed one). */
  constructor(
    private readonly curve: BackOffCurve,
    private readonly random: () => number,
  ) {}

  /** Until when no request may start to the address (0: never blocked). */
  get blockedUntilMs(): number {
    return this.blockedUntil;
  }

  /** True when nothing of it is left to remember at `nowMs`: not blocked, and quiet long enough to start over. */
  forgettable(nowMs: number): boolean {
    return nowMs >= this.blockedUntil && nowMs - this.lastIncidentAtMs > this.curve.quietMs;
  }

  /**
   * The server refused a request at `nowMs`, asking to wait `retryAfterMs` (undefined: it did not
   * say); returns the end of the block.
   */
  refused(nowMs: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) {
      this.blockedUntil = Math.max(this.blockedUntil, nowMs + retryAfterMs);
      this.lastIncidentAtMs = nowMs;
      return this.blockedUntil;
    }
    if (nowMs < this.blockedUntil) return this.blockedUntil; // the same incident
    const { baseMs, capMs, quietMs, jitter } = this.curve;
    this.stepMs =
      this.stepMs === 0 || nowMs - this.lastIncidentAtMs > quietMs
        ? baseMs
        : Math.min(this.stepMs * 2, capMs);
    this.lastIncidentAtMs = nowMs;
    this.blockedUntil = nowMs + Math.round(this.stepMs * (1 + jitter * this.random()));
    return this.blockedUntil;
  }
}
