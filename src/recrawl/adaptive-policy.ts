import type { Clock } from "../clock.js";
import { optimalFrequencies } from "./change-rate.js";
import { estimatedRate, hintedPeriodMs, rateEvidence } from "./page-estimates.js";
import type { PageHistory } from "./page-history.js";
import { fitRatePrior, type GammaPrior, posteriorRate, type RateEvidence } from "./rate-prior.js";
import {
  type BudgetOf,
  type BudgetSharing,
  FOLLOW_BUDGET_BEYOND,
  type RevisitPolicy,
} from "./revisit-policy.js";

/** The bounds and budget `AdaptivePolicy` plans within (`RecrawlOptions` has them). */
export interface AdaptiveBounds {
  /** The shortest interval a page gets, ms. */
  readonly minMs: number;
  /** The longest interval a page gets, ms. */
  readonly maxMs: number;
  /** Its own revisit budget, revisits a second. */
  readonly budget: number;
}

/**
 * How far a hint (a page's age at its first visit, {@link PageHistory.ageAtFirstVisitMs}) may move the
 * frequency of a page without its own estimate from its even share, either way: a hint, not the truth.
 */
export const HINT_SPAN = 4;
/**
 * How far past its last visit a page with an estimate may be planned, as a multiple of the time its
 * visits span ({@link PageHistory.observedMs}), though never sooner than its even share of the budget
 * would bring it back: an estimate from a short history is not trusted further than the history
 * reaches. A page the allocation gives no visit (found unchanged so far, or changing too often for the
 * budget) is thus looked at again after its history's span — the span doubling each time, so a page
 * that never changes reaches --recrawl-max after a few visits — rather than left at the maximum for
 * good on an estimate of two or three intervals (a page that changes every minute is found unchanged
 * twice in a row one time in four at 30 s intervals). And a page the allocation dropped while the
 * estimates were young comes back once the allocation, its rates known better, gives it visits again.
 */
export const ESTIMATE_REACH = 1;
/** The optimal allocation is computed again at most this often (it reads every page's rate). */
const REALLOCATE_EVERY_MS = 1000;
/**
 * The pages' prior is fitted again at most this often once it exists (a fit reads every page's evidence
 * some hundred times; the prior moves slowly, as the pages' evidence grows).
 */
const REFIT_PRIOR_EVERY_MS = 10_000;
/**
 * How much of the gap between the budget and the revisits planned (each page's latest interval's
 * frequency, summed) one reallocation closes, as an exponent of their ratio. The plans fall short of
 * the allocation: each was made on its page's estimate at its last visit, and a page whose noisy
 * estimate gave it a long interval holds it longer than one given a short one (the intervals in force
 * at any time are length-biased), so the revisits actually planned run some 5% under the budget when
 * the estimates are young. A small gain closes that over a few dozen reallocations without
 * overshooting: the plans move only as pages are visited.
 */
const BUDGET_GAIN = 0.05;
/** The most the allocation is raised above the budget to make the plans spend it. */
const MAX_BUDGET_BOOST = 1.5;

/**
 * `--recrawl adaptive`: each page's change rate estimated from its history ({@link estimatedRate}) —
 * from its `Last-Modified` dates, shrunk towards the other pages' (their prior, a share of still pages
 * and a Gamma for the others, refitted every {@link REFIT_PRIOR_EVERY_MS}: {@link fitRatePrior};
 * `proportional` shrinks them too: both policies read the same estimates) —, and its interval the
 * inverse of the frequency the freshness-optimal allocation of the budget gives it, within [min, max],
 * and within its estimate's
 * reach ({@link ESTIMATE_REACH}): a page the allocation gives no visits (it never changes, or changes
 * too often to be kept fresh at this budget) comes back after the time its visits span, up to the
 * maximum, those visits coming off the others' part of the budget.
 * A page with too short a history for an estimate whose sitemap gave it a `<changefreq>` gets the
 * period it says ({@link hintedPeriodMs}) within [min, max] — `always` the minimum, `never` the
 * maximum —, spent instead of its even share of the budget. The other pages with too short a history
 * share their part of the budget, each one weighted by its age at its
 * first visit (sitemap `<lastmod>` or `Last-Modified`): its frequency moved towards 1 / age, within
 * {@link HINT_SPAN}× of the even share, and the weights normalized so that the part is spent, not more.
 */
