import type { Clock, TimerHandle } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { Logger } from "../logging/index.js";

/** What a {@link StorageGuard} needs. */
export interface StorageGuardDeps {
  readonly clock: Clock;
  /** Stops and restarts fetching. */
  readonly pause: () => void;
  readonly resume: () => void;
  /** Tries every pending write again (state store, WARC, log); rejects while the disk still refuses. */
  readonly retryWrites: () => Promise<void>;
  /** Where to tell the operator. */
  readonly logger: Logger;
}

/** How often writes are tried again while the disk refuses them. */
export const STORAGE_RETRY_MS = 5_000;

/**
 * Keeps a full or unwritable disk from losing anything: on the first storage failure fetching stops
 * (nothing more is fetched that could not be recorded), the operator is told why, and writes are tried
 * again every few seconds; once they succeed, fetching resumes where it stopped.
 */
export class StorageGuard {
  private timer: TimerHandle | undefined;
  private failures = 0;

  constructor(private readonly deps: StorageGuardDeps) {}

  /** True while fetching is stopped because writes fail. */
  get isDown(): boolean {
    return this.timer !== undefined;
  }

  /** Storage failures seen (each stop counts once). */
  get outages(): number {
    return this.failures;
  }

  /** Handles an error of the pipeline; returns true when it was a storage failure (and is handled). */
  handle(error: unknown): boolean {
    if (!isUbiError(error, ErrorCode.StorageFailed)) return false;
    if (this.isDown) return true;
    this.failures++;
    this.deps.pause();
    this.deps.logger.error(
      { event: "storage-down", code: error.code },
      `${error.message}; fetching stopped, nothing is lost — retrying every ${STORAGE_RETRY_MS / 1000} s until the disk takes writes again`,
    );
    this.schedule();
    return true;
  }

  /** Stops retrying (the agent is stopping). */
  stop(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = this.deps.clock.setTimeout(() => {
      this.deps.retryWrites().then(
        () => {
          this.timer = undefined;
          this.deps.logger.warn({ event: "storage-up" }, "writes succeed again; fetching resumed");
          this.deps.resume();
        },
        () => this.schedule(),
      );
    }, STORAGE_RETRY_MS);
  }
}
