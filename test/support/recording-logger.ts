import { Writable } from "node:stream";
import {
  createLogger,
  type Logger,
  type LogLevel,
  type LogRecord,
  parseLogRecord,
} from "../../src/logging/index.js";

/** A real logger (the agent's own, JSON format) whose records the test reads back. */
export async function recordingLogger(
  options: { readonly level?: LogLevel; readonly onRecord?: (record: LogRecord) => void } = {},
): Promise<{ logger: Logger; records: LogRecord[] }> {
  const records: LogRecord[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        const record = parseLogRecord(line);
        if (record === undefined) throw new Error(`not a log record: ${line}`);
        records.push(record);
        options.onRecord?.(record);
      }
      done();
    },
  });
  return {
    logger: await createLogger({ level: options.level ?? "debug", format: "json", destination }),
    records,
  };
}
