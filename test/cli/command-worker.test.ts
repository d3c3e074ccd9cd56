import { describe, expect, it } from "vitest";

/**
 * A batch command run in a worker thread with a capped heap (src/cli/command-worker.ts), from the built
 * module: a worker thread loads modules with Node's own loader, which reads no TypeScript.
 */

const { runCommandInWorker } = (await import(
  new URL("../../dist/cli/command-worker.js", import.meta.url).href
)) as typeof import("../../src/cli/command-worker.js");
const { ErrorCode, isUbiError } = (await import(
  new URL("../../dist/errors.js", import.meta.url).href
)) as typeof import("../../src/errors.js");

const COMMANDS = new URL("./fixtures/worker-commands.mjs", import.meta.url);

describe("a command run in a worker", () => {
  it("gets its arguments, prints on the caller's io in order, and answers its exit code", async () => {
    const printed: string[] = [];
    const io = {
      stdout: { write: (text: string) => printed.push(`out: ${text}`) },
      stderr: { write: (text: string) => printed.push(`err: ${text}`), isTTY: true },
    };
    expect(await runCommandInWorker(COMMANDS, "echo", ["a", "b"], io)).toBe(3);
    expect(printed).toEqual(["out: args: a b\n", "err: stderr is a terminal: true\n", "out: done\n"]);
  });

  it("throws what the command threw: the same UbiError code and message", async () => {
    const thrown = await runCommandInWorker(COMMANDS, "fail", [ErrorCode.InvalidArgument]).catch(
      (error) => error,
    );
    expect(isUbiError(thrown, ErrorCode.InvalidArgument)).toBe(true);
    expect((thrown as Error).message).toBe(`failed as ${ErrorCode.InvalidArgument}`);
  });

  it("says a command that outgrows its heap ran out of memory, as an error the CLI reports", async () => {
    const thrown = await runCommandInWorker(COMMANDS, "hoard", [], undefined, {
      maxYoungGenerationSizeMb: 2,
      maxOldGenerationSizeMb: 32,
    }).catch((error) => error);
    expect(isUbiError(thrown, ErrorCode.Overloaded)).toBe(true);
    // The CLI says it as "ubicrawl <command>: <message> [code]".
    expect((thrown as Error).message).toBe("ran out of memory: the command's heap is limited to 32 MB");
  }, 60_000);

  it("says a name the module does not export", async () => {
    await expect(runCommandInWorker(COMMANDS, "nothing", [])).rejects.toThrow(/exports no nothing/);
  });
});
