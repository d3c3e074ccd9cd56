import type { PageHistory } from "./page-history.js";

/** Picks the time to a page's next visit from its history. */
export interface RevisitPolicy {
  /** The interval, ms, before the next visit of the page `key` (any stable id) whose last visit `history` records. */
  nextIntervalMs(key: string, history: PageHistory): number;
  /**
   * Takes in the page `key` planned elsewhere (its host handed over to this agent, or its history read
   * back at a restart): from now on it shares the budget, its plan kept as it was made.
   */
  note(key: string, history: PageHistory): void;
  /** Forgets the page `key`: another agent visits it now (its host was handed over). */
  forget(key: string): void;
  /** What it shares its revisit budget among (none for `fixed`), for the cluster's share of budgets. */
  sharing(): BudgetSharing;
  /** The revisits a second it spends now: its own budget, or its part of the cluster's (0: `fixed`). */
  spending(): number;
  /**
   * Called every {@link FOLLOW_BUDGET_EVERY_MS}: when its budget a page has moved by more than
   * {@link FOLLOW_BUDGET_BEYOND} since its plans were made, takes each planned page as planned at the
   * new one and returns, by page key, new frequency ÷ old, by which the recrawler divides the wait
   * left of the page's plan; undefined when it has not (always, for `fixed`).
   */
  followBudget(): ReadonlyMap<string, number> | undefined;
}

/** How often the recrawler asks the policy whether its budget moved, ms. */
export const FOLLOW_BUDGET_EVERY_MS = 1000;

/**
 * How far the budget a page moves before the planned revisits follow it (a share: 0.05 is 5%). A
 * page's next visit is planned at its visit, so without this the plans would lag each move of a
 * cluster's shares (a join, a leave, the first pass) by an interval: a budget grown 3× was spent at
 * its old rate for a whole interval, and the boost that made up for it overshot once the plans caught up.
 */
export const FOLLOW_BUDGET_BEYOND = 0.05;

/** What a policy shares a revisit budget among: its pages, and its own `--recrawl-budget`. */
export interface BudgetSharing {
  /** Pages planned by change rate, sharing the budget. */
  readonly pages: number;
  /** Its own budget, revisits a second (0: none, `fixed`). */
  readonly budget: number;
}

/**
 * The revisits a second a policy may spend, given what it shares: its own budget when alone, or, in a
 * cluster, its part of all the agents' budgets in proportion to its pages (see `RevisitBudgetShare`).
 */
export type BudgetOf = (own: BudgetSharing) => number;

/** `--recrawl fixed`: every page every `intervalMs`. */
export class FixedPolicy implements RevisitPolicy {
  constructor(private readonly intervalMs: number) {}

  /** Always the interval. */
  nextIntervalMs(): number {
    return this.intervalMs;
  }

  /** Nothing kept of a page. */
  note(): void {}

  /** Nothing kept of a page. */
  forget(): void {}

  /** No budget: its interval is fixed. */
  sharing(): BudgetSharing {
    return { pages: 0, budget: 0 };
  }

  /** No budget: its interval is fixed. */
  spending(): number {
    return 0;
  }

  /** No budget to follow. */
  followBudget(): undefined {
    return undefined;
  }
}
