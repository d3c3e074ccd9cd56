import { keyRange, putOp, type StateOp, type StateReader } from "./key-range.js";

/** The frontier's host records: range `h`, key the host, value the record as JSON. */
const HOSTS = keyRange("h");

/** The durable part of a host's state, written whenever it changes in a commit. */
export interface HostRecord {
  /** Sequence number the next queued URL of this host gets. */
  nextSeq: number;
  /** Pages fetched (every fetch except robots.txt), for the per-host page limit. */
  fetched: number;
  /** Set once the host is given up on (e.g. robots.txt unavailable too long), with the reason. */
  abandoned?: string;
  /**
   * Set when the host's queue may hold URLs done already (handed back after a peer died, or done by a
   * previous owner): each is checked against the done set before its fetch.
   */
  recheck?: boolean;
}

/** The operation that writes `host`'s record. */
export function hostRecordOp(host: string, record: HostRecord): StateOp {
  return putOp(HOSTS, host, JSON.stringify(record));
}

/** Every host record, in key order. */
export async function* hostRecords(store: StateReader): AsyncGenerator<[string, HostRecord]> {
  for await (const [host, value] of store.range(HOSTS).iterator()) {
    yield [host, JSON.parse(value) as HostRecord];
  }
}