export class AdaptivePolicy implements RevisitPolicy {
  /** Estimated rates (per second) by page; NaN while a page's history is too short. */
  private readonly rates = new Map<string, number>();
  /** The `Last-Modified` evidence of each page whose estimate reads it ({@link rateEvidence}). */
  private readonly evidence = new Map<string, RateEvidence>();
  /** The pages' prior, as last fitted; undefined while too few pages have evidence. */
  private prior: GammaPrior | undefined;
  private priorFittedAtMs = Number.NEGATIVE_INFINITY;
  /** The time its visits span ({@link PageHistory.observedMs}) of each page with an estimate, ms. */
  private readonly spans = new Map<string, number>();
  /** The allocation's frequency by page, from the last reallocation. */
  private frequencies = new Map<string, number>();
  private allocatedAtMs = Number.NEGATIVE_INFINITY;
  /** The budget of the last reallocation, revisits a second. */
  private allocatedBudget = 0;
  private dirty = false;
  /** The hint's weight of each page without an estimate (1 without a hint), and their sum. */
  private readonly weights = new Map<string, number>();
  private weightSum = 0;
  /** Each page's latest interval as a frequency (visits a second), and their sum: the revisits planned. */
  private readonly planned = new Map<string, number>();
  private plannedSum = 0;
  /** What the pages planned on their reach spent beyond their allocation at the last reallocation, visits a second. */
  private reachExcess = 0;
  /** The factor raising the budget allocated so that the revisits planned spend the budget (see {@link BUDGET_GAIN}). */
  private boost = 1;
  /**
   * The budget a page the plans were made at, revisits a second, as {@link followBudget} last took
   * them (0: not yet).
   */
  private plansShare = 0;

  /**
   * `allocate` shares a budget among pages by their rates: the freshness-optimal allocation by
   * default, {@link proportionalFrequencies} for `--recrawl proportional`.
   */
  constructor(
    private readonly options: AdaptiveBounds,
    private readonly clock: Clock,
    private readonly allocate: (rates: readonly number[], budget: number) => number[] = optimalFrequencies,
    private readonly budgetOf: BudgetOf = (own) => own.budget,
  ) {}

  /** Its pages and its own budget. */
  sharing(): BudgetSharing {
    return { pages: this.rates.size, budget: this.options.budget };
  }

  /** The revisits a second it may spend now (its own budget, or its part of the cluster's). */
  spending(): number {
    return this.budgetOf(this.sharing());
  }

  /**
   * When the budget a page (the budget over the pages, as plans are made) moved by more than
   * {@link FOLLOW_BUDGET_BEYOND} since the plans were made: what each planned page would be given now
   * (the allocation's frequency at the new budget, or its weighted even share; a sitemap-hinted page
   * keeps its own), within [min, max], becomes its planned frequency (their sum is what the boost
   * follows), and new ÷ old is returned by page for the recrawler to scale the wait left of its plan.
   * The boost then sees plans on budget and holds, instead of chasing the step. The budget a page, not
   * the budget: an agent handed pages gets more of a cluster's budget, but each page less; and by page,
   * as a plan clamped at a bound, or hinted, is not in proportion to the budget.
   */
  followBudget(): ReadonlyMap<string, number> | undefined {
    const budget = this.spending();
    const share = this.rates.size === 0 ? 0 : budget / this.rates.size;
    if (!(share > 0)) return undefined;
    if (this.plansShare <= 0) {
      this.plansShare = share;
      return undefined;
    }
    if (Math.abs(share / this.plansShare - 1) <= FOLLOW_BUDGET_BEYOND) return undefined;
    this.plansShare = share;
    this.reallocate(this.clock.now(), budget, true);
    const ratios = new Map<string, number>();
    for (const [key, planned] of this.planned) {
      const now = this.frequencyNow(key, share);
      if (now === undefined || !(planned > 0)) continue;
      const bounded = Math.min(1000 / this.options.minMs, Math.max(1000 / this.options.maxMs, now));
      ratios.set(key, bounded / planned);
      this.plannedSum += bounded - planned;
      this.planned.set(key, bounded);
    }
    return ratios;
  }

