/**
 * Change rates and the revisit frequencies that keep a collection freshest, after Cho and
 * Garcia-Molina ("Estimating frequency of change", "Effective page refresh policies"). Rates are per
 * second, frequencies visits per second, intervals seconds: pure functions, no clock.
 */

/**
 * Cho and Garcia-Molina's estimator of a page's change rate from regular visits: λ̂ = −ln((n − X + 0.5)
 * / (n + 0.5)) / I, for `n` visits `intervalSeconds` (I) apart of which `changes` (X) found the page
 * changed. Unlike the naive X / (n·I) it is not biased low by changes a visit could not tell apart, and
 * stays finite when every visit finds a change. 0 when no visit did; NaN for impossible counts.
 */
export function estimateChangeRate(n: number, changes: number, intervalSeconds: number): number {
  if (!(n >= 0 && changes >= 0 && changes <= n && intervalSeconds > 0)) return Number.NaN;
  // −ln(a/b) written ln(b/a): no −0 when nothing changed.
  return Math.log((n + 0.5) / (n - changes + 0.5)) / intervalSeconds;
}

/**
 * Cho and Garcia-Molina's estimator of a page's change rate when each visit also learns when the page
 * last changed (its `Last-Modified`): λ̂ = ((X − 1) − X / (n·ln(1 − X/n))) / T, for `n` intervals
 * between visits of which `changes` (X) saw a change, and `exposureSeconds` (T) the time the page is
 * known to have stood unchanged — a whole interval when it did not change, from its last change to the
 * visit when it did. The maximum-likelihood estimate of a Poisson rate from these facts is X / T; the
 * terms with X − 1 and the logarithm take out most of its bias on short histories. It reads more of each
 * visit than {@link estimateChangeRate}, so it converges faster. 0 when no interval saw a change; NaN
 * for impossible counts or no time observed.
 */
export function estimateChangeRateFromLastModified(
  n: number,
  changes: number,
  exposureSeconds: number,
): number {
  if (!(n > 0 && changes >= 0 && changes <= n && exposureSeconds > 0)) return Number.NaN;
  if (changes === 0) return 0;
  // ln(1 − X/n) is −∞ when every interval saw a change: the term then vanishes.
  const correction = changes === n ? 0 : changes / (n * Math.log1p(-changes / n));
  return Math.max(0, changes - 1 - correction) / exposureSeconds;
}

/**
 * Expected freshness (the fraction of time the copy equals the page) of a page changing at rate `rate`
 * (a Poisson process) visited `frequency` times a second at regular intervals: (f/λ)(1 − e^(−λ/f)).
 * 1 for a page that never changes, 0 for one never visited that does.
 */
export function expectedFreshness(rate: number, frequency: number): number {
  if (rate === 0) return 1;
  if (frequency <= 0) return 0;
  const r = rate / frequency;
  return -Math.expm1(-r) / r;
}

/**
 * The gain in freshness of one more visit a second to a page changing at `rate`, visited `frequency`
 * times a second: ∂F/∂f = (1 − (1 + r)e^(−r)) / λ with r = λ/f; it tends to 1/λ as f → 0. The optimal
 * allocation gives it one value on every page it visits.
 */
export function marginalFreshness(rate: number, frequency: number): number {
  if (frequency <= 0) return 1 / rate;
  return riseOf(rate / frequency) / rate;
}

/** 1 − (1 + r)e^(−r): rises from 0 (r = 0) to 1 (r → ∞). */
function riseOf(r: number): number {
  return -Math.expm1(-r) - r * Math.exp(-r);
}

/**
 * The r of {@link riseOf}(r) = `target` (0 < target < 1): Newton's method on riseOf, whose slope is
 * r·e^(−r), kept within a bracket of the root (a step leaving it bisects instead), to the last bits in
 * a handful of steps. It is called for every page at every step of {@link optimalFrequencies}' search:
 * a bisection here made an allocation of 5,000 pages take a third of a second or more, every second.
 */
function ratioFor(target: number): number {
  let low = 0;
  let high = 1;
  while (riseOf(high) < target) high *= 2;
  // riseOf(r) ≈ r²/2 near 0.
  let r = Math.min(Math.sqrt(2 * target), high / 2);
  for (let i = 0; i < 100; i++) {
    const error = riseOf(r) - target;
    if (error === 0) return r;
    if (error > 0) high = r;
    else low = r;
    let next = r - error / (r * Math.exp(-r));
    if (!(next > low && next < high)) next = (low + high) / 2;
    if (Math.abs(next - r) <= r * 1e-15) return next;
    r = next;
  }
  return r;
}

/** A page's visit frequency at Lagrange multiplier `mu`: 0 when even its first visit gains less than mu. */
function frequencyAt(rate: number, mu: number): number {
  // marginalFreshness(rate, rate / r) = mu, solved for r.
  if (!(rate > 0) || rate * mu >= 1) return 0;
  return rate / ratioFor(rate * mu);
}

/**
 * The visit frequencies (visits per second) of pages changing at `rates` that maximize their average
 * freshness for `budget` visits a second in all (Cho and Garcia-Molina's optimal allocation): every
 * visited page gets the same marginal gain, so a page that changes faster gets more visits only up to a
 * point — past it, fewer, and a page that changes too often for the budget none at all (it could not be
 * kept fresh anyway). A page that never changes gets none either. Sums to `budget` (when any page
 * changes).
 */
export function optimalFrequencies(rates: readonly number[], budget: number): number[] {
  const changing = rates.filter((rate) => rate > 0);
  if (changing.length === 0 || !(budget > 0)) return rates.map(() => 0);
  const total = (mu: number) => changing.reduce((sum, rate) => sum + frequencyAt(rate, mu), 0);
  // mu above 1/min(rate) visits nothing; the sum grows without bound as mu → 0.
  let high = 1 / Math.min(...changing);
  let low = high;
  while (total(low) < budget) low /= 2;
  for (let i = 0; i < 200 && high - low > low * 1e-12; i++) {
    const mid = (low + high) / 2;
    if (total(mid) > budget) low = mid;
    else high = mid;
  }
  const mu = (low + high) / 2;
  return rates.map((rate) => frequencyAt(rate, mu));
}

/**
 * The visit frequencies of the proportional policy: `budget` shared in proportion to the pages' change
 * rates — the intuitive policy Cho and Garcia-Molina show to be worse than even a uniform one, since
 * it spends most on pages that change too often to be kept fresh. A page that never changes gets none.
 */
export function proportionalFrequencies(rates: readonly number[], budget: number): number[] {
  const total = rates.reduce((sum, rate) => sum + Math.max(rate, 0), 0);
  if (!(total > 0 && budget > 0)) return rates.map(() => 0);
  return rates.map((rate) => (rate > 0 ? (budget * rate) / total : 0));
}

/** Average expected freshness of pages changing at `rates` visited at `frequencies` (see {@link expectedFreshness}). */
export function averageFreshness(rates: readonly number[], frequencies: readonly number[]): number {
  if (rates.length === 0) return 1;
  let sum = 0;
  for (const [i, rate] of rates.entries()) sum += expectedFreshness(rate, frequencies[i] ?? 0);
  return sum / rates.length;
}
