import { closeSync, openSync, writeSync } from "node:fs";

/** Options of a {@link ServedRecorder}. */
export interface ServedRecorderOptions {
  /**
   * Append one line per finished request to this file: `timeMs status ip url`.
   * @default undefined (no log file)
   */
  servedLogPath?: string;
  /** The clock requests are timed by (ms). @default performance.now */
  now?: () => number;
}

/** A request in flight, as returned by {@link ServedRecorder.begin}. */
export interface ServedRequest {
  readonly host: string;
  readonly ip: string;
  readonly url: string;
}

function increment(map: Map<string, number>, key: string, by: number): number {
  const value = (map.get(key) ?? 0) + by;
  map.set(key, value);
  return value;
}

/**
 * Records what the test web served: counts per URL (for overlap), robots.txt fetches per host, and
 * the peak number of concurrent in-flight requests per host and per IP, how many a host had in flight
 * on average while it had any, the gaps between request starts per IP and the requests refused there
 * (for politeness checks).
 */
export class ServedRecorder {
  readonly #counts = new Map<string, number>();
  readonly #robots = new Map<string, number>();
  readonly #inFlightByHost = new Map<string, number>();
  readonly #inFlightByIp = new Map<string, number>();
  readonly #peakByHost = new Map<string, number>();
  readonly #peakByIp = new Map<string, number>();
  readonly #byVersion = new Map<string, number>();
  readonly #conditional = new Map<string, number>();
  readonly #lastStartByIp = new Map<string, number>();
  readonly #minGapByIp = new Map<string, number>();
  /** Every gap between two consecutive starts at each address, ms, in order. */
  readonly #gapsByIp = new Map<string, number[]>();
  readonly #refusedByIp = new Map<string, number>();
  /**
   * Since the last reset: time hosts had requests in flight, summed over hosts, and time requests were
   * in flight, summed over requests — integrated up to `#integratedToMs` over the counts below.
   */
  #busyMs = 0;
  #requestMs = 0;
  #integratedToMs: number;
  /** Requests in flight, and hosts with any, now. */
  #requestsInFlight = 0;
  #busyHosts = 0;
  readonly #now: () => number;
  #total = 0;
  #logFd: number | undefined;

  constructor(options: ServedRecorderOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#integratedToMs = this.#now();
    // Synchronous appends: another process reading the log sees every finished request at once.
    if (options.servedLogPath !== undefined) this.#logFd = openSync(options.servedLogPath, "a");
  }

  /** Total requests served since construction or the last {@link reset}. */
  get totalServed(): number {
    return this.#total;
  }

