import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseLogRecord } from "../../src/logging/index.js";
import { logEvent, logRecords, spawnAgent, startWebFixture, type WebFixture } from "./harness.js";

/** The agent's log: JSON records off a terminal, `--log-level`, `--log-format` (fatal records: agent-errors). */

let fixture: WebFixture;

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 9, hosts: 6, pages: 60 });
});

afterAll(async () => {
  await fixture?.stop();
});

describe("an agent's log", () => {
  it("is JSON records on a pipe, each with the agent's id; progress records carry the figures", async () => {
    const result = await spawnAgent(fixture, { id: "json", flags: ["--progress", "log"] }).waitForExit(
      60_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.trim().split("\n");
    const records = logRecords(result.stderr);
    expect(records).toHaveLength(lines.length);
    for (const record of records) expect(record).toMatchObject({ agent: "json", pid: expect.any(Number) });
    expect(records.at(-1)).toMatchObject({ event: "stopped", reason: "done", queuedUrls: 0 });
    const progress = records.filter((record) => record.event === "progress");
    for (const record of progress) {
      expect(record).toMatchObject({
        level: "info",
        pagesFetched: expect.any(Number),
        queuedUrls: expect.any(Number),
      });
    }
  });

  it("keeps only records at --log-level or above", async () => {
    const result = await spawnAgent(fixture, { id: "quiet", flags: ["--log-level", "warn"] }).waitForExit(
      60_000,
    );
    expect(result.code, result.stderr).toBe(0);
    // The test web has a host whose robots.txt is unavailable (an error counted, not logged) and no
    // fault worth a warning: nothing at all.
    expect(logRecords(result.stderr).filter((record) => record.level === "info")).toEqual([]);
    expect(logEvent(result.stderr, "stopped")).toBeUndefined();
  });

  it("writes lines for people with --log-format pretty, even on a pipe", async () => {
    const result = await spawnAgent(fixture, { id: "pretty", flags: ["--log-format", "pretty"] }).waitForExit(
      60_000,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/INFO.*: stopped \(done\) after [\d.]+ s: \d+ pages/);
    expect(result.stderr).toMatch(/^\s+pagesFetched: \d+$/m);
    expect(result.stderr.split("\n").some((line) => parseLogRecord(line) !== undefined)).toBe(false);
  });
});
