import { main } from "../../src/cli/main.js";

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
  let stdout = "";
  let stderr = "";
  const code = await main([...argv], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}
