/** One JSON log record as a process of ubicrawl writes it (format `json`), read back. */
export interface LogRecord {
  /** `fatal`, `error`, `warn`, `info`, `debug` or `trace`. */
  readonly level: string;
  /** ISO 8601. */
  readonly time: string;
  readonly msg: string;
  /** The kind of record, for programs: `listening`, `console`, `progress`, `stopped`, `failed`… */
  readonly event?: string;
  /** An error: its message (with its causes'), `code`, stack. */
  readonly err?: { readonly message: string; readonly code?: string; readonly stack?: string };
  readonly [field: string]: unknown;
}

/** The record on one line of a log, or undefined for a line that is not one (a usage error, say). */
export function parseLogRecord(line: string): LogRecord | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    const record = value as Partial<LogRecord>;
    return typeof record.level === "string" && typeof record.msg === "string"
      ? (value as LogRecord)
      : undefined;
  } catch {
    return undefined;
  }
}
