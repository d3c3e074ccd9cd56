import { delOp, keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";
import { decodeQueuedUrl, encodeQueuedUrl, type QueuedUrl } from "./queued-url.js";
import { scopeBounds, scopedFingerprintKey, splitScopedFingerprintKey } from "./state-keys.js";

/**
 * The URL exchange's outbox, URLs handed to other agents (and pseudo-peers) until they take them:
 * range `o`, key `peer NUL fingerprint`, value a {@link encodeQueuedUrl} entry.
 */
const OUTBOX = keyRange("o");

/** One URL of the outbox. */
export interface OutboxEntry {
  /** The agent (or pseudo-peer) it is handed to. */
  readonly peer: string;
  /** Its URL's fingerprint. */
  readonly fingerprint: bigint;
  /** The URL. */
  readonly entry: QueuedUrl;
}

/** The operation that hands `entry` (whose URL has this fingerprint) to `peer`. */
export function outboxOp(peer: string, fingerprint: bigint, entry: QueuedUrl): StateOp {
  return putOp(OUTBOX, scopedFingerprintKey(peer, fingerprint), encodeQueuedUrl(entry));
}

/** The operation that takes the URL with this fingerprint out of `peer`'s outbox. */
export function outboxDoneOp(peer: string, fingerprint: bigint): StateOp {
  return delOp(OUTBOX, scopedFingerprintKey(peer, fingerprint));
}

/** The agents (and pseudo-peers) with an outbox entry, in key order: one seek per peer, not a scan. */
export async function outboxPeers(store: StateReader): Promise<string[]> {
  const peers: string[] = [];
  const iterator = store.range(OUTBOX).keys();
  try {
    for (let key = await iterator.next(); key !== undefined; key = await iterator.next()) {
      const { scope: peer } = splitScopedFingerprintKey(key);
      peers.push(peer);
      iterator.seek(scopeBounds(peer).lt);
    }
  } finally {
    await iterator.close();
  }
  return peers;
}

/** The outbox entries of `peer` (of every peer when omitted), in key order. */
export async function* outboxEntries(store: StateReader, peer?: string): AsyncGenerator<OutboxEntry> {
  const range = peer === undefined ? {} : scopeBounds(peer);
  for await (const [key, value] of store.range(OUTBOX).iterator(range)) {
    const { scope, fingerprint } = splitScopedFingerprintKey(key);
    yield { peer: scope, fingerprint, entry: decodeQueuedUrl(value) };
  }
}
