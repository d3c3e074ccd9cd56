import { delOp, keyRange, putOp, SCAN_CHUNK, type StateOp, type StateReader } from "./key-range.js";
import { decodeQueuedUrl, encodeQueuedUrl, type QueuedUrl } from "./queued-url.js";
import { SCOPE_SEP } from "./state-keys.js";

/**
 * The frontier's per-host URL queues: range `q`, key `host NUL seq` with the sequence number in 12
 * fixed-width hex digits (so a host's entries sort by number), value a {@link encodeQueuedUrl} entry.
 */
const QUEUE = keyRange("q");

/** Queue reads up to this many entries are point reads ({@link readQueue}). */
const POINT_READ_MAX = 1024;
/** One queue entry as stored: its sequence number within the host's queue and the URL. */
export interface StoredQueueEntry extends QueuedUrl {
  readonly seq: number;
}

/** The key of `host`'s entry `seq`. */
function seqKey(host: string, seq: number): string {
  return host + SCOPE_SEP + seq.toString(16).padStart(12, "0");
}

/** The operation that queues `entry` as `host`'s entry `seq`. */
export function enqueueOp(host: string, seq: number, entry: QueuedUrl): StateOp {
  return putOp(QUEUE, seqKey(host, seq), encodeQueuedUrl(entry));
}

/** The operation that takes `host`'s entry `seq` off its queue. */
export function dequeueOp(host: string, seq: number): StateOp {
  return delOp(QUEUE, seqKey(host, seq));
}

/**
 * Reads up to `limit` queue entries of `host` with sequence number ≥ `fromSeq`, in order. `endSeq`
 * (the host's next sequence number, when the caller knows it) bounds the read.
 */
export async function readQueue(
  store: StateReader,
  host: string,
  fromSeq: number,
  limit: number,
  endSeq = Number.MAX_SAFE_INTEGER,
): Promise<StoredQueueEntry[]> {
  const count = Math.min(limit, endSeq - fromSeq);
  if (count <= 0) return [];
  if (count > POINT_READ_MAX) return scanQueue(store, host, fromSeq, limit);
  // Point reads by key, not an iterator: classic-level keeps an iterator's native read buffer (room
  // for 1,000 entries, ~64 KB, and the last entries read) until V8 collects the iterator object, and
  // V8, unaware of that memory, rarely does: window loads piled up ~120 MB of RSS in 4,000 loads.
  // A host's queue is contiguous from its read position except after a put-back and a restart.
  const seqs = Array.from({ length: count }, (_, i) => fromSeq + i);
  const values = await store.range(QUEUE).getMany(seqs.map((seq) => seqKey(host, seq)));
  const entries: StoredQueueEntry[] = [];
  for (const [i, value] of values.entries()) {
    if (value === undefined) {
      // A hole (or the queue's end, when `endSeq` was not given): the rest comes from a range scan.
      const rest = await scanQueue(store, host, fromSeq + i, limit - i);
      for (const entry of rest) entries.push(entry);
      return entries;
    }
    entries.push({ seq: fromSeq + i, ...decodeQueuedUrl(value) });
  }
  return entries;
}

/** A range scan of `host`'s queue; the iterator is read in one `nextv` per chunk and closed at once. */
async function scanQueue(
  store: StateReader,
  host: string,
  fromSeq: number,
  limit: number,
): Promise<StoredQueueEntry[]> {
  const entries: StoredQueueEntry[] = [];
  const iterator = store
    .range(QUEUE)
    .iterator({ gte: seqKey(host, fromSeq), lt: `${host}${SCOPE_SEP}g`, limit });
  try {
    while (entries.length < limit) {
      // Asking for no more than needed keeps the native buffer (reserved for that many) small.
      const chunk = await iterator.nextv(Math.min(SCAN_CHUNK, limit - entries.length));
      if (chunk.length === 0) break;
      for (const [key, value] of chunk) {
        const seq = Number.parseInt(key.slice(host.length + 1), 16);
        entries.push({ seq, ...decodeQueuedUrl(value) });
      }
    }
  } finally {
    await iterator.close();
  }
  return entries;
}

/** Counts each host's queued entries and finds its lowest sequence number (used once at startup). */
export async function scanQueues(
  store: StateReader,
): Promise<Map<string, { count: number; headSeq: number }>> {
  const result = new Map<string, { count: number; headSeq: number }>();
  for await (const key of store.range(QUEUE).keys()) {
    const sep = key.lastIndexOf(SCOPE_SEP);
    const host = key.slice(0, sep);
    const found = result.get(host);
    if (found) found.count++;
    else result.set(host, { count: 1, headSeq: Number.parseInt(key.slice(sep + 1), 16) });
  }
  return result;
}
