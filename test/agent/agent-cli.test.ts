import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_DEFAULTS } from "../../src/agent/agent-options.js";
import { type ExitResult, killAllUbicrawl, runUbicrawl } from "./harness.js";

/** `ubicrawl agent` usage errors and help: no crawl starts, so no test web is needed. */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-agent-cli-"));
});

afterAll(async () => {
  await killAllUbicrawl();
  await rm(dir, { recursive: true, force: true });
});

function agent(...args: string[]): Promise<ExitResult> {
  return runUbicrawl(["agent", ...args], { cwd: dir }).waitForExit(20_000);
}

/** Asserts exit code 2 and exactly one stderr line, an invalid-argument error mentioning `flag`. */
function expectUsageError(result: ExitResult, flag: string): void {
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.split("\n").filter((line) => line !== "");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^ubicrawl agent: /);
  expect(lines[0]).toContain(flag);
  expect(lines[0]).toContain("[UBI_ERR_INVALID_ARGUMENT]");
  expect(result.stdout).toBe("");
}

describe("ubicrawl agent usage errors exit 2 with one line naming the flag", () => {
  it("an unknown flag", async () => {
    expectUsageError(
      await agent("--id", "a", "--data", join(dir, "d"), "--no-such-flag", "1"),
      "--no-such-flag",
    );
  });

  it("a missing --id", async () => {
    expectUsageError(await agent("--data", join(dir, "d")), "--id");
  });

  it("a bad integer", async () => {
    const result = await agent("--id", "a", "--data", join(dir, "d"), "--delay-ms", "abc");
    expectUsageError(result, "--delay-ms");
    expect(result.stderr).toContain('"abc"');
  });

  it("an integer below the minimum", async () => {
    expectUsageError(
      await agent("--id", "a", "--data", join(dir, "d"), "--max-active-hosts", "0"),
      "--max-active-hosts",
    );
  });

  it("a log level or format that does not exist", async () => {
    const level = await agent("--id", "a", "--data", join(dir, "d"), "--log-level", "loud");
    expectUsageError(level, "--log-level");
    expect(level.stderr).toContain("fatal, error, warn, info, debug, trace, silent");
    expectUsageError(
      await agent("--id", "a", "--data", join(dir, "d"), "--log-format", "xml"),
      "--log-format",
    );
  });

  it("an unreadable seeds file", async () => {
    const missing = join(dir, "no-such-seeds");
    const result = await agent("--id", "a", "--data", join(dir, "d"), "--seeds", missing);
    expectUsageError(result, "--seeds");
    expect(result.stderr).toContain(missing);
  });
});

describe("ubicrawl agent --help", () => {
  it("lists every contract flag, with its default", async () => {
    const result = await agent("--help");
    expect(result.code, result.stderr).toBe(0);
    const help = result.stdout;
    const flagLine = (flag: string) => {
      const index = help.search(new RegExp(`^ {2}--${flag}\\b`, "m"));
      expect(index, `--${flag} is not listed`).toBeGreaterThanOrEqual(0);
      // Long flags put their help on the next line.
      return help.slice(index).split("\n").slice(0, 2).join("\n");
    };
    const contract = [
      "id",
      "data",
      "seeds",
      "hosts-file",
      "allow-net",
      "delay-ms",
      "max-active-hosts",
      "max-pages-per-host",
      "max-depth",
      "user-agent",
      "scope",
      "exit-when-done",
    ];
    for (const flag of contract) flagLine(flag);
    expect(flagLine("delay-ms")).toContain(`(default: ${AGENT_DEFAULTS.delayMs})`);
    expect(flagLine("max-active-hosts")).toContain(`(default: ${AGENT_DEFAULTS.maxActiveHosts})`);
    expect(flagLine("max-pages-per-host")).toContain(`(default: ${AGENT_DEFAULTS.maxPagesPerHost})`);
    expect(flagLine("max-depth")).toContain(`(default: ${AGENT_DEFAULTS.maxDepth})`);
    expect(flagLine("user-agent")).toContain(`(default: ${AGENT_DEFAULTS.userAgent})`);
    expect(help).toMatch(/^Usage: ubicrawl agent /);
  });
});
