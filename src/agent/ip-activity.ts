import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { IpPoliteness } from "../frontier/index.js";

/** Addresses an {@link IpActivity} remembers at most by default (1,024): the ones used last. */
export const DEFAULT_MAX_IPS = 1024;
/** Distinct hosts an {@link IpActivity} counts per address at most by default (100). */
export const DEFAULT_MAX_HOSTS_PER_IP = 100;
/** Host names a {@link BusyIp} lists (3), and so the cluster's merged rows. */
export const HOST_NAMES_LISTED = 3;

/** How many addresses and hosts an {@link IpActivity} remembers. */
export interface IpActivityOptions {
  /**
   * Addresses remembered at most; beyond it the least recently used is forgotten.
   * @default DEFAULT_MAX_IPS
   */
  readonly maxIps?: number;
  /**
   * Distinct hosts counted per address at most (the count says "at least" beyond).
   * @default DEFAULT_MAX_HOSTS_PER_IP
   */
  readonly maxHostsPerIp?: number;
}

/** What an {@link IpActivity} needs. */
export interface IpActivityDeps {
  readonly clock: Clock;
  /** What this agent knows of the politeness kept at `ip` now: read for the addresses reported only. */
  readonly politenessAt: (ip: string) => IpPoliteness;
}

/** One address among the busiest, as this agent saw its requests there. */
export interface BusyIp {
  readonly ip: string;
  /** Distinct hosts this agent sent requests to there, counted up to the option's bound. */
  readonly hosts: number;
  /** True when there are more hosts than {@link hosts} (the count stopped at its bound). */
  readonly moreHosts: boolean;
  /** A few of those hosts, the first seen first. */
  readonly hostNames: readonly string[];
  /** The agent keeping the address's politeness (undefined: this agent, see {@link IpPoliteness.keeper}). */
  readonly keeper?: string;
  /** This agent's requests in flight there now. */
  readonly inFlight: number;
  /** This agent's requests waiting for a slot there now. */
  readonly waiting: number;
  /** Requests started there in the last minute (in 10 s steps), and since remembered. */
  readonly startedRecently: number;
  readonly started: number;
  /** Mean and longest wait for a slot of the requests started in the last minute, ms. */
  readonly meanWaitMsRecently: number;
  readonly maxWaitMsRecently: number;
  /** Time all requests started there since remembered waited for their slots, ms. */
  readonly waitedMs: number;
  /** Push-backs (429, 503) from the address's server in the last minute, and since remembered. */
  readonly refusalsRecently: number;
  readonly refusals: number;
  /** See {@link IpPoliteness.line}. */
  readonly line: number;
  /** How long no request starts there for its server's push-back still, ms (0: none). */
  readonly blockedForMs: number;
  /** See {@link IpPoliteness.delayMs}. */
  readonly delayMs: number;
}

/** The figures of one step of the recent window. */
interface Bucket {
  /** The step's number (time / {@link BUCKET_MS}). */
  step: number;
  started: number;
  waitedMs: number;
  maxWaitMs: number;
  refusals: number;
}

/** One address's tally. */
interface Tally {
  readonly hosts: Set<string>;
  moreHosts: boolean;
  inFlight: number;
  waiting: number;
  started: number;
  waitedMs: number;
  refusals: number;
  /** The recent window, a ring indexed by step modulo {@link BUCKETS}. */
  readonly buckets: Bucket[];
}

/** An active address, with the figures it is ranked by. */
interface Ranked {
  readonly ip: string;
  readonly tally: Tally;
  readonly recent: Omit<Bucket, "step">;
  readonly inFlight: number;
  readonly waiting: number;
  readonly startedRecently: number;
  readonly maxWaitMsRecently: number;
}

/** The recent window's step, ms, and its steps: the last minute, give or take a step. */
const BUCKET_MS = 10_000;
const BUCKETS = 6;

