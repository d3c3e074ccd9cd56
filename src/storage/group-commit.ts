import type { StateOp } from "./state/key-range.js";

/**
 * Group commit: callers add ops and await {@link GroupCommit.commit}; while one batch is being written,
 * new ops accumulate and go out together in the next batch. Throughput adapts to the disk without a
 * timer, and each caller still learns when its own ops are durable.
 *
 * A failed write loses nothing: its ops are put back in front of the pending ones, the callers of that
 * batch get the error, and the next commit writes them again.
 */
export class GroupCommit {
  private pending: StateOp[] = [];
  private writing: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private readonly contributors: Array<(ops: StateOp[]) => void> = [];
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly write: (ops: readonly StateOp[]) => Promise<void>) {}

  /** Registers a function called just before each batch is written, to add ops for dirty in-memory state. */
  beforeWrite(contributor: (ops: StateOp[]) => void): void {
    this.contributors.push(contributor);
  }

  /** Registers a function called after each batch has been written (durable), before its callers resume. */
  afterWrite(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Queues ops for the next batch, in order. */
  add(...ops: StateOp[]): void {
    for (const op of ops) this.pending.push(op);
  }

  /** Number of ops waiting for a batch. */
  get pendingOps(): number {
    return this.pending.length;
  }

  /** Resolves when every op added before this call is durable. */
  commit(): Promise<void> {
    if (!this.writing) {
      this.writing = this.writeNow();
      return this.writing;
    }
    this.next ??= this.writing.then(
      () => this.commit(),
      () => this.commit(),
    );
    return this.next;
  }

  private async writeNow(): Promise<void> {
    const ops = this.pending;
    this.pending = [];
    for (const contribute of this.contributors) contribute(ops);
    try {
      await this.write(ops);
      for (const listener of this.listeners) listener();
    } catch (error) {
      this.pending = ops.concat(this.pending);
      throw error;
    } finally {
      this.writing = undefined;
      this.next = undefined;
    }
  }
}
