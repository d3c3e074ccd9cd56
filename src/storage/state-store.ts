import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AbstractBatchOperation, AbstractSublevel } from "abstract-level";
import { Level } from "level";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { corruptStateError, damageReported, isCorruption } from "./state-damage.js";

/**
 * Table files LevelDB keeps open (its default is 1,000). It reads them through mmap, and the pages it
 * touched count in this process's RSS until the table is closed: with 1,000 open tables a 10 M-URL
 * frontier showed 140-156 MiB of mapped tables after reading queue windows and 1.2 GB of RSS after a
 * reopen; with 100, 45 MiB and 949 MiB (`bench/frontier.mjs`).
 */
const MAX_OPEN_TABLES = 100;

/** A URL waiting in a host's queue, with its per-host depth. */
export interface QueuedUrl {
  /** Canonical URL. */
  readonly url: string;
  /** Per-host depth: 0 when discovered from another host or a seed. */
  readonly depth: number;
  /**
   * Fetch attempts that failed in a way that may pass (see `--max-fetch-attempts`), kept with the URL
   * so the limit holds across restarts and hand-overs to other agents. Absent: none.
   */
  readonly attempts?: number;
  /** A sitemap file to read (its URLs are queued), not a page. Absent: a page. */
  readonly sitemap?: true;
  /** The `<lastmod>` a sitemap gave the page, as written, kept for recrawls. */
  readonly lastmod?: string;
  /**
   * For a sitemap on another host than the one whose robots.txt listed it (sitemaps.org's
   * cross-submission): that host's key, whose URLs the sitemap may list.
   */
  readonly sitemapFor?: string;
  /**
   * A done URL queued again by `--recrawl` because it is due: fetched although done, not counted
   * against the host's page limit again. Absent: a URL's first fetch.
   */
  readonly revisit?: true;
}

/** What a queued URL carries besides its URL and depth: failed attempts, sitemap marks, a lastmod. */
export type UrlTraits = Omit<QueuedUrl, "url" | "depth">;

/** The traits of `entry`, only those set (no `attempts: 0`). */
export function traitsOf(entry: UrlTraits): UrlTraits {
  return {
    ...((entry.attempts ?? 0) > 0 ? { attempts: entry.attempts } : {}),
    ...(entry.sitemap ? { sitemap: true } : {}),
    ...(entry.lastmod === undefined ? {} : { lastmod: entry.lastmod }),
    ...(entry.sitemapFor === undefined ? {} : { sitemapFor: entry.sitemapFor }),
    ...(entry.revisit ? { revisit: true } : {}),
  };
}

/** One queue entry as stored: its sequence number within the host's queue and the URL. */
export interface StoredQueueEntry extends QueuedUrl {
  readonly seq: number;
}

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

/** One write in an atomic batch. */
export type StateOp =
  | { readonly kind: "enqueue"; readonly host: string; readonly seq: number; readonly entry: QueuedUrl }
  | { readonly kind: "dequeue"; readonly host: string; readonly seq: number }
  | { readonly kind: "seen"; readonly fingerprint: bigint }
  /**
   * The URL of `host` with this fingerprint is done: fetched (any status), or failed for good. It is
   * never fetched again here, nor by a later owner of the host (a hand-over carries these).
   */
  | { readonly kind: "fetched"; readonly host: string; readonly fingerprint: bigint }
  /** The URL of `host` with this fingerprint is not done any more: its WARC record was lost. */
  | { readonly kind: "unfetched"; readonly host: string; readonly fingerprint: bigint }
  | { readonly kind: "host"; readonly host: string; readonly record: HostRecord }
  | { readonly kind: "meta"; readonly key: string; readonly value: string }
  | { readonly kind: "robots"; readonly origin: string; readonly snapshot: unknown }
  | {
      readonly kind: "outbox";
      readonly peer: string;
      readonly fingerprint: bigint;
      readonly entry: QueuedUrl;
    }
  | { readonly kind: "outbox-done"; readonly peer: string; readonly fingerprint: bigint }
  /** The first response stored with payload `digest` (this agent owns the digest). */
  | { readonly kind: "digest"; readonly digest: string; readonly original: PayloadOriginal }
  /** The response that first stored payload `digest` is lost: the next copy is stored whole. */
  | { readonly kind: "digest-forget"; readonly digest: string }
  /**
   * A URL of `host` dropped while the host was blacklisted, kept aside (neither queued nor done) until
   * the host comes off the blacklist and the URL is queued again.
   */
  | {
      readonly kind: "aside";
      readonly host: string;
      readonly fingerprint: bigint;
      readonly entry: QueuedUrl;
    }
  /** A URL kept aside is queued again (or found done): its aside entry goes. */
  | { readonly kind: "aside-done"; readonly host: string; readonly fingerprint: bigint }
  /**
   * URLs of `host` dropped while it was blacklisted and not kept aside (beyond the per-host cap), so
   * that a removal can say how many it cannot restore; 0 deletes the count.
   */
  | { readonly kind: "aside-beyond"; readonly host: string; readonly count: number }
  /**
   * What a recrawl keeps of the done URL of `host` with this fingerprint (validators, change counts,
   * next fetch time): an opaque value, encoded and read by `src/recrawl/page-history.ts`.
   */
  | { readonly kind: "page"; readonly host: string; readonly fingerprint: bigint; readonly value: string };

