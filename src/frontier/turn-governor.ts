import type { Clock, TimerHandle } from "../clock.js";
import type { PageTurns } from "./page-turns.js";

/** Options of a {@link TurnGovernor}. */
export interface TurnGovernorOptions {
  /** The fewest turns: enough pages in progress to keep the CPU busy on the fastest servers. */
  readonly floor: number;
  /** The most turns: as many pages as the agent's hosts can have in progress (then turns never wait). */
  readonly ceiling: number;
  /** How often the event loop's utilization is read, ms. */
  readonly intervalMs: number;
}

/**
 * @default {@link TurnGovernorOptions} but the ceiling. The floor was measured (bench/scaling.mjs, one
 * and two agents on a 0 ms server): with 4 or 32 turns a CPU-bound agent crawled 20–30 % slower and spent
 * more CPU a page than with 96 — pages in progress are also what each group commit and each message to
 * the WARC worker gather —, and 160 was no faster than 96.
 */
export const TURN_GOVERNOR_DEFAULTS = { floor: 96, intervalMs: 500 } as const;

/**
 * The event loop's mean delay (ms) the governor aims at. Every wait of a page for the network or a
 * thread costs a host about one loop delay, so a host's pages come a few delays apart: at 2 ms the
 * biggest host of a CPU-bound crawl still gets a page every few ms, and the loop is still busy.
 */
const TARGET_DELAY_MS = 2;
/**
 * Turns go down only while the loop is also busy this share of its time or more: a loop that waits
 * long for its callbacks because other processes hold the CPU, while it mostly waits for the network
 * itself, needs every turn it has.
 */
const BUSY = 0.8;
/** Below this share of its time busy, the loop has room whatever its delay: turns may grow. */
const ROOMY = 0.6;
/** A saturated loop's turns become this share of the most it used in the last interval. */
const DECREASE = 0.75;

/** How loaded the event loop was over an interval. */
export interface LoopLoad {
  /** Mean delay (ms) of a callback waiting for the loop. */
  readonly delayMs: number;
  /** Share of the time (0..1) the loop was running callbacks rather than waiting for events. */
  readonly utilization: number;
}

/** What a {@link TurnGovernor} needs. */
export interface TurnGovernorDeps {
  readonly turns: Pick<PageTurns, "limit" | "setLimit" | "takePeak">;
  /** How the event loop did since the last call. */
  readonly loop: () => LoopLoad;
  readonly clock: Clock;
}

/**
 * Sets the number of {@link PageTurns} from the event loop's delay, as a delay-based congestion control
 * sets its window (multiplicative decrease, additive increase, aiming at a queueing delay): while
 * callbacks wait longer than {@link TARGET_DELAY_MS} for the loop, the CPU is the bottleneck, so fewer
 * pages in progress cost no throughput, and they cut the wait of the biggest hosts' every step; while
 * the loop has room, the turns grow back towards the ceiling, where no host ever waits for one (slow
 * servers, polite delays: the usual web).
 */
export class TurnGovernor {
  private timer: TimerHandle | undefined;
  private ceiling: number;

  constructor(
    private readonly deps: TurnGovernorDeps,
    private readonly options: TurnGovernorOptions,
  ) {
    this.ceiling = Math.max(options.floor, options.ceiling);
  }

  /** Reads the loop's delay every interval from now on. */
  start(): void {
    if (this.timer !== undefined) return;
    this.deps.loop();
    const tick = () => {
      this.adjust(this.deps.loop());
      this.timer = this.deps.clock.setTimeout(tick, this.options.intervalMs);
    };
    this.timer = this.deps.clock.setTimeout(tick, this.options.intervalMs);
  }

  /** Stops reading; the turns keep their last limit. */
  stop(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Changes the ceiling (an operator changed the hosts visited at once); the limit stays under it. */
  setCeiling(ceiling: number): void {
    this.ceiling = Math.max(this.options.floor, ceiling);
    if (this.deps.turns.limit > this.ceiling) this.deps.turns.setLimit(this.ceiling);
  }

  /** One step, from how the loop did over the last interval. */
  adjust({ delayMs, utilization }: LoopLoad): void {
    const { turns } = this.deps;
    const peak = turns.takePeak();
    const { floor } = this.options;
    if (delayMs > TARGET_DELAY_MS && utilization >= BUSY) {
      const target = Math.max(floor, Math.floor(Math.min(turns.limit, peak) * DECREASE));
      if (target < turns.limit) turns.setLimit(target);
    } else if (
      (delayMs < TARGET_DELAY_MS / 2 || utilization < ROOMY) &&
      peak >= turns.limit &&
      turns.limit < this.ceiling
    ) {
      turns.setLimit(Math.min(this.ceiling, turns.limit + Math.max(floor, Math.ceil(turns.limit / 4))));
    }
  }
}
