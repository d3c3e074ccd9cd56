import { estimatedRate, hintedPeriodMs } from "./page-estimates.js";
import type { PageHistory } from "./page-history.js";

/**
 * The estimated freshness of an agent's share of a continuous crawl: the expected share of its pages
 * whose copy is still current, each page fresh with probability e^(−λ·t) for its estimated change rate
 * λ and the time t since its last visit (Cho and Garcia-Molina's freshness of a Poisson page). Computed
 * over a uniform sample of the pages, so it costs a bounded memory and time whatever the share's size:
 * a page is in the sample when its URL fingerprint (a 64-bit hash) is under a threshold, halved each
 * time the sample outgrows its bound (KMV-style adaptive sampling). A page keeps its place across its
 * visits, so each visit updates it, and a host handed away leaves the sample.
 */

/** Pages the sample holds at most by default: a mean over it is within about 1.6% (1/√4096). */
export const DEFAULT_FRESHNESS_SAMPLE = 4096;

/** One sampled page: its host, its change rate per ms, and when it was last visited. */
interface SampledPage {
  readonly host: string;
  readonly ratePerMs: number;
  readonly lastAtMs: number;
}

/** The estimate (see {@link ShareFreshness.estimate}). */
export interface FreshnessEstimate {
  /** The expected share of the pages that are fresh now, 0 … 1. */
  readonly freshness: number;
  /** The sampled pages it is computed over (those with a rate estimate or a hint). */
  readonly pages: number;
}

/** The sampled pages of an agent's share, and the freshness they estimate (see the module's comment). */
export class ShareFreshness {
  private readonly sample = new Map<bigint, SampledPage>();
  /** A page is sampled when its fingerprint is under this; 2^64 takes every page. */
  private threshold = 1n << 64n;

  /** @param maxPages the sample's bound. */
  constructor(private readonly maxPages = DEFAULT_FRESHNESS_SAMPLE) {}

  /**
   * Notes a page's history after a visit, a hand-over or a restart: its rate estimate (or, while its
   * visits are too few, the hint of its age at its first visit) and its last visit. A page with neither
   * leaves the sample until it has one.
   */
  note(host: string, fingerprint: bigint, history: PageHistory): void {
    if (fingerprint >= this.threshold) return;
    const ratePerMs = rateOf(history);
    if (ratePerMs === undefined) {
      this.sample.delete(fingerprint);
      return;
    }
    this.sample.set(fingerprint, { host, ratePerMs, lastAtMs: history.lastAtMs });
    while (this.sample.size > this.maxPages) this.halve();
  }

  /** `host` was handed to another agent: its pages leave the sample. */
  forget(host: string): void {
    for (const [fingerprint, page] of this.sample) if (page.host === host) this.sample.delete(fingerprint);
  }

  /** The estimate at `nowMs`; undefined while no sampled page has a rate. */
  estimate(nowMs: number): FreshnessEstimate | undefined {
    if (this.sample.size === 0) return undefined;
    let sum = 0;
    for (const { ratePerMs, lastAtMs } of this.sample.values()) {
      sum += Math.exp(-ratePerMs * Math.max(0, nowMs - lastAtMs));
    }
    return { freshness: sum / this.sample.size, pages: this.sample.size };
  }

  /** Halves the sampled share of the fingerprints, dropping the pages above the new threshold. */
  private halve(): void {
    this.threshold /= 2n;
    for (const fingerprint of this.sample.keys()) {
      if (fingerprint >= this.threshold) this.sample.delete(fingerprint);
    }
  }
}

/**
 * A page's change rate per ms: its own estimate, else the rate its sitemap `<changefreq>` says (one
 * change a period; `always` one a ms, `never` none), else the hint of its age at its first visit (about
 * 1 / age: the time since a Poisson process's last event is exponential with its rate), else undefined.
 */
function rateOf(history: PageHistory): number | undefined {
  const perSecond = estimatedRate(history);
  if (!Number.isNaN(perSecond)) return perSecond / 1000;
  const period = hintedPeriodMs(history);
  if (period !== undefined) return 1 / Math.max(1, period);
  const age = history.ageAtFirstVisitMs;
  return age === undefined ? undefined : 1 / Math.max(1, age);
}
