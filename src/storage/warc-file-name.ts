/**
 * WARC file names: `<prefix>-<yyyyMMddHHmmss UTC>-<serial, 5+ digits>-<agentId>.warc.gz` (or
 * `.warc.zst`: see {@link WarcCompression}), plus `.open` while a writer holds the file. The serial keeps
 * names unique and ordered across restarts, whatever the compression of earlier files.
 */

/** How a WARC file's records are compressed: one gzip member, or one Zstandard frame, each. */
export type WarcCompression = "gzip" | "zstd";

/** The compressions, in the order `--warc-compression` lists them. */
export const WARC_COMPRESSIONS: readonly WarcCompression[] = ["gzip", "zstd"];

/** Extension of a finished WARC file of each compression. */
export const WARC_SUFFIXES: Readonly<Record<WarcCompression, string>> = {
  gzip: ".warc.gz",
  zstd: ".warc.zst",
};

/** Suffix a writer adds while the file is live. */
export const OPEN_SUFFIX = ".open";

/** Letters, digits, `.`, `_`, `-`: safe in a file name and unambiguous between the dashes. */
export const NAME_PART_PATTERN = /^[A-Za-z0-9._-]+$/;

/** The name of a finished WARC file (without `.open`). */
export function warcFileName(
  prefix: string,
  date: Date,
  serial: number,
  agentId: string,
  compression: WarcCompression,
): string {
  const stamp = date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return `${prefix}-${stamp}-${String(serial).padStart(5, "0")}-${agentId}${WARC_SUFFIXES[compression]}`;
}

/** The compression of a WARC file by its name (finished or `.open`), else undefined. */
export function warcFileCompression(fileName: string): WarcCompression | undefined {
  const base = fileName.endsWith(OPEN_SUFFIX) ? fileName.slice(0, -OPEN_SUFFIX.length) : fileName;
  return WARC_COMPRESSIONS.find((compression) => base.endsWith(WARC_SUFFIXES[compression]));
}

/** The serial of a file named by {@link warcFileName} (finished or `.open`, any compression), else undefined. */
export function warcFileSerial(fileName: string, prefix: string, agentId: string): number | undefined {
  const base = fileName.endsWith(OPEN_SUFFIX) ? fileName.slice(0, -OPEN_SUFFIX.length) : fileName;
  const compression = warcFileCompression(base);
  if (compression === undefined) return undefined;
  const head = `${prefix}-`;
  const tail = `-${agentId}${WARC_SUFFIXES[compression]}`;
  if (base.length <= head.length + tail.length || !base.startsWith(head) || !base.endsWith(tail)) {
    return undefined;
  }
  const match = /^\d{14}-(\d{5,})$/.exec(base.slice(head.length, base.length - tail.length));
  return match ? Number(match[1]) : undefined;
}
