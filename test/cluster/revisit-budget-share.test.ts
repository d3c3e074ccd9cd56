import { describe, expect, it } from "vitest";
import { RevisitBudgetShare } from "../../src/cluster/revisit-budget-share.js";

describe("RevisitBudgetShare", () => {
  it("gives each agent the alive agents' budgets together in proportion to its pages", () => {
    const share = new RevisitBudgetShare();
    share.note("b", { revisitPages: 300, revisitBudget: 7.5 });
    share.note("c", { revisitPages: 20, revisitBudget: 7.5 });
    share.note("d", { revisitPages: 80, revisitBudget: 7.5 });
    // 100 of 500 pages: a fifth of the 30 revisits a second the four agents have.
    expect(share.budgetOf({ pages: 100, budget: 7.5 }, ["b", "c", "d"])).toBeCloseTo(6, 12);
    // The budgets need not be equal: they are summed.
    share.note("c", { revisitPages: 20, revisitBudget: 17.5 });
    expect(share.budgetOf({ pages: 100, budget: 7.5 }, ["b", "c", "d"])).toBeCloseTo(8, 12);
  });

  it("counts only the peers alive in the view, at their latest load", () => {
    const share = new RevisitBudgetShare();
    share.note("b", { revisitPages: 100, revisitBudget: 10 });
    share.note("c", { revisitPages: 500, revisitBudget: 10 });
    share.note("b", { revisitPages: 300, revisitBudget: 10 });
    // c is gone from the view: the budgets of this agent and b over their 400 pages.
    expect(share.budgetOf({ pages: 100, budget: 10 }, ["b"])).toBeCloseTo(5, 12);
  });

  it("forgets a peer gone from the view: if it comes back, it counts from its next heartbeat on", () => {
    const share = new RevisitBudgetShare();
    share.note("b", { revisitPages: 100, revisitBudget: 10 });
    expect(share.budgetOf({ pages: 100, budget: 10 }, ["b"])).toBe(10);
    expect(share.budgetOf({ pages: 100, budget: 10 }, [])).toBe(10);
    // Back in the view, not heard from yet: its last load (100 pages) was forgotten.
    expect(share.budgetOf({ pages: 100, budget: 10 }, ["b"])).toBe(10);
    share.note("b", { revisitPages: 300, revisitBudget: 10 });
    expect(share.budgetOf({ pages: 100, budget: 10 }, ["b"])).toBe(5);
  });

  it("leaves out peers that report no budget (no --recrawl by change rate, or an older agent), and never heard ones", () => {
    const share = new RevisitBudgetShare();
    share.note("old", { revisitPages: 0, revisitBudget: 0 });
    expect(share.budgetOf({ pages: 100, budget: 3 }, ["old", "unknown"])).toBe(3);
  });

  it("keeps its own budget while it has no page, and counts a peer with a budget but no page yet", () => {
    const share = new RevisitBudgetShare();
    share.note("newcomer", { revisitPages: 0, revisitBudget: 4 });
    expect(share.budgetOf({ pages: 0, budget: 4 }, ["newcomer"])).toBe(4);
    // The newcomer's budget goes to the pages of those that have some until it is handed its own.
    expect(share.budgetOf({ pages: 50, budget: 4 }, ["newcomer"])).toBe(8);
  });
});
