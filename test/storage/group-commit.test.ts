import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { GroupCommit } from "../../src/storage/group-commit.js";
import { forEachSeen, metaOp, type StateOp, StateStore, seenOp } from "../../src/storage/index.js";

/** A write function whose calls the test finishes by hand, recording each batch. */
class ManualWriter {
  readonly batches: StateOp[][] = [];
  private readonly settle: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  /** Every batch written successfully, in order. */
  readonly durable: StateOp[][] = [];

  readonly write = (ops: readonly StateOp[]): Promise<void> => {
    const batch = [...ops];
    this.batches.push(batch);
    return new Promise<void>((resolve, reject) => {
      this.settle.push({
        resolve: () => {
          this.durable.push(batch);
          resolve();
        },
        reject,
      });
    });
  };

  get calls(): number {
    return this.batches.length;
  }

  /** Finishes the oldest unfinished write. */
  finish(): void {
    const next = this.settle.shift();
    if (!next) throw new Error("no write in progress");
    next.resolve();
  }

  /** Fails the oldest unfinished write. */
  fail(error: Error): void {
    const next = this.settle.shift();
    if (!next) throw new Error("no write in progress");
    next.reject(error);
  }
}

/** Lets pending promise callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function seen(n: number): StateOp {
  return seenOp(BigInt(n));
}

function fingerprintsOf(ops: readonly StateOp[]): number[] {
  return ops.flatMap((op) => (op.range.name === "s" ? [Number.parseInt(op.key, 16)] : []));
}

/** Tracks whether a promise has settled, without awaiting it. */
function track(promise: Promise<void>): { done: boolean; error: unknown } {
  const state = { done: false, error: undefined as unknown };
  promise.then(
    () => {
      state.done = true;
    },
    (error: unknown) => {
      state.done = true;
      state.error = error;
    },
  );
  return state;
}

