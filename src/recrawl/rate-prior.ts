/**
 * Change rates shrunk towards what the other pages show (empirical Bayes): a page seen changing once
 * in a minute is more likely an average page seen early than one changing every minute, and a page
 * quiet for its first minutes more likely a slow one than a still one — or, once quiet for long, one of
 * the pages that never change. The pages are taken to be a share that never change and the others
 * with rates following a Gamma distribution, fitted to all their evidence; each page's rate is its
 * posterior mean under that prior — the Gamma being the Poisson's conjugate prior, (shape + changes) ÷
 * (rate + exposure) for a page seen changing. A page's own evidence outweighs the prior as it grows, so
 * the estimates still converge to each page's own; what changes is the young estimates' noise, which
 * spent the budget on pages their first changes made look fast and dropped pages their first quiet
 * intervals made look still. Rates per second, exposures in seconds; pure functions.
 */

/**
 * What a page's dated intervals showed (its `Last-Modified` record): how many changes, and how long it
 * is known to have stood unchanged, s. For a Poisson page of rate λ their likelihood is λ^changes ·
 * e^(−λ·exposure) exactly (a change dated d seen at v: the last event before v at d, none after).
 */
export interface RateEvidence {
  readonly changes: number;
  readonly exposureS: number;
}

/**
 * The pages' prior: a share `still` that never change, the others' rates following a Gamma
 * distribution of `shape` changes' worth of evidence over `rateS` seconds.
 */
export interface GammaPrior {
  readonly shape: number;
  readonly rateS: number;
  readonly still: number;
}

/** Pages with evidence needed before a prior is fitted: fewer tell too little of the others. */
export const MIN_PAGES_FOR_PRIOR = 20;
/**
 * The most changes' worth a prior may weigh: where the pages' rates look alike (their estimates vary
 * no more than their noise), the prior would otherwise grow without bound and hold every page at the
 * mean. Four changes seen outweigh it.
 */
export const MAX_PRIOR_CHANGES = 4;

/**
 * The most pages a fit reads: beyond, an even sample of them (a fit reads each page some thousands of
 * times; two thousand pages tell the prior's three figures well).
 */
export const MAX_PAGES_FOR_FIT = 2000;
/** Rounds of expectation-maximization a fit makes (each a Gamma fit of the pages weighed). */
const FIT_ROUNDS = 12;

/**
 * The prior that makes the pages' evidence likeliest (empirical Bayes' marginal maximum likelihood),
 * by expectation-maximization over which of the pages never seen changing are still ones: each round
 * weighs every page by its chance of changing at all, and fits the Gamma to them so weighed, each
 * page's evidence having under Gamma(α, β) the marginal likelihood β^α·Γ(α + X) ÷ (Γ(α)·(β + T)^(α +
 * X)). Its exposure is the time from the page's last change to the visit, not a fixed span, so its X ÷
 * T is biased high on short histories (n ÷ Gamma(n, λ) has mean λ·n ÷ (n − 1)); the likelihood is exact
 * whatever the exposure. `previous`, the last fit, is where the search starts. Undefined with fewer
 * than {@link MIN_PAGES_FOR_PRIOR} pages of evidence, or none seen changing.
 */
export function fitRatePrior(
  evidence: Iterable<RateEvidence>,
  previous?: GammaPrior,
): GammaPrior | undefined {
  const all = [...evidence].filter((page) => page.exposureS > 0 && page.changes >= 0);
  const stride = Math.max(1, all.length / MAX_PAGES_FOR_FIT);
  const pages = Array.from(
    { length: Math.min(all.length, MAX_PAGES_FOR_FIT) },
    (_, i) => all[Math.floor(i * stride)] as RateEvidence,
  );
  const quiet = pages.filter((page) => page.changes === 0).length;
  if (pages.length < MIN_PAGES_FOR_PRIOR || quiet === pages.length) return undefined;
  let prior: GammaPrior = previous ?? {
    ...fitGamma(
      pages,
      pages.map(() => 1),
    ),
    still: quiet / pages.length / 2,
  };
  for (let round = 0; round < FIT_ROUNDS; round++) {
    const changing = pages.map((page) => 1 - stillChance(prior, page));
    const still = 1 - changing.reduce((sum, weight) => sum + weight, 0) / pages.length;
    prior = { ...fitGamma(pages, changing), still };
  }
  return prior;
}

/**
 * How sure the prior must be that a page never changes for its rate to be taken as 0: its posterior
 * mean would otherwise earn a page that is all but surely still a share of an ample budget. The
 * policy's reach still looks at such a page again after the span of its visits (doubling each time),
 * so a slow page taken for a still one is found changing.
 */
export const STILL_BELIEF = 0.99;

/**
 * A page's change rate, per second: its posterior mean under `prior`, or 0 for a page the prior
 * holds still with at least {@link STILL_BELIEF}.
 */
