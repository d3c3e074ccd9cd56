import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../agent/harness.js";
import { gnuTimeMissing, skipWithout } from "../support/tools.js";

describe.skipIf(skipWithout(gnuTimeMissing))("bench/startup.mjs", () => {
  it("starts each command from the bundle and from tsc's modules, and reports both ways' CPU and wall time", () => {
    const result = spawnSync(process.execPath, ["bench/startup.mjs", "--rounds", "1", "--json"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(result.status, result.stderr).toBe(0);
    const rows = JSON.parse(result.stdout) as Record<string, string | number>[];
    expect(rows.map((row) => row.command)).toEqual([
      "ubicrawl --version",
      "ubicrawl stats --help",
      "ubicrawl agent --help",
    ]);
    for (const row of rows) {
      for (const field of ["modulesCpuMs", "bundleCpuMs", "modulesWallMs", "bundleWallMs"]) {
        expect(row[field], `${row.command} ${field}`).toBeGreaterThan(0);
      }
    }
  }, 60_000);
});
