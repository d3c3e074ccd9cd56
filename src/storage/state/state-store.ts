import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AbstractBatchOperation, AbstractSublevel } from "abstract-level";
import { Level } from "level";
import { ErrorCode, errorMessage, UbiError } from "../../errors.js";
import type { KeyRange, RangeReader, StateOp, StateReader } from "./key-range.js";
import { corruptStateError, damageReported, isCorruption } from "./state-damage.js";

/**
 * Table files LevelDB keeps open (its default is 1,000). It reads them through mmap, and the pages it
 * touched count in this process's RSS until the table is closed: with 1,000 open tables a 10 M-URL
 * frontier showed 140-156 MiB of mapped tables after reading queue windows and 1.2 GB of RSS after a
 * reopen; with 100, 45 MiB and 949 MiB (`bench/frontier.mjs`).
 */
const MAX_OPEN_TABLES = 100;

type Sub = AbstractSublevel<Level<string, string>, string | Buffer | Uint8Array, string, string>;
/** One operation of an array batch, on one of the sublevels. */
type BatchOp = AbstractBatchOperation<Level<string, string>, string, string>;

/**
 * The options of every batch: synced (a commit is durable once written), with `sync` an own property
 * that is not enumerable. abstract-level 3 copies a batch's options into each of its operations
 * (`{ ...options, ...op }`); with an enumerable `sync`, Node 20's V8 takes a slow path for that copy,
 * ~1.7 KB of heap an operation (~0.14 KB with no options), much of it promoted to the old space: the
 * frontier bench's 10 M URLs peaked at 593 MiB with `{ sync: true }`, 465 with this (bench/README
 * "Frontier memory"). A spread skips a property that is not enumerable, and classic-level still finds
 * it (`napi_has_named_property`, the `in` operator's lookup).
 */
const SYNCED: { readonly sync: true } = Object.freeze(
  Object.defineProperty({}, "sync", { value: true, enumerable: false }) as { sync: true },
);

/**
 * The agent's durable local state in one LevelDB folder, split in key ranges (sublevels), each owned
 * by one part of the agent, which encodes its keys and values and builds its own operations
 * (`./key-range.ts`). Every change goes through {@link StateStore.write}, one atomic batch of any
 * owners' operations, so a SIGKILL leaves either all of a fetch's consequences on disk or none.
 */
export class StateStore implements StateReader {
  /** The sublevel of each range read or written so far, by name. */
  private readonly sublevels = new Map<string, Sub>();

  private constructor(
    private readonly db: Level<string, string>,
    /**
     * What LevelDB reported dropped while it recovered its log at this open (a torn or scribbled
     * write-ahead log), in its words; empty when nothing was. See {@link damageReported}.
     */
    readonly damageAtOpen: readonly string[] = [],
  ) {}

  /**
   * Opens (creating if needed) the store in `dir`; rejects with `DataDirInUse` while another process
   * has it open, `StorageCorrupt` when LevelDB finds it damaged, `StorageFailed` for any other failure.
   */
  static async open(dir: string): Promise<StateStore> {
    try {
      await mkdir(dir, { recursive: true });
      const db = new Level<string, string>(dir, {
        keyEncoding: "utf8",
        valueEncoding: "utf8",
        maxOpenFiles: MAX_OPEN_TABLES,
      });
      await db.open();
      return new StateStore(db, await damageReported(dir));
    } catch (error) {
      if (isCorruption(error)) throw corruptStateError(error, dir, dirname(dir));
      // abstract-level wraps the binding's LEVEL_LOCKED in a generic "Database failed to open".
      if ((error as { cause?: { code?: unknown } }).cause?.code === "LEVEL_LOCKED") {
        throw new UbiError(
          ErrorCode.DataDirInUse,
          `${dir} is in use by another running agent (LevelDB's lock ${join(dir, "LOCK")} is held): ` +
            "stop that agent first, or give this one its own --data folder",
          { cause: error },
        );
      }
      throw new UbiError(
        ErrorCode.StorageFailed,
        `cannot open the state store in ${dir}: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** The reader of `range`'s keys (its sublevel). */
  range(range: KeyRange): RangeReader {
    return this.sublevel(range);
  }

  /**
   * Applies `ops` atomically and durably, in order (a later write of the same key wins): resolves once
   * LevelDB's log is synced to the disk.
   */
  async write(ops: readonly StateOp[]): Promise<void> {
    if (ops.length === 0) return;
    try {
      const batch: BatchOp[] = ops.map((op) =>
        op.type === "put"
          ? { type: "put", key: op.key, value: op.value, sublevel: this.sublevel(op.range) }
          : { type: "del", key: op.key, sublevel: this.sublevel(op.range) },
      );
      // The array form, not a chained batch: classic-level frees a chained batch's native copy of every
      // key and value only when V8 collects it, and V8 does not know that memory is there, so under a
      // steady load it piles up in the malloc heap. SYNCED, not `{ sync: true }`: see its doc.
      await this.db.batch(batch, SYNCED);
    } catch (error) {
      throw new UbiError(ErrorCode.StorageFailed, `cannot write the state store: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }

  /** Closes the database; idempotent. */
  async close(): Promise<void> {
    if (this.db.status === "open" || this.db.status === "opening") await this.db.close();
  }

  private sublevel(range: KeyRange): Sub {
    let sublevel = this.sublevels.get(range.name);
    if (sublevel === undefined) {
      sublevel = this.db.sublevel<string, string>(range.name, { keyEncoding: "utf8", valueEncoding: "utf8" });
      this.sublevels.set(range.name, sublevel);
    }
    return sublevel;
  }
}
