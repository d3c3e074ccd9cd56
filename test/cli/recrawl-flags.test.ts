import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatConfig, parseFlagsWithConfig } from "../../src/cli/config-file.js";
import { AGENT_FLAGS } from "../../src/flags/agent-flags.js";
import { parseDuration } from "../../src/flags/duration.js";
import { parseFlags } from "../../src/flags/flag-parser.js";
import { runUbicrawl } from "../agent/harness.js";

describe("durations (the ms package)", () => {
  it("reads 2s, 10m, 1.5h and 7d as milliseconds, a bare number as milliseconds", () => {
    expect(parseDuration("2s", "--x")).toBe(2 * 1000);
    expect(parseDuration("10m", "--x")).toBe(10 * 60 * 1000);
    expect(parseDuration("1.5h", "--x")).toBe(1.5 * 3600 * 1000);
    expect(parseDuration("7d", "--x")).toBe(7 * 86_400 * 1000);
    expect(parseDuration("250", "--x")).toBe(250);
  });

  it("refuses what is not a positive duration, naming the flag", () => {
    for (const bad of ["soon", "", "-1s", "0s"])
      expect(() => parseDuration(bad, "--recrawl-min")).toThrow(/--recrawl-min/);
  });
});

describe("--recrawl flags", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-recrawl-flags-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("default to one-shot crawls, with the intervals' defaults as durations", () => {
    const flags = parseFlags([], AGENT_FLAGS);
    expect(flags.recrawl).toBe("off");
    expect(flags["recrawl-interval"]).toBe(86_400_000);
    expect(flags["recrawl-horizon"]).toBeUndefined();
    expect(flags["recrawl-budget"]).toBe(1);
  });

  it("parse on the command line and in a config file alike, the command line winning", async () => {
    const config = join(dir, "agent.yaml");
    await writeFile(
      config,
      "recrawl: adaptive\nrecrawl-min: 10m\nrecrawl-max: 7d\nrecrawl-budget: 0.5\nrecrawl-horizon: 2h\n",
    );
    const flags = await parseFlagsWithConfig(["--config", config, "--recrawl-budget", "3"], AGENT_FLAGS);
    expect(flags.recrawl).toBe("adaptive");
    expect(flags["recrawl-min"]).toBe(600_000);
    expect(flags["recrawl-max"]).toBe(7 * 86_400_000);
    expect(flags["recrawl-budget"]).toBe(3);
    expect(flags["recrawl-horizon"]).toBe(7_200_000);
    await writeFile(config, "recrawl-budget: lots\n");
    await expect(parseFlagsWithConfig(["--config", config], AGENT_FLAGS)).rejects.toThrow(/recrawl-budget/);
  });

  it("take --recrawl-until as an instant on the command line and in a config file, and write it back so", async () => {
    const christmas = Date.UTC(2026, 11, 24, 18);
    expect(parseFlags(["--recrawl-until", "2026-12-24T19:00+01:00"], AGENT_FLAGS)["recrawl-until"]).toBe(
      christmas,
    );
    expect(() => parseFlags(["--recrawl-until", "2026-12-24T19:00"], AGENT_FLAGS)).toThrow(
      /--recrawl-until must be a date and time with its offset/,
    );
    const config = join(dir, "until.yaml");
    await writeFile(config, "recrawl: fixed\nrecrawl-until: 2026-12-24T18:00:00Z\n");
    const flags = await parseFlagsWithConfig(["--config", config], AGENT_FLAGS);
    expect(flags["recrawl-until"]).toBe(christmas);
    // --print-config writes it as a date, which --config reads back.
    const printed = formatConfig(flags, AGENT_FLAGS);
    expect(printed).toContain("recrawl-until: 2026-12-24T18:00:00.000Z");
    await writeFile(config, printed);
    expect((await parseFlagsWithConfig(["--config", config], AGENT_FLAGS))["recrawl-until"]).toBe(christmas);
    await writeFile(config, "recrawl-until: 1796311031554\n");
    await expect(parseFlagsWithConfig(["--config", config], AGENT_FLAGS)).rejects.toThrow(
      /"recrawl-until" must be a date and time/,
    );
  });

  it("refuse --exit-when-done without a horizon, saying why (a real agent process)", async () => {
    const result = await runUbicrawl([
      "agent",
      "--id",
      "a1",
      "--data",
      join(dir, "data"),
      "--seeds",
      "http://a.test/",
      "--recrawl",
      "fixed",
      "--exit-when-done",
    ]).waitForExit(30_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--recrawl-horizon/);
  });

  it("are explained in --help", async () => {
    const result = await runUbicrawl(["agent", "--help"]).waitForExit(30_000);
    expect(result.stdout).toMatch(/--recrawl off\|fixed\|adaptive/);
    expect(result.stdout).toMatch(/--recrawl-interval DURATION/);
    expect(result.stdout).toMatch(/--exit-when-done needs it or --recrawl-until/);
    expect(result.stdout).toMatch(/--recrawl-until TIME/);
  });
});
