/**
 * Diligenti et al.'s per-server transfer-rate estimates: what a download from a host will take of the
 * link, learnt from the downloads before it. Each host keeps a moving average of its rate (bytes/s) and
 * of its page size; a profile of the hour of the day (UTC), learnt over every host, scales a host's rate
 * to the hour it is asked about (a server slower in its busy hours, or a link shared with others by
 * day).
 */

/** Weight of a new observation in a host's moving averages. */
const HOST_WEIGHT = 0.3;
/** Weight of a new observation in an hour's factor of the profile. */
const HOUR_WEIGHT = 0.05;
/** Hours in the profile. */
const HOURS = 24;
/**
 * Hosts whose estimates are kept at most: past it the host downloaded from longest ago is forgotten (it
 * is forecast from every host's averages again), so a crawl of millions of hosts keeps a few MB here.
 */
const DEFAULT_MAX_RATE_HOSTS = 100_000;
/** A download shorter than this is taken as lasting this long: a rate from 0 ms says nothing. */
const MIN_DURATION_MS = 1;

/** A host's moving averages. */
interface HostRate {
  bytesPerSecond: number;
  pageBytes: number;
}

/** What a download from a host is expected to be. */
export interface TransferForecast {
  /** Its rate while it lasts, bytes per second. */
  readonly bytesPerSecond: number;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** See the module's comment. Memory: two numbers per host, for the `maxHosts` hosts downloaded from last. */
export class TransferRates {
  private readonly hosts = new Map<string, HostRate>();
  /** Per hour: the ratio of that hour's rates to the hosts' averages, learnt (1 until then). */
  private readonly hourFactor = new Float64Array(HOURS).fill(1);
  /** Every host's averages together, for a host never seen. */
  private overall: HostRate | undefined;

  /**
   * @param fallback the forecast for a host when no download at all was seen yet: a guess from the
   *   bandwidth bound (nothing is known of the link before its first use).
   * @param maxHosts hosts whose estimates are kept at most (@default 100,000): past it, the host
   *   downloaded from longest ago is forgotten.
   */
  constructor(
    private readonly fallback: TransferForecast,
    private readonly maxHosts = DEFAULT_MAX_RATE_HOSTS,
  ) {}

  /** Records a download from `host` of `bytes` in `durationMs`, which began at `atMs`. */
  observe(host: string, bytes: number, durationMs: number, atMs: number): void {
    if (!(bytes > 0) || !(durationMs >= 0)) return;
    const rate = (bytes * 1000) / Math.max(durationMs, MIN_DURATION_MS);
    const known = this.hosts.get(host);
    const hour = hourOf(atMs);
    if (known) {
      // How this download compares with the host's usual, at this hour: the hour's factor moves to it.
      const ratio = rate / known.bytesPerSecond;
      this.hourFactor[hour] = (1 - HOUR_WEIGHT) * (this.hourFactor[hour] as number) + HOUR_WEIGHT * ratio;
      // The host's average, of rates brought back to an average hour.
      blend(known, rate / (this.hourFactor[hour] as number), bytes);
      // Downloaded from last: moved to the end of the map's order, the last to be forgotten.
      this.hosts.delete(host);
      this.hosts.set(host, known);
    } else {
      this.hosts.set(host, { bytesPerSecond: rate, pageBytes: bytes });
      if (this.hosts.size > this.maxHosts) {
        const oldest = this.hosts.keys().next().value;
        if (oldest !== undefined) this.hosts.delete(oldest);
      }
    }
    if (this.overall) blend(this.overall, rate, bytes);
    else this.overall = { bytesPerSecond: rate, pageBytes: bytes };
  }

  /** What a download from `host` starting at `atMs` is expected to be. */
  forecast(host: string, atMs: number): TransferForecast {
    const known = this.hosts.get(host) ?? this.overall;
    if (!known) return this.fallback;
    return {
      bytesPerSecond: known.bytesPerSecond * (this.hourFactor[hourOf(atMs)] as number),
      bytes: known.pageBytes,
    };
  }
}

function blend(rate: HostRate, bytesPerSecond: number, bytes: number): void {
  rate.bytesPerSecond = (1 - HOST_WEIGHT) * rate.bytesPerSecond + HOST_WEIGHT * bytesPerSecond;
  rate.pageBytes = (1 - HOST_WEIGHT) * rate.pageBytes + HOST_WEIGHT * bytes;
}

function hourOf(atMs: number): number {
  return new Date(atMs).getUTCHours();
}
