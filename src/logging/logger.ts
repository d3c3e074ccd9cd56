import pino from "pino";

/** Log levels, most to least severe; `silent` logs nothing. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];
/** How log records are written: JSON lines, lines for people, or JSON unless stderr is a terminal. */
export const LOG_FORMATS = ["auto", "json", "pretty"] as const;
/** One of {@link LOG_FORMATS}. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The default level. */
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

/** Fields of a log record: `event` names the kind of record for programs reading the log. */
export type LogFields = Record<string, unknown> & { readonly event?: string; readonly err?: unknown };

/** One log method: a message, or fields then a message. */
export interface LogMethod {
  (message: string): void;
  (fields: LogFields, message: string): void;
}

/**
 * What modules log through, injected like the clock (a pino logger satisfies it). Errors go in the
 * `err` field, where their message, `code`, stack and causes are serialized.
 */
export interface Logger {
  readonly fatal: LogMethod;
  readonly error: LogMethod;
  readonly warn: LogMethod;
  readonly info: LogMethod;
  readonly debug: LogMethod;
  /** A logger whose records also carry `bindings` (e.g. `{ component: "console" }`). */
  child(bindings: Record<string, unknown>): Logger;
}

/** How to build a process's logger. */
export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Fields on every record, e.g. `{ agent: "agent-1" }`. */
  readonly bindings?: Record<string, unknown>;
  /** Where records go. @default the process's stderr, written synchronously (nothing lost at exit) */
  readonly destination?: { write(text: string): unknown; readonly isTTY?: boolean };
}

/** A logger that drops everything: for tests that check no output. */
export const silentLogger: Logger = pino({ level: "silent" });

const RECORD_SETTINGS = {
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
} satisfies pino.LoggerOptions;

let fallback: Logger | undefined;

/**
 * JSON records on stderr at the default level: the logger of code given none (an agent opened by a
 * library user or an in-process test), so its warnings and errors are never dropped.
 */
export function defaultLogger(): Logger {
  fallback ??= pino(
    { level: DEFAULT_LOG_LEVEL, ...RECORD_SETTINGS },
    pino.destination({ fd: 2, sync: true }),
  );
  return fallback;
}

/**
 * The process's logger (pino): JSON lines with a string `level`, an ISO `time` and `msg`, or, on a
 * terminal (format `auto`) or with format `pretty`, one coloured line per record with its fields
 * below (pino-pretty, loaded only then).
 */
export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const destination = options.destination ?? process.stderr;
  const pretty = options.format === "pretty" || (options.format === "auto" && destination.isTTY === true);
  const settings: pino.LoggerOptions = {
    level: options.level,
    base: { pid: process.pid, ...options.bindings },
    ...RECORD_SETTINGS,
  };
  if (pretty) {
    const { default: prettyStream } = await import("pino-pretty");
    return pino(
      settings,
      prettyStream({
        destination: destination === process.stderr ? 2 : destination,
        sync: true,
        colorize: destination.isTTY === true,
        translateTime: "SYS:HH:MM:ss.l",
        ignore: "pid,hostname,event,agent",
        singleLine: false,
      }),
    );
  }
  return pino(
    settings,
    destination === process.stderr ? pino.destination({ fd: 2, sync: true }) : destination,
  );
}