  /**
   * The frequency page `key` would be planned at now, with `evenShare` the budget a page: undefined for
   * a page whose plan does not depend on the budget (a sitemap's hint).
   */
  private frequencyNow(key: string, evenShare: number): number | undefined {
    const rate = this.rates.get(key);
    if (rate === undefined) return undefined;
    if (!Number.isNaN(rate)) {
      // As nextIntervalMs plans it: no longer than the estimate's reach.
      const reach = this.reachMs(this.spans.get(key) ?? 0, evenShare);
      return Math.max(this.frequencies.get(key) ?? evenShare, 1000 / reach);
    }
    const weight = this.weights.get(key);
    if (weight === undefined) return undefined;
    return (evenShare * weight * this.weights.size) / this.weightSum;
  }

  /**
   * The page's change rate as the allocation takes it, per second: its estimate, shrunk towards the
   * other pages' as of the last reallocation when its dates are evidence; NaN while its history is too short.
   */
  rateOf(key: string): number {
    const evidence = this.evidence.get(key);
    if (evidence !== undefined && this.prior !== undefined) return posteriorRate(this.prior, evidence);
    return this.rates.get(key) ?? Number.NaN;
  }

  /**
   * Takes the page in with its estimate, and its plan (from its last visit to its next) as its part of
   * the revisits planned. Without it a newcomer sharing its budget among the few pages it had visited
   * yet gave them intervals of the shortest, while the pages handed to it kept plans made for another
   * agent's share.
   */
  note(key: string, history: PageHistory): void {
    const rate = this.register(key, history);
    if (Number.isNaN(rate) && hintedPeriodMs(history) === undefined)
      this.weigh(key, this.weights.get(key) ?? 1);
    if (history.nextAtMs === undefined) return;
    const plannedMs = Math.max(this.options.minMs, history.nextAtMs - history.lastAtMs);
    this.plannedSum += 1000 / plannedMs - (this.planned.get(key) ?? 0);
    this.planned.set(key, 1000 / plannedMs);
  }

  /** The interval the page gets now; its new estimate counts from the next reallocation on. */
  nextIntervalMs(key: string, history: PageHistory): number {
    const rate = this.register(key, history);
    const now = this.clock.now();
    const budget = this.spending();
    if (!this.dirty && (this.boostWouldMove(budget) || this.budgetMoved(budget))) this.dirty = true;
    if (this.dirty && now - this.allocatedAtMs >= REALLOCATE_EVERY_MS) this.reallocate(now, budget);
    const evenShare = budget / this.rates.size;
    const hinted = Number.isNaN(rate) ? hintedPeriodMs(history) : undefined;
    let frequency: number;
    if (hinted !== undefined) {
      this.weigh(key, undefined);
      frequency = 1000 / hinted;
    } else if (Number.isNaN(rate)) {
      const age = history.ageAtFirstVisitMs;
      // A page changed 1 / evenShare ago weighs 1; one changed sooner more, one changed long ago less.
      const weight =
        age === undefined
          ? 1
          : Math.min(HINT_SPAN, Math.max(1 / HINT_SPAN, 1000 / evenShare / Math.max(1, age)));
      this.weigh(key, weight);
      frequency = (evenShare * weight * this.weights.size) / this.weightSum;
    } else {
      this.weigh(key, undefined);
      frequency = this.frequencies.get(key) ?? evenShare;
    }
    let interval = frequency > 0 ? 1000 / frequency : this.options.maxMs;
    if (!Number.isNaN(rate)) interval = Math.min(interval, this.reachMs(history.observedMs, evenShare));
    const plannedMs = Math.min(this.options.maxMs, Math.max(this.options.minMs, interval));
    this.plannedSum += 1000 / plannedMs - (this.planned.get(key) ?? 0);
    this.planned.set(key, 1000 / plannedMs);
    return plannedMs;
  }

  /** Records the page's estimate (returned: NaN while its history is too short), its span and its evidence. */
  private register(key: string, history: PageHistory): number {
    const rate = estimatedRate(history);
    if (!Object.is(this.rates.get(key), rate)) {
      this.rates.set(key, rate);
      this.dirty = true;
    }
    if (Number.isNaN(rate)) this.spans.delete(key);
    else this.spans.set(key, history.observedMs);
    const evidence = rateEvidence(history);
    if (evidence === undefined) this.evidence.delete(key);
    else this.evidence.set(key, evidence);
    return rate;
  }