  /**
   * Marks a request as started; `url` is `http://HOST:PORT` + path and query as received, and
   * `httpVersion` the request's protocol version (`1.1`, `2.0`).
   */
  begin(host: string, ip: string, url: string, httpVersion = "1.1"): ServedRequest {
    this.#total++;
    increment(this.#byVersion, httpVersion, 1);
    increment(this.#counts, url, 1);
    if (url.endsWith("/robots.txt") && url.indexOf("/", 7) === url.length - 11) {
      increment(this.#robots, host, 1);
    }
    this.#integrate();
    this.#requestsInFlight++;
    const byHost = increment(this.#inFlightByHost, host, 1);
    if (byHost === 1) this.#busyHosts++;
    if (byHost > (this.#peakByHost.get(host) ?? 0)) this.#peakByHost.set(host, byHost);
    const byIp = increment(this.#inFlightByIp, ip, 1);
    if (byIp > (this.#peakByIp.get(ip) ?? 0)) this.#peakByIp.set(ip, byIp);
    const nowMs = this.#now();
    const lastMs = this.#lastStartByIp.get(ip);
    if (lastMs !== undefined) {
      const gapMs = nowMs - lastMs;
      this.#minGapByIp.set(ip, Math.min(this.#minGapByIp.get(ip) ?? Number.POSITIVE_INFINITY, gapMs));
      const gaps = this.#gapsByIp.get(ip);
      if (gaps === undefined) this.#gapsByIp.set(ip, [gapMs]);
      else gaps.push(gapMs);
    }
    this.#lastStartByIp.set(ip, nowMs);
    return { host, ip, url };
  }

  /** Marks a request as finished (call exactly once per {@link begin}) and logs it. */
  end(request: ServedRequest, status: number): void {
    this.#integrate();
    this.#requestsInFlight--;
    if (increment(this.#inFlightByHost, request.host, -1) === 0) this.#busyHosts--;
    increment(this.#inFlightByIp, request.ip, -1);
    if (this.#logFd !== undefined) {
      writeSync(this.#logFd, `${Date.now()} ${status} ${request.ip} ${request.url}\n`);
    }
  }

  /** Notes that the request for `url` was conditional (it had `If-None-Match` or `If-Modified-Since`). */
  noteConditional(url: string): void {
    increment(this.#conditional, url, 1);
  }

  /** How many conditional requests each URL got (see {@link noteConditional}). A copy. */
  conditionalCounts(): Map<string, number> {
    return new Map(this.#conditional);
  }

  /** Requests served by HTTP version (`1.1`, `2.0`). A copy. */
  servedByVersion(): Map<string, number> {
    return new Map(this.#byVersion);
  }

  /** How many times each URL was served (robots.txt included). A copy. */
  servedCounts(): Map<string, number> {
    return new Map(this.#counts);
  }

  /** Requests for `http://host:port/robots.txt`, by lowercase host name. */
  robotsFetches(host: string): number {
    return this.#robots.get(host.toLowerCase()) ?? 0;
  }

  /** Requests in flight right now for `host`. */
  inFlight(host: string): number {
    return this.#inFlightByHost.get(host.toLowerCase()) ?? 0;
  }

  /** The largest number of concurrent requests ever seen on one host (max over hosts). */
  maxConcurrencyPerHost(): number {
    return Math.max(0, ...this.#peakByHost.values());
  }

  /** Hosts that ever had two or more requests in flight at once, sorted. */
  hostsWithConcurrentRequests(): string[] {
    return [...this.#peakByHost]
      .filter(([, peak]) => peak >= 2)
      .map(([host]) => host)
      .sort();
  }

  /**
   * Requests a host had in flight on average while it had any (time-weighted over every host's busy
   * time, up to now): 1 when no host ever had two at once; 0 before any time passed with a request.
   */
  meanConcurrencyPerHost(): number {
    this.#integrate();
    return this.#busyMs === 0 ? 0 : this.#requestMs / this.#busyMs;
  }

  /** The largest number of concurrent requests ever seen on one IP (virtual hosts share one). */
  maxConcurrencyPerIp(): number {
    return Math.max(0, ...this.#peakByIp.values());
  }

  /** The largest number of concurrent requests ever seen at address `ip` (0: none). */
  maxConcurrencyAtIp(ip: string): number {
    return this.#peakByIp.get(ip) ?? 0;
  }

  /** The shortest time between the starts of two requests at address `ip`, ms (undefined: fewer than two). */
  minGapAtIp(ip: string): number | undefined {
    return this.#minGapByIp.get(ip);
  }

  /**
   * The times between the starts of consecutive requests at address `ip`, ms, in order (empty: fewer
   * than two). A copy.
   */
  gapsAtIp(ip: string): number[] {
    return [...(this.#gapsByIp.get(ip) ?? [])];
  }

  /**
   * `request` was refused (429): it counts among the requests at its address (at once, gaps), not as a
   * page served.
   */
  refused(request: ServedRequest): void {
    increment(this.#refusedByIp, request.ip, 1);
    if (increment(this.#counts, request.url, -1) === 0) this.#counts.delete(request.url);
  }

  /** Requests refused with 429 at address `ip`. */
  refusedAtIp(ip: string): number {
    return this.#refusedByIp.get(ip) ?? 0;
  }

  /**
   * Forgets counts and peaks (peaks restart from the requests still in flight). Each address's last
   * start is kept: the first gap after a reset is from the request before it, which is a real gap.
   */
  reset(): void {
    this.#counts.clear();
    this.#robots.clear();
    this.#byVersion.clear();
    this.#total = 0;
    this.#peakByHost.clear();
    this.#peakByIp.clear();
    this.#minGapByIp.clear();
    this.#gapsByIp.clear();
    this.#refusedByIp.clear();
    this.#integrate();
    this.#busyMs = 0;
    this.#requestMs = 0;
    for (const [host, n] of this.#inFlightByHost) if (n > 0) this.#peakByHost.set(host, n);
    for (const [ip, n] of this.#inFlightByIp) if (n > 0) this.#peakByIp.set(ip, n);
  }

  /** Adds the time since the last change, weighted by the requests and busy hosts of that time. */
  #integrate(): void {
    const nowMs = this.#now();
    const elapsedMs = nowMs - this.#integratedToMs;
    this.#requestMs += elapsedMs * this.#requestsInFlight;
    this.#busyMs += elapsedMs * this.#busyHosts;
    this.#integratedToMs = nowMs;
  }

  /** Closes the log file; idempotent. */
  close(): void {
    if (this.#logFd !== undefined) closeSync(this.#logFd);
    this.#logFd = undefined;
  }
}
