import type { BudgetSharing } from "../recrawl/index.js";

/** What a peer's heartbeat load says of its revisits (the proto's `AgentLoad.revisit_*`). */
export interface RevisitLoad {
  readonly revisitPages: number;
  readonly revisitBudget: number;
}

/**
 * The cluster's revisit budgets, shared in proportion to the pages each agent revisits by change rate.
 *
 * Cho and Garcia-Molina's optimal allocation is for one budget over all pages. Each agent spending its
 * own `--recrawl-budget` on the pages it happens to own is not that: hosts are heavy-tailed and their
 * places on the circle random, so one agent of four may own 65% of the pages and another 5%. On the
 * freshness experiment's web such a split left at best 0.90 of the one-budget optimum; shared by
 * pages, 1.00 (README, freshness). So every agent reports its pages and its own budget in each
 * heartbeat, and spends the sum of the budgets of the agents alive in its view times its share of their
 * pages. An agent that reports no budget (no `--recrawl` by change rate, or one that predates the fields)
 * is left out of both sums: it neither adds budget nor takes a share.
 */
export class RevisitBudgetShare {
  private readonly loads = new Map<string, RevisitLoad>();

  /** Takes in the revisit figures of `agentId`'s latest heartbeat load. */
  note(agentId: string, load: RevisitLoad): void {
    this.loads.set(agentId, { revisitPages: load.revisitPages, revisitBudget: load.revisitBudget });
  }

  /**
   * The revisits a second this agent may spend, given what it shares (`own`) and the agents alive in
   * its view besides itself: its own budget when it has no page, or no peer reports one.
   */
  budgetOf(own: BudgetSharing, peers: Iterable<string>): number {
    const alive = new Set(peers);
    // A member no longer alive is heard of again, if it comes back, with its next heartbeat.
    for (const id of this.loads.keys()) if (!alive.has(id)) this.loads.delete(id);
    if (own.pages === 0 || own.budget <= 0) return own.budget;
    let budget = own.budget;
    let pages = own.pages;
    for (const id of alive) {
      const load = this.loads.get(id);
      if (load === undefined || !(load.revisitBudget > 0)) continue;
      budget += load.revisitBudget;
      pages += load.revisitPages;
    }
    return (budget * own.pages) / pages;
  }
}