  /**
   * Drops the page from the budget's sharing, its estimate from the prior's evidence and its planned
   * revisits from the sum the budget's boost follows: the budget is shared among the pages this agent
   * still visits.
   */
  forget(key: string): void {
    if (!this.rates.delete(key)) return;
    this.evidence.delete(key);
    this.spans.delete(key);
    this.weigh(key, undefined);
    this.plannedSum -= this.planned.get(key) ?? 0;
    this.planned.delete(key);
    this.dirty = true;
  }

  /** The revisits a second planned now: each page's latest interval as a frequency, summed. */
  plannedRevisitsPerSecond(): number {
    return this.plannedSum;
  }

  /** True when the plans miss the budget by more than 1% and the boost is free to move towards it. */
  private boostWouldMove(budget: number): boolean {
    const ratio = budget / this.plannedSum;
    return (ratio > 1.01 && this.boost < MAX_BUDGET_BOOST) || (ratio < 0.99 && this.boost > 1);
  }

  /** The longest interval, ms, an estimate from visits spanning `spanMs` is trusted for (see {@link ESTIMATE_REACH}). */
  private reachMs(spanMs: number, evenShare: number): number {
    return Math.max(ESTIMATE_REACH * spanMs, 1000 / evenShare);
  }

  /** Sets (or, undefined, clears) the hint weight of page `key`, keeping their sum. */
  private weigh(key: string, weight: number | undefined): void {
    this.weightSum -= this.weights.get(key) ?? 0;
    if (weight === undefined) this.weights.delete(key);
    else {
      this.weights.set(key, weight);
      this.weightSum += weight;
    }
  }

  /** True when the budget moved by more than 1% since the last reallocation (its part of the cluster's). */
  private budgetMoved(budget: number): boolean {
    return Math.abs(budget - this.allocatedBudget) > budget * 0.01;
  }

  /** Allocates `budget` over the pages with an estimate; the boost held when `holdBoost` (a budget's step). */
  private reallocate(now: number, budget: number, holdBoost = false): void {
    this.allocatedAtMs = now;
    this.allocatedBudget = budget;
    this.dirty = false;
    if (this.prior === undefined || now - this.priorFittedAtMs >= REFIT_PRIOR_EVERY_MS) {
      this.prior = fitRatePrior(this.evidence.values(), this.prior);
      this.priorFittedAtMs = now;
    }
    const keys: string[] = [];
    const rates: number[] = [];
    for (const [key, rate] of this.rates) {
      if (Number.isNaN(rate)) continue;
      keys.push(key);
      rates.push(this.rateOf(key));
    }
    // Pages without an estimate keep their even share; the rest of the budget is allocated.
    if (this.plannedSum > 0 && !holdBoost) {
      const ratio = budget / this.plannedSum;
      this.boost = Math.min(MAX_BUDGET_BOOST, Math.max(1, this.boost * ratio ** BUDGET_GAIN));
    }
    const part = (this.boost * budget * keys.length) / this.rates.size;
    // A page whose reach is shorter than its allocated interval spends more than its frequency (at
    // most its even share): that comes off the other pages' part, so the budget is not overspent —
    // as much as the last allocation left to reaches, one allocation a second being all it costs.
    const frequencies = this.allocate(rates, Math.max(0, part - this.reachExcess));
    const evenShare = budget / this.rates.size;
    const excess = keys.reduce((sum, key, i) => {
      const reach = Math.min(this.options.maxMs, this.reachMs(this.spans.get(key) ?? 0, evenShare));
      return sum + Math.max(0, 1000 / reach - (frequencies[i] ?? 0));
    }, 0);
    // Allocated again at the next chance while the excess it took off moves.
    if (Math.abs(excess - this.reachExcess) > budget * 1e-6) this.dirty = true;
    this.reachExcess = excess;
    this.frequencies = new Map(keys.map((key, i) => [key, frequencies[i] ?? 0]));
  }
}
