import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type LogRecord, parseLogRecord } from "../logging/index.js";
import { type AgentFlagValues, agentArgv } from "./agent-command-line.js";

/** The `ubicrawl` entry script of this installation. */
export const UBICRAWL_BIN = fileURLToPath(new URL("../../bin/ubicrawl", import.meta.url));

/** How to start an agent process. */
export interface AgentProcessOptions {
  /** Words before the entry script: node's own flags, or a wrapper such as `taskset -c 1 node`. @default [node] */
  readonly command?: readonly string[];
  /** The entry script. @default {@link UBICRAWL_BIN} */
  readonly bin?: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** How an agent process ended. */
export interface AgentExit {
  /** Exit code, or null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A `ubicrawl agent` child process whose log it reads: it is started with `--log-format json`, so
 * every line of its stderr is a record, and what a launcher waits for — where it listens, where its
 * console is, how it stopped — is a record's `event` and fields, never a sentence of text.
 */
export class AgentProcess {
  /** Every record logged so far. */
  readonly records: LogRecord[] = [];
  /** Lines that were not records (a bad flag is said in one line of text). */
  readonly otherLines: string[] = [];
  /** Resolves once the process has exited and its log is read to the end. */
  readonly exit: Promise<AgentExit>;
  readonly child: ChildProcess;
  private readonly listeners = new Set<(record: LogRecord) => void>();
  private exited = false;

  private constructor(
    readonly id: string,
    argv: readonly string[],
    options: AgentProcessOptions,
  ) {
    const [command, ...commandArgs] = options.command ?? [process.execPath];
    this.child = spawn(command as string, [...commandArgs, options.bin ?? UBICRAWL_BIN, ...argv], {
      stdio: ["ignore", "ignore", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    const lines = createInterface({ input: this.child.stderr as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const record = parseLogRecord(line);
      if (record === undefined) {
        if (line.trim() !== "") this.otherLines.push(line);
        return;
      }
      this.records.push(record);
      for (const listener of this.listeners) listener(record);
    });
    this.exit = new Promise((resolve) => {
      this.child.once("close", (code, signal) => {
        this.exited = true;
        for (const listener of this.listeners) listener(CLOSED);
        resolve({ code, signal });
      });
    });
  }

  /**
   * Starts `ubicrawl agent` with `flags` (JSON records at level info at least, which the events a
   * launcher waits for are logged at).
   */
  static start(
    flags: AgentFlagValues & { readonly id: string },
    options: AgentProcessOptions = {},
  ): AgentProcess {
    const level = flags["log-level"];
    if (level !== undefined && !["info", "debug", "trace"].includes(level)) {
      throw new Error(`an agent started by a launcher logs at level info at least, not ${level}`);
    }
    return new AgentProcess(flags.id, agentArgv({ ...flags, "log-format": "json" }), options);
  }

  /** The process's PID. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once the process has exited. */
  get done(): boolean {
    return this.exited;
  }

  /** Calls `listener` with each record from now on. */
  onRecord(listener: (record: LogRecord) => void): () => void {
    const wrapped = (record: LogRecord) => {
      if (record !== CLOSED) listener(record);
    };
    this.listeners.add(wrapped);
    return () => this.listeners.delete(wrapped);
  }

  /**
   * The first record of `event` (logged already or to come); rejects when the process exits or
   * `timeoutMs` passes first, with what it logged.
   */
  waitForEvent(event: string, timeoutMs: number): Promise<LogRecord> {
    const found = this.records.find((record) => record.event === event);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        settle();
      };
      const listener = (record: LogRecord) => {
        if (record === CLOSED) {
          finish(() => reject(new Error(`${this.id} exited before logging "${event}":\n${this.logText()}`)));
        } else if (record.event === event) {
          finish(() => resolve(record));
        }
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new Error(`${this.id} logged no "${event}" in ${timeoutMs} ms:\n${this.logText()}`)),
          ),
        timeoutMs,
      );
      this.listeners.add(listener);
      if (this.exited) listener(CLOSED);
    });
  }

  /** Where the agent serves agent-to-agent gRPC (`--listen`), once it does. */
  async listening(timeoutMs: number): Promise<string> {
    return String((await this.waitForEvent("listening", timeoutMs)).address);
  }

  /** The log as text for people: each record's level and message (and error code), other lines as they are. */
  logText(): string {
    return [...this.records.map(describeRecord), ...this.otherLines].join("\n");
  }
}

/** A record in one line for people: `warn: message [CODE]`. */
export function describeRecord(record: LogRecord): string {
  const code = record.err?.code ?? (typeof record.code === "string" ? record.code : undefined);
  return `${record.level}: ${record.msg}${code === undefined ? "" : ` [${code}]`}`;
}

/** Marks the end of the log for listeners. */
const CLOSED: LogRecord = { level: "", time: "", msg: "" };
