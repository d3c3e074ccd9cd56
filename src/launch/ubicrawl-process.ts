import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type LogRecord, parseLogRecord } from "../logging/index.js";
import { type AgentFlagValues, agentArgv } from "./agent-command-line.js";

/** The `ubicrawl` entry script of this installation. */
export const UBICRAWL_BIN = fileURLToPath(new URL("../../bin/ubicrawl", import.meta.url));

/** How long {@link UbicrawlProcess.waitForExit} waits by default, ms. */
const DEFAULT_EXIT_TIMEOUT_MS = 45_000;

/** How long {@link UbicrawlProcess.stop} waits after SIGTERM before SIGKILL by default, ms. */
const STOP_GRACE_MS = 5000;

/** How to start a `ubicrawl` process beyond its arguments. */
export interface UbicrawlProcessOptions {
  /** Shown in errors. @default `ubicrawl <args>` */
  readonly name?: string;
  /**
   * Words before the entry script: node with its own flags, or wrapped (`taskset -c 1 node`); a
   * wrapper must exec node in place, so that {@link UbicrawlProcess.pid} is node's. @default [node]
   */
  readonly command?: readonly string[];
  /** The entry script (a snapshot of the build, say). @default {@link UBICRAWL_BIN} */
  readonly bin?: string;
  /** @default this process's working directory */
  readonly cwd?: string;
  /** Added to this process's environment; a variable set to undefined is removed from it. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** How a process ended. */
export interface ProcessExit {
  /** Exit code, or null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** How a process ended, and everything it wrote. */
export interface ExitResult extends ProcessExit {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A `ubicrawl` child process (any command): stdin closed, stdout and stderr kept, stderr also read
 * line by line as it comes, so a caller can wait for a line or for a JSON log record (an agent logs
 * records when its stderr is not a terminal: `listening` with its `address`, `stopped`…). What a
 * launcher waits for is a record's `event` and fields, never a sentence of text. The one wrapper of
 * the cluster command, the laboratory, the tests and the benchmarks.
 */
export class UbicrawlProcess {
  /** Resolves once the process has exited and its output is read to the end; never rejects. */
  readonly exit: Promise<ExitResult>;
  /** The process's PID. */
  readonly pid: number;
  #stdout = "";
  #stderr = "";
  /** The end of stderr after its last newline. */
  #partialLine = "";
  #exited = false;
  /** Called with each line of stderr, then with undefined once the process has exited. */
  readonly #lineListeners = new Set<(line: string | undefined) => void>();

  private constructor(
    /** Shown in errors: an agent's id, or the command line. */
    readonly name: string,
    /** The node child process. */
    readonly child: ChildProcess,
  ) {
    if (child.pid === undefined) {
      // The spawn failed: said here, so its "error" event must not crash this process too.
      child.once("error", () => {});
      throw new Error(`could not spawn ${name}`);
    }
    this.pid = child.pid;
    // A later failure (a signal sent after the process ended) must not crash this one: "close" says
    // how it ended.
    child.on("error", () => {});
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.#stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.#stderr += chunk;
      const lines = (this.#partialLine + chunk).split("\n");
      this.#partialLine = lines.pop() ?? "";
      for (const line of lines) this.#emit(line);
    });
    // "close" (not "exit"): the output streams are drained by then.
    this.exit = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        if (this.#partialLine !== "") this.#emit(this.#partialLine);
        this.#partialLine = "";
        this.#exited = true;
        this.#emit(undefined);
        resolve({ code, signal, stdout: this.#stdout, stderr: this.#stderr });
      });
    });
  }

  /** Spawns `node bin/ubicrawl <args>` (any command); throws when it cannot be spawned. */
  static start(args: readonly string[], options: UbicrawlProcessOptions = {}): UbicrawlProcess {
    const [command, ...commandArgs] = options.command ?? [process.execPath];
    const child = spawn(command as string, [...commandArgs, options.bin ?? UBICRAWL_BIN, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
    });
    return new UbicrawlProcess(options.name ?? `ubicrawl ${args.join(" ")}`, child);
  }

  /**
   * Starts `ubicrawl agent` with `flags` (then `args` as they are), named by its id, logging JSON
   * records at level info at least (which the events a launcher waits for are logged at).
   */
  static startAgent(
    flags: AgentFlagValues & { readonly id: string },
    options: Omit<UbicrawlProcessOptions, "name"> = {},
    args: readonly string[] = [],
  ): UbicrawlProcess {
    const level = flags["log-level"];
    if (level !== undefined && !["info", "debug", "trace"].includes(level)) {
      throw new Error(`an agent started by a launcher logs at level info at least, not ${level}`);
    }
    return UbicrawlProcess.start([...agentArgv({ ...flags, "log-format": "json" }), ...args], {
      ...options,
      name: flags.id,
    });
  }

  /** True once the process has exited and its output is read to the end. */
  get exited(): boolean {
    return this.#exited;
  }

  /** Everything written to stdout so far. */
  stdout(): string {
    return this.#stdout;
  }

  /** Everything written to stderr so far. */
  stderr(): string {
    return this.#stderr;
  }

