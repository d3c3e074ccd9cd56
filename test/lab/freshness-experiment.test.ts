import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { experimentRunner } from "./experiment-runs.js";

const experiments = experimentRunner();

describe("ubicrawl experiment freshness", () => {
  it("revisits a changing web under each policy at the budget, and measures freshness and age against the true changes", async () => {
    const budget = 10;
    const { result, out, rows } = await experiments.run("freshness", [
      "--policies",
      "uniform,optimal",
      "--run-s",
      "25",
      "--hosts",
      "10",
      "--pages",
      "200",
      "--budget",
      String(budget),
      "--change-s",
      "10",
    ]);
    expect(rows.map((row) => row.policy)).toEqual(["uniform", "optimal"]);
    for (const row of rows) {
      for (const column of ["freshness", "model_freshness"]) {
        const value = Number(row[column]);
        expect(value, `${row.policy} ${column}`).toBeGreaterThan(0);
        expect(value, `${row.policy} ${column}`).toBeLessThanOrEqual(1);
      }
      expect(Number(row.age_s)).toBeGreaterThan(0);
      // Revisits were made after the first pass, and the budget was not overspent (a loaded machine
      // only makes fewer).
      expect(Number(row.revisits_per_s)).toBeGreaterThan(0);
      expect(Number(row.revisits_per_s)).toBeLessThan(budget * 1.5);
    }
    // The model: the optimal allocation of the true rates beats the uniform one at the same budget.
    const model = (policy: string) => Number(rows.find((row) => row.policy === policy)?.model_freshness);
    expect(model("optimal")).toBeGreaterThan(model("uniform"));
    const report = await readFile(join(out, "report.md"), "utf8");
    expect(report).toContain("The optimal policy keeps a collection fresher than the uniform one");
    await access(join(out, "freshness-over-time.svg"));
    await access(join(out, "age-over-time.svg"));
    expect(result.stderr).toMatch(/freshness: optimal: freshness \d\.\d{3}/);
  }, 300_000);
});