export function posteriorRate(prior: GammaPrior, evidence: RateEvidence): number {
  const still = stillChance(prior, evidence);
  if (still >= STILL_BELIEF) return 0;
  return ((1 - still) * (prior.shape + evidence.changes)) / (prior.rateS + evidence.exposureS);
}

/**
 * The chance that a page is one that never changes: 0 once seen changing; for one never seen changing
 * in its exposure, the still share against the others' chance of no change in that time, (β ÷ (β +
 * T))^α.
 */
function stillChance(prior: GammaPrior, evidence: RateEvidence): number {
  if (evidence.changes > 0 || prior.still <= 0) return 0;
  const quietIfChanging = (prior.rateS / (prior.rateS + evidence.exposureS)) ** prior.shape;
  return prior.still / (prior.still + (1 - prior.still) * quietIfChanging);
}

/**
 * The Gamma (shape, rate) that makes `pages`' evidence likeliest, each page weighed by `weights`: the
 * shape by a golden-section search within (0, {@link MAX_PRIOR_CHANGES}], the rate for each shape the
 * root of its likelihood's slope.
 */
function fitGamma(
  pages: readonly RateEvidence[],
  weights: readonly number[],
): { shape: number; rateS: number } {
  let weight = 0;
  let changes = 0;
  let exposure = 0;
  for (const [i, page] of pages.entries()) {
    const w = weights[i] ?? 0;
    weight += w;
    changes += w * page.changes;
    exposure += w * page.exposureS;
  }
  const meanRate = changes / exposure;
  // ln Γ(α + X) − ln Γ(α) = Σ_{k<X} ln(α + k): summed over the pages as Σ_k (weight of pages with X > k)·ln(α + k).
  const most = Math.max(...pages.map((page) => page.changes));
  const above = new Float64Array(most);
  for (const [i, page] of pages.entries()) {
    for (let k = 0; k < page.changes; k++) above[k] = (above[k] ?? 0) + (weights[i] ?? 0);
  }
  const logLikelihood = (shape: number): number => {
    const rate = rateFor(pages, weights, weight, shape, meanRate);
    let sum = weight * shape * Math.log(rate);
    for (let k = 0; k < most; k++) sum += (above[k] ?? 0) * Math.log(shape + k);
    for (const [i, page] of pages.entries()) {
      sum -= (weights[i] ?? 0) * (shape + page.changes) * Math.log(rate + page.exposureS);
    }
    return sum;
  };
  const shape = Math.exp(
    goldenMax((u) => logLikelihood(Math.exp(u)), Math.log(MIN_SHAPE), Math.log(MAX_PRIOR_CHANGES)),
  );
  return { shape, rateS: rateFor(pages, weights, weight, shape, meanRate) };
}

/** The least shape searched: a prior worth a hundredth of a change weighs next to nothing. */
const MIN_SHAPE = 0.01;

/**
 * The Gamma rate β that makes `pages`' evidence likeliest for `shape` α, each page weighed: the root of
 * Σ w·α − Σ w·(α + X)·β ÷ (β + T), which falls strictly from its weight times α at β = 0 to −Σ w·X as β
 * grows (Newton's method on ln β, kept within a bracket of the root; a step leaving it bisects instead).
 */
function rateFor(
  pages: readonly RateEvidence[],
  weights: readonly number[],
  weight: number,
  shape: number,
  meanRate: number,
): number {
  const slope = (u: number): { value: number; derivative: number } => {
    const beta = Math.exp(u);
    let value = weight * shape;
    let derivative = 0;
    for (const [i, { changes, exposureS }] of pages.entries()) {
      const w = (weights[i] ?? 0) * (shape + changes);
      value -= (w * beta) / (beta + exposureS);
      derivative -= (w * beta * exposureS) / (beta + exposureS) ** 2;
    }
    return { value, derivative };
  };
  let low = Math.log(shape / meanRate) - 40;
  let high = Math.log(shape / meanRate) + 40;
  let u = Math.log(shape / meanRate);
  for (let i = 0; i < 100; i++) {
    const { value, derivative } = slope(u);
    if (value > 0) low = u;
    else high = u;
    let next = derivative < 0 ? u - value / derivative : (low + high) / 2;
    if (!(next > low && next < high)) next = (low + high) / 2;
    if (Math.abs(next - u) < 1e-9) return Math.exp(next);
    u = next;
  }
  return Math.exp(u);
}

/** The argument of `f`'s maximum on [`low`, `high`], `f` taken to have one there (golden-section search). */
function goldenMax(f: (x: number) => number, low: number, high: number): number {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let a = low;
  let b = high;
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let fc = f(c);
  let fd = f(d);
  while (b - a > 1e-3) {
    if (fc >= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = f(d);
    }
  }
  // The search's ends themselves: a prior weighing MAX_PRIOR_CHANGES where the pages look alike.
  const middle = (a + b) / 2;
  const best = [low, middle, high].map((x) => ({ x, value: f(x) }));
  return best.reduce((top, next) => (next.value > top.value ? next : top)).x;
}
