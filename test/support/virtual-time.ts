import { ManualClock } from "./manual-clock.js";

/** How far virtual time moves each turn of the event loop, ms, unless told otherwise. */
const DEFAULT_STEP_MS = 20;

/**
 * Virtual time for whole clusters in one process: a {@link ManualClock} moved `stepMs` forward on every
 * turn of a loop that yields a millisecond's timer between turns, for as long as it runs. Every part
 * that takes the clock as a dependency (heartbeats, suspicion, the takeover grace, politeness delays,
 * grants, the in-memory network's delays and deadlines) then waits turns, not milliseconds: at most
 * `stepMs` times faster than real time. The timer, not `setImmediate`, paces it: real I/O (loopback
 * HTTP, LevelDB) takes real time, and a loop racing it would spin a core and run fetch deadlines out on
 * the injected clock while a response is on its way. Not deterministic (I/O interleaves as it
 * completes), only fast.
 */
export class VirtualTime {
  readonly clock: ManualClock;
  private running = false;
  private elapsed = 0;
  private stepMs: number;

  constructor(private readonly defaultStepMs = DEFAULT_STEP_MS) {
    this.stepMs = defaultStepMs;
    this.clock = new ManualClock(Date.now());
  }

  /** Virtual time passed since {@link start}, ms. */
  get elapsedMs(): number {
    return this.elapsed;
  }

  /**
   * Moves `stepMs` a turn from now on: 1 for about real time (turns take a millisecond or more), over a
   * stretch that must take little protocol time however long the machine takes (a restart "at once");
   * without one, back to the step it was made with.
   */
  pace(stepMs = this.defaultStepMs): void {
    this.stepMs = stepMs;
  }

  /** Starts moving time (nothing before: a clock made for parts not started yet stands still). */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.run();
  }

  /** Stops moving time; timers pending stay pending. */
  stop(): void {
    this.running = false;
  }

  private async run(): Promise<void> {
    while (this.running) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (!this.running) return;
      this.clock.advance(this.stepMs);
      this.elapsed += this.stepMs;
    }
  }
}
