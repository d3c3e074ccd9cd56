import { keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";

/**
 * The agent's metadata: range `m`, named values (counters, the WARC files' records, …), whose keys and
 * values their writers choose.
 */
const META = keyRange("m");

/** The operation that sets metadata `key` to `value`. */
export function metaOp(key: string, value: string): StateOp {
  return putOp(META, key, value);
}

/** The metadata value of `key`, or undefined. */
export async function getMeta(store: StateReader, key: string): Promise<string | undefined> {
  return store.range(META).get(key);
}

/** Every metadata record whose key starts with `prefix`, in key order. */
export async function* metaEntries(
  store: StateReader,
  prefix: string,
): AsyncGenerator<[key: string, value: string]> {
  yield* store.range(META).iterator({ gte: prefix, lt: `${prefix}\uffff` });
}
