import type { AbstractSublevel } from "abstract-level";
import type { Level } from "level";
import { ErrorCode, UbiError } from "../../errors.js";

/**
 * Key ranges and batch operations, after abstract-level's sublevels: each owner of state (the frontier's
 * queues, the outbox, the payload digests, …) claims a range of the store's keys and builds its own
 * operations on it, which one atomic batch gathers from every owner. The store applies operations; it
 * knows no owner's keys or values.
 */

/** Brands a {@link KeyRange}: only {@link keyRange} makes one, so a literal `{ name }` skips no claim check. */
declare const claimed: unique symbol;

/**
 * One owner's range of the store's keys: a LevelDB sublevel, whose keys are stored as `!name!key`.
 * Claimed once per process with {@link keyRange}; its name is part of the on-disk format.
 */
export interface KeyRange {
  /** The sublevel's name. */
  readonly name: string;
  readonly [claimed]: true;
}

/** One write of an atomic batch: a put or a delete of one key in one owner's range (UTF-8 strings). */
export type StateOp =
  | { readonly type: "put"; readonly range: KeyRange; readonly key: string; readonly value: string }
  | { readonly type: "del"; readonly range: KeyRange; readonly key: string };

/** What an owner reads of its range: abstract-level's read methods of a sublevel. */
export type RangeReader = Pick<
  AbstractSublevel<Level<string, string>, string | Buffer | Uint8Array, string, string>,
  "get" | "getMany" | "iterator" | "keys" | "values"
>;

/** The store as the owners of ranges read it. */
export interface StateReader {
  /** The reader of `range`'s keys. */
  range(range: KeyRange): RangeReader;
}

/** Entries an owner's range scan asks an iterator for at once. */
export const SCAN_CHUNK = 1000;

/** Names claimed so far in this process: two owners of one range would read each other's keys. */
const claimedNames = new Set<string>();

/**
 * Claims the range `name` for its owner (a module-level constant of the owner's module). Throws
 * `InvalidArgument` for a name claimed already, empty, or holding the sublevel separator `!`.
 */
export function keyRange(name: string): KeyRange {
  if (name === "" || name.includes("!")) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `key range name ${JSON.stringify(name)} is empty or holds "!"`,
    );
  }
  if (claimedNames.has(name)) {
    throw new UbiError(ErrorCode.InvalidArgument, `key range ${JSON.stringify(name)} is claimed already`);
  }
  claimedNames.add(name);
  return Object.freeze({ name }) as KeyRange;
}

/** The operation that sets `key` of `range` to `value`. */
export function putOp(range: KeyRange, key: string, value: string): StateOp {
  return { type: "put", range, key, value };
}

/** The operation that deletes `key` of `range`. */
export function delOp(range: KeyRange, key: string): StateOp {
  return { type: "del", range, key };
}
