import { keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";

/** The robots.txt cache's snapshots: range `r`, key the origin, value the snapshot as JSON. */
const ROBOTS = keyRange("r");

/** The operation that stores `origin`'s robots.txt snapshot (an opaque JSON value). */
export function robotsSnapshotOp(origin: string, snapshot: unknown): StateOp {
  return putOp(ROBOTS, origin, JSON.stringify(snapshot));
}

/** Every stored robots.txt snapshot, in origin order. */
export async function* robotsSnapshots(store: StateReader): AsyncGenerator<unknown> {
  for await (const value of store.range(ROBOTS).values()) yield JSON.parse(value);
}
