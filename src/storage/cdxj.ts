import { getSurt } from "warcio/utils";

/**
 * CDXJ index lines as pywb's indexer (`cdxj-indexer`, which py-wacz uses) writes them:
 * `<SURT key> <14-digit timestamp> {"url": …, "mime": …, "status": …, "digest": …, "length": …, "offset": …, "filename": …}`,
 * the JSON in Python's default form (`", "` and `": "` separators, non-ASCII as `\uXXXX`, every value a
 * string), one line per `response` and `revisit` record (a revisit's mime is `warc/revisit`), sorted as
 * plain text, so by key, then timestamp. The key is warcio's SURT, the one ReplayWeb.page looks URLs up by.
 */

/** Suffix of a WARC file's index: `crawl-….warc.gz` is indexed in `crawl-….warc.gz.cdxj`. */
export const CDXJ_SUFFIX = ".cdxj";

/** What one index line says of a record. */
export interface CdxjRecord {
  /** `WARC-Target-URI`. */
  readonly url: string;
  /** `WARC-Date`. */
  readonly date: Date;
  /** The record is a `revisit` (its mime is then `warc/revisit`). */
  readonly revisit: boolean;
  /** The HTTP status line and headers, latin1, through the blank line (status and mime come from it). */
  readonly httpHeaderBlock: string;
  /** `WARC-Payload-Digest` without its `sha1:` label (base32). */
  readonly digest: string;
  /** Byte offset of the record's member (gzip) or frame (zstd) in the WARC file. */
  readonly offset: number;
  /** Compressed length of that member or frame. */
  readonly length: number;
  /** The WARC file's name (no folder). */
  readonly filename: string;
}

/** The index line of `record`, newline included. */
export function cdxjLine(record: CdxjRecord): string {
  const { status, mime } = statusAndMime(record.httpHeaderBlock);
  let json = `{"url": ${jsonString(record.url)}`;
  const shownMime = record.revisit ? "warc/revisit" : mime;
  if (shownMime) json += `, "mime": ${jsonString(shownMime)}`;
  if (status) json += `, "status": "${status}"`;
  json +=
    `, "digest": ${jsonString(record.digest)}, "length": "${record.length}", "offset": "${record.offset}"` +
    `, "filename": ${jsonString(record.filename)}}`;
  return `${getSurt(record.url)} ${cdxjTimestamp(record.date)} ${json}\n`;
}

/** `yyyyMMddHHmmss` (UTC) of `date`, the CDX timestamp. */
export function cdxjTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

/** The order of index lines: as text, as pywb's indexer sorts them. */
export function compareCdxjLines(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts index lines (each ending in a newline) as text, as pywb's indexer does, dropping repeats. */
export function sortCdxjLines(lines: string[]): string[] {
  lines.sort(compareCdxjLines);
  return lines.filter((line, i) => i === 0 || line !== lines[i - 1]);
}

/**
 * The end of the last record an index's `text` points into (the greatest offset + length), or
 * undefined when a line is not a whole index line (a torn tail, say). An index covers its WARC file when
 * this is the file's size: the file ends with a response or revisit record.
 */
export function cdxjExtent(text: string): number | undefined {
  if (text !== "" && !text.endsWith("\n")) return undefined;
  let extent = 0;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const match = LINE_END.exec(line);
    if (!match) return undefined;
    extent = Math.max(extent, Number(match[2]) + Number(match[1]));
  }
  return extent;
}

/** What an index line says of where a record is. */
export interface CdxjEntry {
  readonly url: string;
  readonly offset: number;
  readonly length: number;
}

/** The entries of an index's `text`; undefined when a line is not a whole index line. */
export function cdxjEntries(text: string): CdxjEntry[] | undefined {
  const entries: CdxjEntry[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (!LINE_END.test(line)) return undefined;
    try {
      const { url, offset, length } = JSON.parse(line.slice(line.indexOf("{"))) as Record<string, unknown>;
      if (typeof url !== "string") return undefined;
      entries.push({ url, offset: Number(offset), length: Number(length) });
    } catch {
      return undefined;
    }
  }
  return entries;
}

/** The last fields of every line {@link cdxjLine} writes. */
const LINE_END = /^\S+ \d{14} \{.*"length": "(\d+)", "offset": "(\d+)", "filename": "[^"]*"\}$/;

/** The status code and the media type (without parameters) of an HTTP response header block. */
function statusAndMime(headerBlock: string): { status: string | undefined; mime: string | undefined } {
  const status = /^HTTP\/\S+[ \t]+(\d{3})/.exec(headerBlock)?.[1];
  const contentType = /\r\ncontent-type:[ \t]*([^\r\n]*)/i.exec(headerBlock)?.[1];
  // pywb keeps what comes before the first ';' or blank.
  const mime = contentType?.split(/[;\s]/, 1)[0]?.trim();
  return { status, mime: mime === "" ? undefined : mime };
}

/** `value` as a JSON string the way Python's `json.dumps` writes it (non-ASCII escaped). */
function jsonString(value: string): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
