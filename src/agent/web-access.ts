import type { Clock } from "../clock.js";
import {
  BandwidthGate,
  Fetcher,
  type FetchResult,
  type NetPolicy,
  type Resolver,
  TransferRates,
} from "../fetching/index.js";
import { IpGate, type IpLimiter, IpSpacing } from "../frontier/index.js";
import { EVERY_CRAWLER, RobotsCache, type RobotsSnapshot } from "../robots/index.js";
import { robotsSnapshots, type StateStore } from "../storage/index.js";
import { hostKey } from "../url/index.js";
import { type AgentOptions, ipDelayOf, productToken } from "./agent-options.js";
import type { Closable } from "./durable-state.js";
import { IpActivity } from "./ip-activity.js";
import { ipGatedFetch } from "./ip-gated-fetch.js";
import { trackedIpLimiter } from "./tracked-ip-limiter.js";

/**
 * A page's GET from address `ip`, with extra headers (a revisit's conditional ones), `onSent` told when
 * the request is written (its start, for the address's spacing): what a visit sends.
 */
export type PageFetch = (
  url: string,
  ip: string,
  signal: AbortSignal,
  headers?: readonly (readonly [string, string])[],
  onSent?: () => boolean,
) => Promise<FetchResult>;

/** How an agent's requests reach the web, and what holds them back: what {@link openWebAccess} wires. */
export interface WebAccess {
  readonly fetcher: Fetcher;
  /** Requests per IP address, for the busiest addresses' report. */
  readonly ipActivity: IpActivity;
  /** The per-IP limit (this agent's, or the cluster's), counting each request in {@link ipActivity}. */
  readonly ipGate: IpLimiter;
  /** robots.txt rules per origin, restored from the state; fetched through {@link ipGate}. */
  readonly robots: RobotsCache;
  /** The `--max-bandwidth` bound, when given. */
  readonly bandwidth: BandwidthGate | undefined;
  /** A page's GET, through the fetcher and (with a bound) {@link bandwidth}. */
  readonly fetchPage: PageFetch;
}

/**
 * Wires the fetcher (pushed on `opened`), the per-IP limit — `cluster`'s when given, else this agent's
 * own `--max-per-ip` and spacing —, the robots cache with the snapshots `store` kept, and the bandwidth
 * bound. Fetches nothing.
 */
export async function openWebAccess(
  options: AgentOptions,
  deps: {
    readonly clock: Clock;
    readonly resolver: Resolver;
    readonly netPolicy: NetPolicy;
    readonly store: StateStore;
    readonly clusterIpLimiter: IpLimiter | undefined;
    /** Aborted while the agent's visits are paused: no robots.txt request is sent then. */
    readonly pausedSignal?: () => AbortSignal | undefined;
    /** Aborted once the agent's visits stop: a robots.txt request held by a pause then fails. */
    readonly stoppedSignal?: () => AbortSignal | undefined;
  },
  opened: Closable[],
): Promise<WebAccess> {
  const { clock, resolver, netPolicy } = deps;
  const fetcher = new Fetcher(
    {
      userAgent: options.userAgent,
      maxBodyBytes: options.maxBodyBytes,
      totalTimeoutMs: options.fetchTimeoutMs,
      minBytesPerSecond: options.minBytesPerSecond,
      rateWindowMs: options.minRateWindowMs,
      http2: options.http2,
      ...(options.trustedCaPems === undefined ? {} : { trustedCaPems: options.trustedCaPems }),
    },
    { resolver, netPolicy, clock },
  );
  opened.push(fetcher);
  const ipLimiter: IpLimiter =
    deps.clusterIpLimiter ??
    new IpGate(options.maxPerIp, { spacing: new IpSpacing(ipDelayOf(options), clock) });
  const ipActivity = new IpActivity({}, { clock, politenessAt: (ip) => ipLimiter.politenessAt(ip) });
  const ipGate = trackedIpLimiter(ipLimiter, ipActivity);
  const robots = new RobotsCache(
    {
      userAgent: productToken(options.userAgent) ?? EVERY_CRAWLER,
      unavailableRetryMs: options.robotsRetryMs,
      // Under either policy no host is paced slower than the bound: `skip` fetches none of its pages.
      maxCrawlDelayMs: options.maxCrawlDelaySeconds * 1000,
    },
    {
      fetcher: ipGatedFetch(
        fetcher,
        (hostname) => resolver.resolve(hostname),
        ipGate,
        deps.pausedSignal && {
          pausedSignal: deps.pausedSignal,
          ...(deps.stoppedSignal === undefined ? {} : { stoppedSignal: deps.stoppedSignal }),
          clock,
        },
      ),
      clock,
    },
  );
  for await (const snapshot of robotsSnapshots(deps.store)) {
    try {
      robots.restore(snapshot as RobotsSnapshot);
    } catch {
      // A snapshot from an older format: robots.txt is simply fetched again.
    }
  }
  const bandwidth =
    options.maxBytesPerSecond === undefined
      ? undefined
      : new BandwidthGate(
          {
            maxBytesPerSecond: options.maxBytesPerSecond,
            searchDepth: options.bandwidthSearchDepth,
            control: options.bandwidthControl,
          },
          {
            clock,
            // Before any download, a page is guessed at 64 KiB fetched at the whole bound.
            rates: new TransferRates({ bytesPerSecond: options.maxBytesPerSecond, bytes: 64 * 1024 }),
          },
        );
  const download: PageFetch = (url, ip, signal, headers, onSent) =>
    fetcher.fetch(url, { ip, signal, headers, ...(onSent === undefined ? {} : { onSent }) });
  const fetchPage = bandwidth ? boundedFetch(bandwidth, download, clock) : download;
  return { fetcher, ipActivity, ipGate, robots, bandwidth, fetchPage };
}

/**
 * `download` through `gate`: each download waits for its share of the bandwidth and hands it back when
 * it ends, with its bytes and duration (a failure with none).
 */
function boundedFetch(gate: BandwidthGate, download: PageFetch, clock: Clock): PageFetch {
  return async (url, ip, signal, headers, onSent) => {
    const ticket = await gate.acquire(hostKey(url), signal);
    const startedAtMs = clock.now();
    try {
      const result = await download(url, ip, signal, headers, onSent);
      ticket.done(result.wireBytes, result.durationMs);
      return result;
    } catch (error) {
      ticket.done(0, clock.now() - startedAtMs);
      throw error;
    }
  };
}