describe("GroupCommit", () => {
  it("writes the pending ops at once when idle and resolves after the write", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    group.add(seen(1));
    group.add(seen(2));
    expect(group.pendingOps).toBe(2);
    const state = track(group.commit());
    expect(writer.calls).toBe(1);
    expect(fingerprintsOf(writer.batches[0] ?? [])).toEqual([1, 2]);
    expect(group.pendingOps).toBe(0);
    await flush();
    expect(state.done).toBe(false);
    writer.finish();
    await flush();
    expect(state).toEqual({ done: true, error: undefined });
  });

  it("coalesces many concurrent commits into few writes and resolves each after its ops are durable", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    const callers: Array<{ op: number; state: { done: boolean; error: unknown } }> = [];
    for (let i = 0; i < 100; i++) {
      group.add(seen(i));
      callers.push({ op: i, state: track(group.commit()) });
    }
    // The first commit wrote op 0 alone; the 99 others wait for one shared second batch.
    expect(writer.calls).toBe(1);
    expect(group.pendingOps).toBe(99);
    writer.finish();
    await flush();
    expect(callers[0]?.state.done).toBe(true);
    expect(callers.slice(1).some((c) => c.state.done)).toBe(false);
    expect(writer.calls).toBe(2);
    expect(fingerprintsOf(writer.batches[1] ?? [])).toEqual(Array.from({ length: 99 }, (_, i) => i + 1));
    writer.finish();
    await flush();
    expect(writer.calls).toBe(2);
    // Every caller resolved, and only once its op was in a finished batch.
    const durable = new Set(writer.durable.flatMap(fingerprintsOf));
    for (const caller of callers) {
      expect(caller.state).toEqual({ done: true, error: undefined });
      expect(durable.has(caller.op)).toBe(true);
    }
  });

  it("puts ops added during a write in the next batch", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    group.add(seen(1));
    const first = track(group.commit());
    group.add(seen(2));
    group.add(seen(3));
    expect(group.pendingOps).toBe(2);
    const second = track(group.commit());
    writer.finish();
    await flush();
    expect(first.done).toBe(true);
    expect(second.done).toBe(false);
    expect(writer.batches.map(fingerprintsOf)).toEqual([[1], [2, 3]]);
    writer.finish();
    await flush();
    expect(second).toEqual({ done: true, error: undefined });
  });

  it("rejects the callers of a failed write and writes its ops again in the next commit", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    group.add(seen(1));
    group.add(seen(2));
    const failed = track(group.commit());
    group.add(seen(3)); // added during the failing write
    const boom = new Error("disk full");
    writer.fail(boom);
    await flush();
    expect(failed.error).toBe(boom);
    // Nothing lost: the failed ops come back in front of the newer ones.
    expect(group.pendingOps).toBe(3);
    expect(writer.calls).toBe(1);
    const retry = track(group.commit());
    expect(fingerprintsOf(writer.batches[1] ?? [])).toEqual([1, 2, 3]);
    writer.finish();
    await flush();
    expect(retry).toEqual({ done: true, error: undefined });
    expect(group.pendingOps).toBe(0);
  });

  it("retries for callers that were waiting on a failed write", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    group.add(seen(1));
    const first = track(group.commit());
    group.add(seen(2));
    const waiting = track(group.commit());
    writer.fail(new Error("transient"));
    await flush();
    expect(first.error).toBeInstanceOf(Error);
    // The waiting caller's commit started a new batch with both ops rather than failing too.
    expect(waiting.done).toBe(false);
    expect(writer.calls).toBe(2);
    expect(fingerprintsOf(writer.batches[1] ?? [])).toEqual([1, 2]);
    writer.finish();
    await flush();
    expect(waiting).toEqual({ done: true, error: undefined });
  });

  it("runs beforeWrite contributors once per batch, their ops written in that batch", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    let dirty: number[] = [];
    let calls = 0;
    group.beforeWrite((ops) => {
      calls++;
      for (const n of dirty) ops.push(metaOp(`dirty-${n}`, String(calls)));
      dirty = [];
    });
    dirty.push(7);
    group.add(seen(1));
    const a = track(group.commit());
    expect(calls).toBe(1);
    dirty.push(8);
    const b = track(group.commit());
    const c = track(group.commit());
    expect(calls).toBe(1); // b and c wait for the next batch; nothing runs until it starts
    writer.finish();
    await flush();
    expect(calls).toBe(2);
    writer.finish();
    await flush();
    expect([a.done, b.done, c.done]).toEqual([true, true, true]);
    expect(writer.batches).toEqual([[seen(1), metaOp("dirty-7", "1")], [metaOp("dirty-8", "2")]]);
  });

  it("runs afterWrite listeners once a batch is durable, before its callers resume, and never for a failed one", async () => {
    const writer = new ManualWriter();
    const group = new GroupCommit(writer.write);
    const events: string[] = [];
    group.afterWrite(() => events.push(`written ${writer.durable.length}`));
    group.add(seen(1));
    const failing = group.commit().catch(() => events.push("caller saw the failure"));
    writer.fail(new Error("disk full"));
    await failing;
    expect(events).toEqual(["caller saw the failure"]);
    const ok = group.commit().then(() => events.push("caller resumed"));
    expect(events).toEqual(["caller saw the failure"]);
    writer.finish();
    await ok;
    expect(events).toEqual(["caller saw the failure", "written 1", "caller resumed"]);
  });

  it("lets every caller see its ops durable in a real store", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ubicrawl-group-"));
    const store = await StateStore.open(dir);
    try {
      let writes = 0;
      const group = new GroupCommit((ops) => {
        writes++;
        return store.write(ops);
      });
      const commits: Array<Promise<void>> = [];
      for (let i = 1; i <= 200; i++) {
        group.add(seen(i));
        commits.push(
          group.commit().then(async () => {
            // When a caller's commit resolves, its own op is readable.
            const found: bigint[] = [];
            await forEachSeen(store, (fp) => found.push(fp));
            expect(found).toContain(BigInt(i));
          }),
        );
      }
      await Promise.all(commits);
      expect(writes).toBeLessThan(10);
      let count = 0;
      await forEachSeen(store, () => count++);
      expect(count).toBe(200);
      // A write to a closed store fails with StorageFailed and keeps the ops for later.
      await store.close();
      group.add(seen(999));
      const error = await group.commit().then(
        () => expect.unreachable("expected a rejection"),
        (reason: unknown) => reason,
      );
      expect(isUbiError(error, ErrorCode.StorageFailed)).toBe(true);
      expect(group.pendingOps).toBe(1);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
