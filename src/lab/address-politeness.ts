import type { RunningTestWeb } from "../testweb/index.js";

/**
 * Politeness towards servers as the test web saw a crawl, by IP address: requests at once, the gaps
 * between their starts, the requests answered and refused — from its recorder, which the laboratory
 * resets at each crawl's seeds.
 */

/** What some addresses saw (one, or several taken together). */
export interface AddressPoliteness {
  /** The most requests in flight at once at one of them. */
  readonly peak: number;
  /** The shortest time between two consecutive request starts at one of them, ms; undefined: none. */
  readonly minGapMs: number | undefined;
  /** Gaps between consecutive starts at one of them, and how many were short (see {@link addressPoliteness}). */
  readonly gaps: number;
  readonly shortGaps: number;
  /** Requests answered there, 429s included. */
  readonly requests: number;
  /** Requests answered 429. */
  readonly refused: number;
}

/**
 * The figures of the test web's last crawl for any set of its addresses, a gap counting as short when
 * under `shortUnderMs`.
 */
export function addressPoliteness(
  web: Pick<RunningTestWeb, "recorder" | "model">,
  shortUnderMs: number,
): (ips: Iterable<string>) => AddressPoliteness {
  const { recorder, model } = web;
  const served = new Map<string, number>();
  for (const [url, count] of recorder.servedCounts()) {
    const ip = model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1]?.ip;
    if (ip !== undefined) served.set(ip, (served.get(ip) ?? 0) + count);
  }
  return (ips) => {
    let peak = 0;
    let minGapMs: number | undefined;
    let gaps = 0;
    let shortGaps = 0;
    let requests = 0;
    let refused = 0;
    for (const ip of ips) {
      peak = Math.max(peak, recorder.maxConcurrencyAtIp(ip));
      const gapsHere = recorder.gapsAtIp(ip);
      for (const gapMs of gapsHere) {
        if (gapMs < shortUnderMs) shortGaps++;
        if (minGapMs === undefined || gapMs < minGapMs) minGapMs = gapMs;
      }
      gaps += gapsHere.length;
      requests += (served.get(ip) ?? 0) + recorder.refusedAtIp(ip);
      refused += recorder.refusedAtIp(ip);
    }
    return { peak, minGapMs, gaps, shortGaps, requests, refused };
  };
}

/** The share of `figures`' gaps that were short (0 with none). */
export function shortGapShare(figures: AddressPoliteness): number {
  return figures.gaps === 0 ? 0 : figures.shortGaps / figures.gaps;
}
