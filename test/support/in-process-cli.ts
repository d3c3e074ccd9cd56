import type { CommandIo } from "../../src/cli/command-io.js";
import { commandFailed, main } from "../../src/cli/main.js";

/** How a command run in this process ended: its exit code, and what it printed on each output. */
export interface InProcessRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `ubicrawl ARGV…` run in the test's process: `main`, as bin/ubicrawl calls it (the command's own code,
 * its exit code and one-line error for a refusal), printing into strings the test reads back.
 */
export async function ubicrawlInProcess(argv: readonly string[]): Promise<InProcessRun> {
  return printedInto((io) => main([...argv], io));
}

/**
 * `ubicrawl NAME ARGV…` run in the test's process by calling `command` itself, with `main`'s handling
 * of what it throws (exit code and one-line error): for a command `main` runs where a test cannot,
 * `export` in a worker thread, which loads the built module (test/cli/command-worker.test.ts).
 */
export async function commandInProcess(
  name: string,
  command: (argv: string[], io: CommandIo) => Promise<number>,
  argv: readonly string[],
): Promise<InProcessRun> {
  return printedInto(async (io) => {
    try {
      return await command([...argv], io);
    } catch (error) {
      return commandFailed(name, error, io.stderr);
    }
  });
}

/** What `run` printed on the io it is given, with the exit code it returned. */
async function printedInto(run: (io: CommandIo) => Promise<number>): Promise<InProcessRun> {
  let stdout = "";
  let stderr = "";
  const code = await run({
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}
