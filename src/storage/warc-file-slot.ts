import { cdxjLine } from "./cdxj.js";
import type { AppendedRecords } from "./record-appender.js";
import type { RecordDraft } from "./warc-draft.js";
import { newRecordId, recordDraft } from "./warc-record.js";
import type { ZstdDictionary } from "./zstd-dictionary.js";

/**
 * A WARC file as the writer assigns records to it: its slot, which takes records before the file is
 * open and keeps every append in call order, so that each response or revisit gets its index line with
 * its offset in call order although appends settle out of it.
 */

/** Bytes a record's end (`\r\n\r\n`) adds to its head and block. */
const RECORD_END_BYTES = 4;
/** Drained appends a file slot keeps before it drops them from its list. */
const DRAINED_APPENDS_KEPT = 1024;

/** A WARC file the writer opened, with the bytes of whole records appended to it so far. */
export interface WarcFileExtent {
  /** Its name once finished (without `.open`). */
  readonly name: string;
  readonly bytes: number;
}

/** The record of an append that gets an index line: its place among the drafts and what the line says. */
export interface IndexedRecord {
  /** Index of the record among the call's drafts. */
  at: number;
  url: string;
  date: Date;
  responseHeaderBlock: string;
  /**
   * The payload digest (`sha1:…`) when known before the record is finished: a revisit's, or a
   * response's digested beforehand (its draft carries it); otherwise computed with its record.
   */
  payloadDigest?: string;
  /** A `revisit` record (its index line says so). */
  revisit?: boolean;
}

/** A file that writes are assigned to; it is created when its first record is queued. */
export interface FileSlot {
  name: string;
  warcinfoId: string;
  /** The dictionary of a `.warc.zst` file, written first in it. */
  dictionary?: ZstdDictionary;
  /** Bytes assigned so far: compressed sizes once known, uncompressed sizes meanwhile. */
  bytes: number;
  /** The open file's descriptor; until then, the records waiting for it, in call order. */
  fd?: number;
  /**
   * Every append to the file in call order, with what it wrote once settled (null: not kept, after a
   * failure). Appends settle out of call order (those queued before the file opened settle a few
   * microtasks late), so index lines take their offsets here, in call order, from {@link indexedBytes}.
   */
  appends: { indexed: IndexedRecord | undefined; records?: AppendedRecords | null }[];
  /** How many of {@link appends} have given their index line. */
  drained: number;
  /** Offset of the first record of the next append to drain. */
  indexedBytes: number;
  waiting: {
    drafts: RecordDraft[];
    resolve: (appended: AppendedRecords | PromiseLike<AppendedRecords>) => void;
    reject: (error: unknown) => void;
  }[];
}

/** What the warcinfo record of a new file says. */
export interface WarcinfoFields {
  /** The `software` field. */
  readonly software: string;
  /** The files' prefix and the agent's id, for `isPartOf`. */
  readonly filePrefix: string;
  readonly agentId: string;
}

/** A new slot for the file `name`, and the draft of its warcinfo record, dated `now`. */
export function newFileSlot(
  name: string,
  now: Date,
  info: WarcinfoFields,
  dictionary: ZstdDictionary | undefined,
): { slot: FileSlot; warcinfo: RecordDraft } {
  const slot: FileSlot = {
    name,
    warcinfoId: newRecordId(),
    bytes: 0,
    waiting: [],
    appends: [],
    drained: 0,
    indexedBytes: 0,
    ...(dictionary === undefined ? {} : { dictionary }),
  };
  const block = Buffer.from(
    `software: ${info.software}\r\nformat: WARC File Format 1.1\r\n` +
      "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n" +
      `isPartOf: ${info.filePrefix}-${info.agentId}\r\n`,
    "utf8",
  );
  const warcinfo = recordDraft({
    type: "warcinfo",
    recordId: slot.warcinfoId,
    date: now,
    fields: [
      ["WARC-Filename", name],
      ["Content-Type", "application/warc-fields"],
    ],
    block: [block],
  });
  return { slot, warcinfo };
}

/** The uncompressed bytes of `drafts`: what a slot counts for them until their compressed size is known. */
export function estimatedBytes(drafts: readonly RecordDraft[]): number {
  let estimate = 0;
  for (const draft of drafts) {
    estimate += draft.head.length + RECORD_END_BYTES;
    for (const piece of draft.block) estimate += typeof piece === "string" ? piece.length : piece.byteLength;
  }
  return estimate;
}

/** Compressed bytes of all the records of one append. */
export function totalBytes(records: AppendedRecords): number {
  let bytes = 0;
  for (const size of records.sizes) bytes += size;
  return bytes;
}

/**
 * Gives `emit` the index lines of `slot`'s settled appends, in call order, up to the first one still
 * pending.
 */
export function drainIndexLines(slot: FileSlot, emit: (line: string) => void): void {
  for (
    let place = slot.appends[slot.drained];
    place?.records !== undefined;
    place = slot.appends[slot.drained]
  ) {
    slot.drained++;
    if (place.records === null) continue;
    if (place.indexed) emit(indexLine(place.indexed, place.records, slot.indexedBytes, slot.name));
    slot.indexedBytes += totalBytes(place.records);
  }
  if (slot.drained >= DRAINED_APPENDS_KEPT) {
    slot.appends.splice(0, slot.drained);
    slot.drained = 0;
  }
}

/** The index line of `indexed`, appended as `records` at `offset` of the WARC file `filename`. */
function indexLine(
  indexed: IndexedRecord,
  records: AppendedRecords,
  offset: number,
  filename: string,
): string {
  let at = offset;
  for (let i = 0; i < indexed.at; i++) at += records.sizes[i] ?? 0;
  const digest = indexed.payloadDigest ?? `sha1:${records.payloadDigests[indexed.at] ?? ""}`;
  return cdxjLine({
    url: indexed.url,
    date: indexed.date,
    revisit: indexed.revisit === true,
    httpHeaderBlock: indexed.responseHeaderBlock,
    digest: digest.slice("sha1:".length),
    offset: at,
    length: records.sizes[indexed.at] ?? 0,
    filename,
  });
}
