/**
 * WARC file names: `<prefix>-<yyyyMMddHHmmss UTC>-<serial, 5+ digits>-<agentId>.warc.gz`, plus `.open`
 * while a writer holds the file. The serial keeps names unique and ordered across restarts.
 */

/** Extension of a finished WARC file. */
export const WARC_SUFFIX = ".warc.gz";

/** Suffix a writer adds while the file is live. */
export const OPEN_SUFFIX = ".open";

/** Letters, digits, `.`, `_`, `-`: safe in a file name and unambiguous between the dashes. */
export const NAME_PART_PATTERN = /^[A-Za-z0-9._-]+$/;

/** The name of a finished WARC file (without `.open`). */
export function warcFileName(prefix: string, date: Date, serial: number, agentId: string): string {
  const stamp = date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return `${prefix}-${stamp}-${String(serial).padStart(5, "0")}-${agentId}${WARC_SUFFIX}`;
}

/** The serial of a file named by {@link warcFileName} (finished or `.open`), else undefined. */
export function warcFileSerial(fileName: string, prefix: string, agentId: string): number | undefined {
  const base = fileName.endsWith(OPEN_SUFFIX) ? fileName.slice(0, -OPEN_SUFFIX.length) : fileName;
  const head = `${prefix}-`;
  const tail = `-${agentId}${WARC_SUFFIX}`;
  if (base.length <= head.length + tail.length || !base.startsWith(head) || !base.endsWith(tail)) {
    return undefined;
  }
  const match = /^\d{14}-(\d{5,})$/.exec(base.slice(head.length, base.length - tail.length));
  return match ? Number(match[1]) : undefined;
}