type Sub = AbstractSublevel<Level<string, string>, string | Buffer | Uint8Array, string, string>;
/** One operation of an array batch, on one of the sublevels. */
type BatchOp = AbstractBatchOperation<Level<string, string>, string, string>;

const SEP = "\u0000";
/**
 * The value of a seen or fetched fingerprint's key, which only marks it present. Not the empty string:
 * classic-level 3 copies every key and value of a batch into a `new char[size + 1]` and frees the copy
 * only when it is not empty, so each empty value leaked a 32-byte malloc chunk, for good: 305 MiB of
 * glibc's main arena at 10 M queued URLs (`bench/frontier.mjs`).
 */
const PRESENT = "1";
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
/** Queue reads up to this many entries are point reads ({@link StateStore.readQueue}). */
const POINT_READ_MAX = 1024;
/** Entries a range scan asks the iterator for at once. */
const SCAN_CHUNK = 1000;

/** Fixed-width hex so keys sort by number. */
function seqKey(host: string, seq: number): string {
  return host + SEP + seq.toString(16).padStart(12, "0");
}

function fingerprintKey(fingerprint: bigint): string {
  return fingerprint.toString(16).padStart(16, "0");
}

/**
 * `depth[,attempts][,s][,m=lastmod][,f=host][,r]\turl` (`r`: a revisit): entries written before
 * attempts, sitemaps or lastmod were kept have only what they had (`depth\turl` at the least). A
 * lastmod or a host key never holds a comma or a tab.
 */
function encodeEntry(entry: QueuedUrl): string {
  let head = String(entry.depth);
  if ((entry.attempts ?? 0) > 0) head += `,${entry.attempts}`;
  if (entry.sitemap) head += ",s";
  if (entry.lastmod !== undefined) head += `,m=${entry.lastmod.replace(/[,\t]/g, " ")}`;
  if (entry.sitemapFor !== undefined) head += `,f=${entry.sitemapFor}`;
  if (entry.revisit) head += ",r";
  return `${head}\t${entry.url}`;
}

function decodeEntry(value: string): QueuedUrl {
  const tab = value.indexOf("\t");
  const [depth, ...fields] = value.slice(0, tab).split(",");
  let entry: QueuedUrl = { depth: Number(depth), url: value.slice(tab + 1) };
  for (const field of fields) {
    if (field === "s") entry = { ...entry, sitemap: true };
    else if (field === "r") entry = { ...entry, revisit: true };
    else if (field.startsWith("m=")) entry = { ...entry, lastmod: field.slice(2) };
    else if (field.startsWith("f=")) entry = { ...entry, sitemapFor: field.slice(2) };
    else entry = { ...entry, attempts: Number(field) };
  }
  return entry;
}

