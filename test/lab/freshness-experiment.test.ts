import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { experimentRunner } from "./experiment-runs.js";

const experiments = experimentRunner();

describe("ubicrawl experiment freshness", () => {
  it("revisits a changing web under each policy at the budget, through a join and a leave, and measures freshness and age against the true changes", async () => {
    // Each page revisited every ~19 s under the uniform policy: within the run, joins and leaves. Every
    // agent, the joined one too, revisits until the crawl's start plus the run (--recrawl-until); the
    // join comes a third of the way from the end of the first pass to then, the leave halfway from the
    // join: a join a fixed time after the first pass came at the end, or after it, when a loaded
    // machine slowed the first pass (at 25 s a first pass of 17 s left no agent to join; at 40 s once
    // the joined agent did not fetch before the end).
    const budget = 20;
    const { result, out, rows } = await experiments.run("freshness", [
      "--policies",
      "uniform,optimal",
      "--run-s",
      "40",
      "--hosts",
      "10",
      "--pages",
      "200",
      "--budget",
      String(budget),
      "--change-s",
      "10",
      "--agents",
      "2",
      "--join-leave",
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
    // The third agent joined, and the second left: the optimal policy's agents had the joined one's
    // budget besides for a while, the uniform policy's revisits stay at pages ÷ budget.
    const budgetOf = (policy: string) => Number(rows.find((row) => row.policy === policy)?.budget_per_s);
    expect(budgetOf("uniform")).toBe(budget);
    expect(budgetOf("optimal")).toBeGreaterThan(budget);
    expect(budgetOf("optimal")).toBeLessThan(budget * 1.5);
    // The model: the optimal allocation of the true rates beats the uniform one at the same budget.
    const model = (policy: string) => Number(rows.find((row) => row.policy === policy)?.model_freshness);
    expect(model("optimal")).toBeGreaterThan(model("uniform"));
    const report = await readFile(join(out, "report.md"), "utf8");
    expect(report).toContain("The optimal policy keeps a collection fresher than the uniform one");
    expect(report).toContain(
      "2, one more joining a third into the revisits, one leaving gracefully two thirds in",
    );
    await access(join(out, "freshness-over-time.svg"));
    await access(join(out, "age-over-time.svg"));
    expect(result.stderr).toMatch(/freshness: optimal: freshness \d\.\d{3}/);
  }, 300_000);
});