/**
 * Per IP address this agent sends requests to: its hosts, requests in flight and waiting, started and
 * refused lately and in all, and how long they waited for their slots — bounded: the addresses used
 * least recently are forgotten beyond `maxIps` (a request still running at one that was forgotten no
 * longer counts), each counts `maxHostsPerIp` hosts at most, and the recent figures are a fixed ring of
 * steps. {@link busiest} ranks them by activity ({@link activityOf}) and adds what the limiter knows of
 * each one's politeness (keeper, line, back-off).
 */
export class IpActivity {
  private readonly maxIps: number;
  private readonly maxHostsPerIp: number;
  /** By address, least recently used first. */
  private readonly tallies = new Map<string, Tally>();

  constructor(
    options: IpActivityOptions,
    private readonly deps: IpActivityDeps,
  ) {
    this.maxIps = options.maxIps ?? DEFAULT_MAX_IPS;
    this.maxHostsPerIp = options.maxHostsPerIp ?? DEFAULT_MAX_HOSTS_PER_IP;
    for (const [name, value] of [
      ["maxIps", this.maxIps],
      ["maxHostsPerIp", this.maxHostsPerIp],
    ] as const) {
      if (!Number.isInteger(value) || value < 1)
        throw new UbiError(ErrorCode.InvalidArgument, `${name} must be a positive integer, got ${value}`);
    }
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.tallies.size;
  }

  /**
   * A request to `host` at `ip` starts waiting for its slot: call the first function returned when it
   * starts (it got its slot), the second when it gives up waiting; then, once started, the function the
   * first returns when it ends.
   */
  waits(ip: string, host: string | undefined): { started: () => () => void; gaveUp: () => void } {
    const tally = this.touch(ip);
    if (host !== undefined) this.noteHost(tally, host);
    tally.waiting++;
    const sinceMs = this.deps.clock.now();
    return {
      started: () => {
        tally.waiting--;
        this.touch(ip, tally);
        const now = this.deps.clock.now();
        const waitedMs = now - sinceMs;
        tally.started++;
        tally.waitedMs += waitedMs;
        const bucket = this.bucketOf(tally, now);
        bucket.started++;
        bucket.waitedMs += waitedMs;
        bucket.maxWaitMs = Math.max(bucket.maxWaitMs, waitedMs);
        tally.inFlight++;
        let ended = false;
        return () => {
          if (ended) return;
          ended = true;
          tally.inFlight--;
          this.touch(ip, tally);
        };
      },
      gaveUp: () => {
        tally.waiting--;
      },
    };
  }

  /** `ip`'s server pushed back (429, 503). */
  refused(ip: string): void {
    const tally = this.touch(ip);
    tally.refusals++;
    this.bucketOf(tally, this.deps.clock.now()).refusals++;
  }

  /**
   * The `limit` busiest addresses, most active first ({@link activityOf}; ties: longest recent waits
   * first): ranked on the tallies alone, so the limiter is asked about the addresses reported only.
   */
  busiest(limit: number): BusyIp[] {
    const now = this.deps.clock.now();
    const ranked: Ranked[] = [];
    for (const [ip, tally] of this.tallies) {
      const recent = this.recent(tally, now);
      const entry = {
        ip,
        tally,
        recent,
        inFlight: tally.inFlight,
        waiting: tally.waiting,
        startedRecently: recent.started,
        maxWaitMsRecently: recent.maxWaitMs,
      };
      if (activityOf(entry) > 0 || recent.refusals > 0) ranked.push(entry);
    }
    return ranked
      .sort(byActivity)
      .slice(0, limit)
      .map(({ ip, tally, recent }) => this.report(ip, tally, recent, now));
  }

