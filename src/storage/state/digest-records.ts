import { delOp, keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";

/**
 * The payload digests this agent owns, with the response that first stored each: range `d`, key the
 * digest, value `[url, date, recordId]` as JSON.
 */
const DIGESTS = keyRange("d");

/**
 * The first stored response with a given payload digest: what a WARC `revisit` record of the same
 * payload refers to (`WARC-Refers-To-Target-URI`, `-Date`, `WARC-Refers-To`).
 */
export interface PayloadOriginal {
  /** The response's `WARC-Target-URI`. */
  readonly url: string;
  /** Its `WARC-Date`, as written (ISO 8601, UTC). */
  readonly date: string;
  /** Its `WARC-Record-ID`. */
  readonly recordId: string;
}

/** The operation that records `original` as the first response stored with payload `digest`. */
export function digestOp(digest: string, original: PayloadOriginal): StateOp {
  return putOp(DIGESTS, digest, JSON.stringify([original.url, original.date, original.recordId]));
}

/** The operation that forgets `digest`'s first response (lost): the next copy is stored whole. */
export function digestForgetOp(digest: string): StateOp {
  return delOp(DIGESTS, digest);
}

/** Calls `visit` with every payload digest recorded, in order. */
export async function forEachPayloadDigest(
  store: StateReader,
  visit: (digest: string) => void,
): Promise<void> {
  for await (const key of store.range(DIGESTS).keys()) visit(key);
}

/** For each payload digest, the response that first stored it, if recorded. */
export async function payloadOriginals(
  store: StateReader,
  digests: readonly string[],
): Promise<(PayloadOriginal | undefined)[]> {
  if (digests.length === 0) return [];
  const values = await store.range(DIGESTS).getMany([...digests]);
  return values.map((value) => {
    if (value === undefined) return undefined;
    const [url, date, recordId] = JSON.parse(value) as [string, string, string];
    return { url, date, recordId };
  });
}
