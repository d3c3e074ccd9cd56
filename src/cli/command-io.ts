/** Where a command prints text: standard output or error, or what a test reads back. */
export interface TextOutput {
  write(text: string): unknown;
  /** True on a terminal (live progress, pretty logs); absent or false otherwise. */
  readonly isTTY?: boolean;
}

/**
 * Where a command prints: the process's standard output and error ({@link PROCESS_IO}), or, for a test
 * that runs the command in its own process, what it reads back.
 */
export interface CommandIo {
  readonly stdout: TextOutput;
  readonly stderr: TextOutput;
}

/** The process's own standard output and error: every command's default. */
export const PROCESS_IO: CommandIo = { stdout: process.stdout, stderr: process.stderr };