  /** The complete lines of stderr so far (and, once exited, a last one with no newline). */
  stderrLines(): string[] {
    const lines = this.#stderr.slice(0, this.#stderr.length - this.#partialLine.length).split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines;
  }

  /** The JSON log records on stderr so far. */
  records(): LogRecord[] {
    return logRecords(this.#stderr);
  }

  /** Calls `listener` with each log record from now on; returns a function that stops it. */
  onRecord(listener: (record: LogRecord) => void): () => void {
    const onLine = (line: string | undefined) => {
      const record = line === undefined ? undefined : parseLogRecord(line);
      if (record !== undefined) listener(record);
    };
    this.#lineListeners.add(onLine);
    return () => this.#lineListeners.delete(onLine);
  }

  /**
   * The first match of `pattern` on a line of stderr (printed already or to come); rejects when the
   * process exits or `timeoutMs` passes first, with what it printed.
   */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return this.#waitFor((line) => pattern.exec(line) ?? undefined, String(pattern), timeoutMs);
  }

  /**
   * The first log record of `event` (logged already or to come); rejects when the process exits or
   * `timeoutMs` passes first, with what it printed.
   */
  waitForEvent(event: string, timeoutMs: number): Promise<LogRecord> {
    return this.#waitFor(
      (line) => {
        const record = parseLogRecord(line);
        return record?.event === event ? record : undefined;
      },
      `"${event}" record`,
      timeoutMs,
    );
  }

  /** Where an agent serves agent-to-agent gRPC (`--listen`), once it does. */
  async listening(timeoutMs: number): Promise<string> {
    return String((await this.waitForEvent("listening", timeoutMs)).address);
  }

  /** Stderr for people (see {@link logText}). */
  logText(): string {
    return logText(this.#stderr);
  }

  /** The last line of {@link logText} that is not blank, or "no output". */
  lastWords(): string {
    return (
      this.logText()
        .split("\n")
        .findLast((line) => line.trim() !== "") ?? "no output"
    );
  }

  /** Sends `signal` to the process (nothing once it has exited). */
  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    if (!this.#exited) this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it still runs after `graceMs`; resolves once it has exited. */
  async stop(graceMs = STOP_GRACE_MS): Promise<ExitResult> {
    this.kill("SIGTERM");
    const timer = setTimeout(() => this.kill("SIGKILL"), graceMs);
    try {
      return await this.exit;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves when the process exits; after `timeoutMs` it is SIGKILLed and the promise rejects. */
  async waitForExit(timeoutMs = DEFAULT_EXIT_TIMEOUT_MS): Promise<ExitResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill("SIGKILL");
        reject(
          new Error(
            `${this.name} did not exit within ${timeoutMs} ms; stderr:\n${this.#stderr.slice(-4000)}`,
          ),
        );
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exit, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  #emit(line: string | undefined): void {
    for (const listener of this.#lineListeners) listener(line);
  }

  #waitFor<T>(match: (line: string) => T | undefined, what: string, timeoutMs: number): Promise<T> {
    for (const line of this.stderrLines()) {
      const found = match(line);
      if (found !== undefined) return Promise.resolve(found);
    }
    return new Promise((resolve, reject) => {
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.#lineListeners.delete(listener);
        settle();
      };
      const listener = (line: string | undefined) => {
        if (line === undefined) {
          finish(() => reject(new Error(`${this.name} exited before printing ${what}:\n${this.logText()}`)));
          return;
        }
        const found = match(line);
        if (found !== undefined) finish(() => resolve(found));
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new Error(`${this.name} printed no ${what} in ${timeoutMs} ms:\n${this.logText()}`)),
          ),
        timeoutMs,
      );
      this.#lineListeners.add(listener);
      if (this.#exited) listener(undefined);
    });
  }
}

/** The JSON log records in a process's stderr. */
export function logRecords(stderr: string): LogRecord[] {
  return stderr.split("\n").flatMap((line) => {
    const record = parseLogRecord(line);
    return record === undefined ? [] : [record];
  });
}

/** The first record of `event` in `stderr`, or undefined. */
export function logEvent(stderr: string, event: string): LogRecord | undefined {
  return logRecords(stderr).find((record) => record.event === event);
}

/** A record in one line for people: `warn: message [CODE]`. */
function describeRecord(record: LogRecord): string {
  const code = record.err?.code ?? (typeof record.code === "string" ? record.code : undefined);
  return `${record.level}: ${record.msg}${code === undefined ? "" : ` [${code}]`}`;
}

/** `stderr` for people: each record as `level: message [CODE]`, other lines as they are. */
export function logText(stderr: string): string {
  return stderr
    .split("\n")
    .map((line) => {
      const record = parseLogRecord(line);
      return record === undefined ? line : describeRecord(record);
    })
    .join("\n");
}

/** Why an agent failed, for people: its `fatal` record (`fatal: message [CODE]`), or the CLI's line for a bad flag. */
export function errorLine(stderr: string): string {
  return (
    logText(stderr)
      .split("\n")
      .find((line) => line.startsWith("fatal: ") || line.startsWith("ubicrawl agent: ")) ?? ""
  );
}
