import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareDataDir } from "../../src/storage/data-dir.js";
import { errorLine, logEvent } from "../agent/harness.js";
import { type InProcessRun, ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl agent` refuses, in this process, what it cannot start with — seeds that are not URLs, a
 * data dir that is a file or another agent's, no seeds on a data dir that holds no crawl — saying
 * what is wrong and what to do, with the exit code of each. The refusals that need a running agent
 * or a crawl, and the same errors' wiring in a real process: test/cli/agent-errors.test.ts.
 */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-agent-refusals-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function agent(...args: string[]): Promise<InProcessRun> {
  return ubicrawlInProcess(["agent", "--progress", "off", ...args]);
}

/** The error line of `result` (the CLI's, or the agent's fatal record), after its exit code and code. */
function expectError(result: InProcessRun, exitCode: number, code: string): string {
  expect(result.code, result.stderr).toBe(exitCode);
  const line = errorLine(result.stderr);
  expect(line, result.stderr).toMatch(new RegExp(`\\[${code}\\]$`));
  return line;
}

describe("--seeds", () => {
  it("a value that is neither a readable file nor a URL says exactly that", async () => {
    const line = expectError(
      await agent("--id", "a", "--data", join(dir, "s1"), "--seeds", "example.com"),
      2,
      "UBI_ERR_INVALID_ARGUMENT",
    );
    expect(line).toContain('--seeds: "example.com" is neither a readable file nor a URL');
    expect(line).toContain("http://");
  });

  it("a file without any http(s) URL is refused, its bad lines named with their numbers", async () => {
    const seeds = join(dir, "all-bad.txt");
    await writeFile(seeds, "# a comment\nexample.com\n\nftp://example.com/file\n");
    const line = expectError(
      await agent("--id", "a", "--data", join(dir, "s2"), "--seeds", seeds),
      2,
      "UBI_ERR_INVALID_ARGUMENT",
    );
    expect(line).toContain("no http(s) URL to start from");
    expect(line).toContain(`${seeds}:2: "example.com" is not an http(s) URL`);
    expect(line).toContain(`${seeds}:4: "ftp://example.com/file" is not an http(s) URL`);
  });
});

describe("an agent alone with nothing to crawl", () => {
  it("exits 2 at once without seeds on a data dir that holds no crawl, saying to give --seeds", async () => {
    // No --exit-when-done: nothing could ever give it work (no --listen), so it does not wait for any.
    const data = join(dir, "no-seeds");
    const result = await agent("--id", "n", "--data", data);
    const line = expectError(result, 2, "UBI_ERR_INVALID_ARGUMENT");
    expect(line).toContain(`nothing to crawl: no --seeds, and the data dir ${data} holds no crawl to resume`);
    expect(line).toContain("Give --seeds");
    // The same with --exit-when-done.
    expectError(await agent("--id", "n", "--data", data, "--exit-when-done"), 2, "UBI_ERR_INVALID_ARGUMENT");
  });
});

describe("--data", () => {
  it("a file is refused as a bad --data", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    const line = expectError(await agent("--id", "a", "--data", file), 2, "UBI_ERR_INVALID_ARGUMENT");
    expect(line).toContain(`--data ${file} is a file, not a folder`);
  });

  it("another agent's data dir is refused, naming both ids, in a fatal record", async () => {
    const data = join(dir, "owned");
    // As agent owner's first start leaves it (the crawl's own files do not enter the decision).
    await prepareDataDir(data, "owner");
    const refused = await agent("--id", "intruder", "--data", data, "--exit-when-done");
    const line = expectError(refused, 1, "UBI_ERR_DATA_DIR_OTHER_AGENT");
    expect(line).toContain(`the data dir ${data} belongs to agent "owner", not "intruder"`);
    expect(line).toContain("--id owner");
    expect(logEvent(refused.stderr, "failed")).toMatchObject({ level: "fatal", agent: "intruder" });
  });
});