/**
 * The agent's durable local state in one LevelDB folder: per-host URL queues, the seen and fetched
 * fingerprints, host records, the outbox of URLs handed to other agents, the URLs kept aside while
 * their host was blacklisted, and metadata. Every change
 * goes through {@link StateStore.write}, one atomic batch, so a SIGKILL leaves either all of a
 * fetch's consequences on disk or none.
 */
export class StateStore {
  private readonly queue: Sub;
  private readonly seen: Sub;
  private readonly fetched: Sub;
  /** The same fingerprints as `fetched`, keyed by host first, so a host's can be handed over. */
  private readonly fetchedByHost: Sub;
  private readonly hosts: Sub;
  private readonly meta: Sub;
  private readonly outbox: Sub;
  private readonly robots: Sub;
  /** Payload digests this agent registered, with the response that first stored each. */
  private readonly digests: Sub;
  /** URLs kept aside while their host was blacklisted, keyed by host first (see the `aside` op). */
  private readonly aside: Sub;
  /** Per host, URLs dropped while blacklisted beyond what was kept aside (see the `aside-beyond` op). */
  private readonly asideBeyond: Sub;
  /** Per done URL, keyed by host first, what a recrawl keeps of it (see the `page` op). */
  private readonly pages: Sub;

  private constructor(
    private readonly db: Level<string, string>,
    /**
     * What LevelDB reported dropped while it recovered its log at this open (a torn or scribbled
     * write-ahead log), in its words; empty when nothing was. See {@link damageReported}.
     */
    readonly damageAtOpen: readonly string[] = [],
  ) {
    this.queue = db.sublevel<string, string>("q", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.seen = db.sublevel<string, string>("s", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.fetched = db.sublevel<string, string>("f", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.fetchedByHost = db.sublevel<string, string>("g", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.hosts = db.sublevel<string, string>("h", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.meta = db.sublevel<string, string>("m", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.outbox = db.sublevel<string, string>("o", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.robots = db.sublevel<string, string>("r", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.digests = db.sublevel<string, string>("d", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.aside = db.sublevel<string, string>("a", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.asideBeyond = db.sublevel<string, string>("b", { keyEncoding: "utf8", valueEncoding: "utf8" });
    this.pages = db.sublevel<string, string>("p", { keyEncoding: "utf8", valueEncoding: "utf8" });
  }

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

  /** Applies `ops` atomically and durably: resolves once LevelDB's log is synced to the disk. */
  async write(ops: readonly StateOp[]): Promise<void> {
    if (ops.length === 0) return;
    try {
      // The array form, not a chained batch: classic-level frees a chained batch's native copy of every
      // key and value only when V8 collects it, and V8 does not know that memory is there, so under a
      // steady load it piles up in the malloc heap. SYNCED, not `{ sync: true }`: see its doc.
      await this.db.batch(this.batchOps(ops), SYNCED);
    } catch (error) {
      throw new UbiError(ErrorCode.StorageFailed, `cannot write the state store: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }

  /** The operations of one batch holding `ops` in order (a later put of the same key wins). */
  private batchOps(ops: readonly StateOp[]): BatchOp[] {
    const batch: BatchOp[] = [];
    for (const op of ops) {
      switch (op.kind) {
        case "enqueue":
          batch.push({
            type: "put",
            key: seqKey(op.host, op.seq),
            value: encodeEntry(op.entry),
            sublevel: this.queue,
          });
          break;
        case "dequeue":
          batch.push({ type: "del", key: seqKey(op.host, op.seq), sublevel: this.queue });
          break;
        case "seen":
          batch.push({
            type: "put",
            key: fingerprintKey(op.fingerprint),
            value: PRESENT,
            sublevel: this.seen,
          });
          break;
        case "fetched":
          batch.push({
            type: "put",
            key: fingerprintKey(op.fingerprint),
            value: PRESENT,
            sublevel: this.fetched,
          });
          batch.push({
            type: "put",
            key: op.host + SEP + fingerprintKey(op.fingerprint),
            value: PRESENT,
            sublevel: this.fetchedByHost,
          });
          break;
        case "unfetched":
          batch.push({ type: "del", key: fingerprintKey(op.fingerprint), sublevel: this.fetched });
          batch.push({
            type: "del",
            key: op.host + SEP + fingerprintKey(op.fingerprint),
            sublevel: this.fetchedByHost,
          });
          break;
        case "host":
          batch.push({ type: "put", key: op.host, value: JSON.stringify(op.record), sublevel: this.hosts });
          break;
        case "meta":
          batch.push({ type: "put", key: op.key, value: op.value, sublevel: this.meta });
          break;
        case "robots":
          batch.push({
            type: "put",
            key: op.origin,
            value: JSON.stringify(op.snapshot),
            sublevel: this.robots,
          });
          break;
        case "outbox":
          batch.push({
            type: "put",
            key: op.peer + SEP + fingerprintKey(op.fingerprint),
            value: encodeEntry(op.entry),
            sublevel: this.outbox,
          });
          break;
        case "outbox-done":
          batch.push({
            type: "del",
            key: op.peer + SEP + fingerprintKey(op.fingerprint),
            sublevel: this.outbox,
          });
          break;
        case "digest":
          batch.push({
            type: "put",
            key: op.digest,
            value: JSON.stringify([op.original.url, op.original.date, op.original.recordId]),
            sublevel: this.digests,
          });
          break;
        case "digest-forget":
          batch.push({ type: "del", key: op.digest, sublevel: this.digests });
          break;
        case "aside":
          batch.push({
            type: "put",
            key: op.host + SEP + fingerprintKey(op.fingerprint),
            value: encodeEntry(op.entry),
            sublevel: this.aside,
          });
          break;
        case "aside-done":
          batch.push({
            type: "del",
            key: op.host + SEP + fingerprintKey(op.fingerprint),
            sublevel: this.aside,
          });
          break;
        case "aside-beyond":
          batch.push(
            op.count > 0
              ? { type: "put", key: op.host, value: String(op.count), sublevel: this.asideBeyond }
              : { type: "del", key: op.host, sublevel: this.asideBeyond },
          );
          break;
        case "page":
          batch.push({
            type: "put",
            key: op.host + SEP + fingerprintKey(op.fingerprint),
            value: op.value,
            sublevel: this.pages,
          });
          break;
      }
    }
    return batch;
  }

  /**
   * Reads up to `limit` queue entries of `host` with sequence number ≥ `fromSeq`, in order. `endSeq`
   * (the host's next sequence number, when the caller knows it) bounds the read.
   */
  async readQueue(
    host: string,
    fromSeq: number,
    limit: number,
    endSeq = Number.MAX_SAFE_INTEGER,
  ): Promise<StoredQueueEntry[]> {
    const count = Math.min(limit, endSeq - fromSeq);
    if (count <= 0) return [];
    if (count > POINT_READ_MAX) return this.scanQueue(host, fromSeq, limit);
    // Point reads by key, not an iterator: classic-level keeps an iterator's native read buffer (room
    // for 1,000 entries, ~64 KB, and the last entries read) until V8 collects the iterator object, and
    // V8, unaware of that memory, rarely does: window loads piled up ~120 MB of RSS in 4,000 loads.
    // A host's queue is contiguous from its read position except after a put-back and a restart.
    const seqs = Array.from({ length: count }, (_, i) => fromSeq + i);
    const values = await this.queue.getMany(seqs.map((seq) => seqKey(host, seq)));
    const entries: StoredQueueEntry[] = [];
    for (const [i, value] of values.entries()) {
      if (value === undefined) {
        // A hole (or the queue's end, when `endSeq` was not given): the rest comes from a range scan.
        const rest = await this.scanQueue(host, fromSeq + i, limit - i);
        for (const entry of rest) entries.push(entry);
        return entries;
      }
      entries.push({ seq: fromSeq + i, ...decodeEntry(value) });
    }
    return entries;
  }

  /** A range scan of `host`'s queue; the iterator is read in one `nextv` per chunk and closed at once. */
  private async scanQueue(host: string, fromSeq: number, limit: number): Promise<StoredQueueEntry[]> {
    const entries: StoredQueueEntry[] = [];
    const iterator = this.queue.iterator({ gte: seqKey(host, fromSeq), lt: `${host}${SEP}g`, limit });
    try {
      while (entries.length < limit) {
        // Asking for no more than needed keeps the native buffer (reserved for that many) small.
        const chunk = await iterator.nextv(Math.min(SCAN_CHUNK, limit - entries.length));
        if (chunk.length === 0) break;
        for (const [key, value] of chunk) {
          const seq = Number.parseInt(key.slice(host.length + 1), 16);
          entries.push({ seq, ...decodeEntry(value) });
        }
      }
    } finally {
      await iterator.close();
    }
    return entries;
  }

  /** Counts each host's queued entries and finds its lowest sequence number (used once at startup). */
  async scanQueues(): Promise<Map<string, { count: number; headSeq: number }>> {
    const result = new Map<string, { count: number; headSeq: number }>();
    for await (const key of this.queue.keys()) {
      const sep = key.lastIndexOf(SEP);
      const host = key.slice(0, sep);
      const found = result.get(host);
      if (found) found.count++;
      else result.set(host, { count: 1, headSeq: Number.parseInt(key.slice(sep + 1), 16) });
    }
    return result;
  }

  /** Every host record. */
  async *hostRecords(): AsyncGenerator<[string, HostRecord]> {
    for await (const [host, value] of this.hosts.iterator()) {
      yield [host, JSON.parse(value) as HostRecord];
    }
  }

  /** Every stored robots.txt snapshot (opaque JSON values, by origin). */
  async *robotsSnapshots(): AsyncGenerator<unknown> {
    for await (const value of this.robots.values()) yield JSON.parse(value);
  }

  /** Calls `visit` with every payload digest this agent registered (see {@link payloadOriginals}). */
  async forEachPayloadDigest(visit: (digest: string) => void): Promise<void> {
    for await (const key of this.digests.keys()) visit(key);
  }

  /** Calls `visit` with every seen fingerprint. */
  async forEachSeen(visit: (fingerprint: bigint) => void): Promise<void> {
    for await (const key of this.seen.keys()) visit(BigInt(`0x${key}`));
  }

  /** Calls `visit` with every fetched fingerprint. */
  async forEachFetched(visit: (fingerprint: bigint) => void): Promise<void> {
    for await (const key of this.fetched.keys()) visit(BigInt(`0x${key}`));
  }

  /** For each fingerprint, whether a fetch of its URL was recorded (page recovery). */
  async hasFetched(fingerprints: readonly bigint[]): Promise<boolean[]> {
    if (fingerprints.length === 0) return [];
    const values = await this.fetched.getMany(fingerprints.map(fingerprintKey));
    return values.map((value) => value !== undefined);
  }

  /**
   * Fingerprints of `host`'s done URLs (see the `fetched` op), in key order, skipping the first `skip`
   * and returning at most `limit`. Fetches recorded before this index existed are not listed.
   */
  async fetchedOf(host: string, skip: number, limit: number): Promise<bigint[]> {
    const result: bigint[] = [];
    if (limit <= 0) return result;
    let index = 0;
    const iterator = this.fetchedByHost.keys({ gt: host + SEP, lt: `${host}\u0001` });
    try {
      for (;;) {
        const chunk = await iterator.nextv(SCAN_CHUNK);
        if (chunk.length === 0) break;
        for (const key of chunk) {
          if (index++ < skip) continue;
          result.push(BigInt(`0x${key.slice(host.length + 1)}`));
          if (result.length >= limit) return result;
        }
      }
    } finally {
      await iterator.close();
    }
    return result;
  }

  /** The agents (and pseudo-peers) with an outbox entry, in key order: one seek per peer, not a scan. */
  async outboxPeers(): Promise<string[]> {
    const peers: string[] = [];
    const iterator = this.outbox.keys();
    try {
      for (let key = await iterator.next(); key !== undefined; key = await iterator.next()) {
        const peer = key.slice(0, key.lastIndexOf(SEP));
        peers.push(peer);
        iterator.seek(`${peer}\u0001`);
      }
    } finally {
      await iterator.close();
    }
    return peers;
  }

  /** The outbox entries of `peer` (of every peer when omitted): URLs handed to it. */
  async *outboxEntries(
    peer?: string,
  ): AsyncGenerator<{ peer: string; fingerprint: bigint; entry: QueuedUrl }> {
    const range = peer === undefined ? {} : { gte: peer + SEP, lt: `${peer}\u0001` };
    for await (const [key, value] of this.outbox.iterator(range)) {
      const sep = key.lastIndexOf(SEP);
      yield {
        peer: key.slice(0, sep),
        fingerprint: BigInt(`0x${key.slice(sep + 1)}`),
        entry: decodeEntry(value),
      };
    }
  }

  /**
   * Per host with URLs kept aside or dropped beyond the cap while blacklisted: how many of each (read
   * once at startup; only blacklisted hosts have any).
   */
  async asideCounts(): Promise<Map<string, { kept: number; beyond: number }>> {
    const counts = new Map<string, { kept: number; beyond: number }>();
    const of = (host: string) => {
      let count = counts.get(host);
      if (count === undefined) {
        count = { kept: 0, beyond: 0 };
        counts.set(host, count);
      }
      return count;
    };
    for await (const key of this.aside.keys()) of(key.slice(0, key.lastIndexOf(SEP))).kept++;
    for await (const [host, value] of this.asideBeyond.iterator()) of(host).beyond = Number(value);
    return counts;
  }

  /** The URLs of `host` kept aside (see the `aside` op), with their fingerprints, in key order. */
  async asideOf(host: string): Promise<{ fingerprint: bigint; entry: QueuedUrl }[]> {
    const result: { fingerprint: bigint; entry: QueuedUrl }[] = [];
    for await (const [key, value] of this.aside.iterator({ gt: host + SEP, lt: `${host}\u0001` })) {
      result.push({ fingerprint: BigInt(`0x${key.slice(host.length + 1)}`), entry: decodeEntry(value) });
    }
    return result;
  }

  /** For each payload digest, the response that first stored it, if this agent registered it. */
  async payloadOriginals(digests: readonly string[]): Promise<(PayloadOriginal | undefined)[]> {
    if (digests.length === 0) return [];
    const values = await this.digests.getMany([...digests]);
    return values.map((value) => {
      if (value === undefined) return undefined;
      const [url, date, recordId] = JSON.parse(value) as [string, string, string];
      return { url, date, recordId };
    });
  }

  /** The value of the `page` op last written for the URL of `host` with this fingerprint, if any. */
  async pageValue(host: string, fingerprint: bigint): Promise<string | undefined> {
    return this.pages.get(host + SEP + fingerprintKey(fingerprint));
  }

  /**
   * The `page` values of `host` (see the op) after its first `skip`, with their fingerprints, in key
   * order (what a hand-over of the host sends).
   */
  async *pageValuesOf(host: string, skip = 0): AsyncGenerator<{ fingerprint: bigint; value: string }> {
    let skipped = 0;
    for await (const [key, value] of this.pages.iterator({ gt: host + SEP, lt: `${host}\u0001` })) {
      if (skipped++ < skip) continue;
      yield { fingerprint: BigInt(`0x${key.slice(host.length + 1)}`), value };
    }
  }

  /** Every `page` value (see the op), with its host and fingerprint, in key order (read at startup). */
  async *pageValues(): AsyncGenerator<{ host: string; fingerprint: bigint; value: string }> {
    for await (const [key, value] of this.pages.iterator()) {
      const sep = key.lastIndexOf(SEP);
      yield { host: key.slice(0, sep), fingerprint: BigInt(`0x${key.slice(sep + 1)}`), value };
    }
  }

  /** A metadata value, or undefined. */
  async getMeta(key: string): Promise<string | undefined> {
    return this.meta.get(key);
  }

  /** Every metadata record whose key starts with `prefix`, in key order. */
  async *metaEntries(prefix: string): AsyncGenerator<[key: string, value: string]> {
    yield* this.meta.iterator({ gte: prefix, lt: `${prefix}\uffff` });
  }

  /** Closes the database; idempotent. */
  async close(): Promise<void> {
    if (this.db.status === "open" || this.db.status === "opening") await this.db.close();
  }
}
