import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl experiment`, run in this process: its list of experiments, an experiment's own --help, and
 * its refusals of bad flags and unknown experiments (exit 2, the flag named), all before anything is
 * run or written. The experiments themselves, as a user runs them (a real process, its exit code and
 * report): test/lab.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-experiment-command-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("ubicrawl experiment's refusals", () => {
  it("refuses bad flags and unknown experiments with a clear error and exit 2, writing nothing", async () => {
    const cases: [string[], string][] = [
      [["balance", "--agents", "1"], '--agents: "1" is not an integer in 2..5000'],
      [["balance", "--capacities", "huge"], '--capacities: "huge" is not one of uniform, mixed'],
      [["modes", "--modes", "exchange,flood"], '--modes: "flood" is not one of exchange, firewall, cross'],
      [["modes", "--agents", "0,2"], '--agents: "0" is not an integer in 1..32'],
      [
        ["freshness", "--policies", "uniform,lucky"],
        '--policies: "lucky" is not one of uniform, proportional, optimal',
      ],
      [["nosuch"], 'no experiment "nosuch": the experiments are balance'],
    ];
    for (const [args, message] of cases) {
      const out = join(dir, args.join("-"));
      const result = await ubicrawlInProcess(["experiment", ...args, "--out", out]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`ubicrawl experiment: ${message}`);
      expect(result.stderr).toMatch(/\[UBI_ERR_INVALID_ARGUMENT\]\n$/);
      expect(result.stdout).toBe("");
      await expect(access(out)).rejects.toMatchObject({ code: "ENOENT" });
    }
    const noOut = await ubicrawlInProcess(["experiment", "balance"]);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain("--out DIR is required");
    const stray = await ubicrawlInProcess(["experiment", "balance", "extra", "--out", join(dir, "x")]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('unexpected argument "extra"');
  });

  it("without an experiment prints its help on stdout and exits 2", async () => {
    const result = await ubicrawlInProcess(["experiment"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Usage: ubicrawl experiment NAME [flags] --out DIR");
    expect(result.stderr).toBe("");
  });
});

describe("ubicrawl experiment --help", () => {
  it("lists the experiments, each name apart from its summary", async () => {
    const result = await ubicrawlInProcess(["experiment", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/balance\s+balance of identifier-seeded consistent hashing/);
    // Every experiment's name stands apart from its summary, the longest one ("partitioning") too.
    const list = result.stdout.slice(result.stdout.indexOf("Experiments:\n") + "Experiments:\n".length);
    const rows = list.slice(0, list.indexOf("\n'ubicrawl experiment NAME --help'")).split("\n");
    expect(rows.map((row) => /^ {2}(\S+) {2,}\S/.exec(row)?.[1])).toEqual([
      "balance",
      "modes",
      "batching",
      "replication",
      "partitioning",
      "politeness",
      "faults",
      "bandwidth",
      "scaling",
      "freshness",
    ]);
    expect(result.stdout).toMatch(/^ {2}partitioning {2,}host hash vs URL hash/m);
  });

  it("gives an experiment's own flags, with --out", async () => {
    const result = await ubicrawlInProcess(["experiment", "freshness", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ubicrawl experiment freshness [flags] --out DIR");
    expect(result.stdout).toContain("--policies");
    expect(result.stdout).toContain("--out DIR");
  });
});