  private report(ip: string, tally: Tally, recent: Omit<Bucket, "step">, now: number): BusyIp {
    const politeness = this.deps.politenessAt(ip);
    return {
      ip,
      hosts: tally.hosts.size,
      moreHosts: tally.moreHosts,
      hostNames: [...tally.hosts].slice(0, HOST_NAMES_LISTED),
      ...(politeness.keeper === undefined ? {} : { keeper: politeness.keeper }),
      inFlight: tally.inFlight,
      waiting: tally.waiting,
      startedRecently: recent.started,
      started: tally.started,
      meanWaitMsRecently: recent.started === 0 ? 0 : Math.round(recent.waitedMs / recent.started),
      maxWaitMsRecently: recent.maxWaitMs,
      waitedMs: tally.waitedMs,
      refusalsRecently: recent.refusals,
      refusals: tally.refusals,
      line: politeness.line,
      blockedForMs: Math.max(0, politeness.blockedUntilMs - now),
      delayMs: politeness.delayMs,
    };
  }

  /** `ip`'s tally (`known`, or made), moved to the most recently used end; the least recent beyond the bound forgotten. */
  private touch(ip: string, known?: Tally): Tally {
    const tally = known ?? this.tallies.get(ip) ?? newTally();
    // A tally forgotten while its request waited or ran is not brought back by that request.
    if (known && this.tallies.get(ip) !== known) return tally;
    this.tallies.delete(ip);
    this.tallies.set(ip, tally);
    if (this.tallies.size > this.maxIps) {
      const oldest = this.tallies.keys().next().value as string;
      this.tallies.delete(oldest);
    }
    return tally;
  }

  private noteHost(tally: Tally, host: string): void {
    if (tally.hosts.has(host)) return;
    if (tally.hosts.size < this.maxHostsPerIp) tally.hosts.add(host);
    else tally.moreHosts = true;
  }

  /** The step of `now` in `tally`'s ring, emptied first if it held an older step. */
  private bucketOf(tally: Tally, now: number): Bucket {
    const step = Math.floor(now / BUCKET_MS);
    const bucket = tally.buckets[step % BUCKETS] as Bucket;
    if (bucket.step !== step)
      Object.assign(bucket, { step, started: 0, waitedMs: 0, maxWaitMs: 0, refusals: 0 });
    return bucket;
  }

  /** The sums of `tally`'s steps within the last {@link BUCKETS} at `now`. */
  private recent(tally: Tally, now: number): Omit<Bucket, "step"> {
    const step = Math.floor(now / BUCKET_MS);
    const sum = { started: 0, waitedMs: 0, maxWaitMs: 0, refusals: 0 };
    for (const bucket of tally.buckets) {
      if (step - bucket.step >= BUCKETS) continue;
      sum.started += bucket.started;
      sum.waitedMs += bucket.waitedMs;
      sum.maxWaitMs = Math.max(sum.maxWaitMs, bucket.maxWaitMs);
      sum.refusals += bucket.refusals;
    }
    return sum;
  }
}

/**
 * How busy an address is, for ranking: requests started there in the last minute, plus those in flight
 * and waiting for a slot now (the same whether one agent's figures or the cluster's sums).
 */
function activityOf(entry: {
  readonly startedRecently: number;
  readonly inFlight: number;
  readonly waiting: number;
}): number {
  return entry.startedRecently + entry.inFlight + entry.waiting;
}

/** Most active first; ties: the longest recent wait, then by address (a stable order for equal figures). */
export function byActivity(
  a: Parameters<typeof activityOf>[0] & { readonly maxWaitMsRecently: number; readonly ip: string },
  b: Parameters<typeof activityOf>[0] & { readonly maxWaitMsRecently: number; readonly ip: string },
): number {
  return (
    activityOf(b) - activityOf(a) ||
    b.maxWaitMsRecently - a.maxWaitMsRecently ||
    (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0)
  );
}

function newTally(): Tally {
  return {
    hosts: new Set(),
    moreHosts: false,
    inFlight: 0,
    waiting: 0,
    started: 0,
    waitedMs: 0,
    refusals: 0,
    buckets: Array.from({ length: BUCKETS }, () => ({
      step: Number.NEGATIVE_INFINITY,
      started: 0,
      waitedMs: 0,
      maxWaitMs: 0,
      refusals: 0,
    })),
  };
}
