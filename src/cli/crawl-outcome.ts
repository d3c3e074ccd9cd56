/**
 * What `ubicrawl agent` says about a crawl that did nothing: at start, seeds all seen before in the
 * data dir (the crawl there is complete, or what is left of it); at the end, a crawl that fetched no
 * page because everything it tried failed, with the reasons and the flags that fix them.
 */

import type { CrawlStats } from "../agent/crawl-stats.js";
import type { SeedRouting } from "../agent/seed-routing.js";
import { ErrorCode, UbiError } from "../errors.js";

/** The state of an agent just started, as {@link startNotice} reads it. */
export interface StartState {
  readonly dataDir: string;
  readonly routing: SeedRouting;
  /** True for a lone agent: nothing will ever come from peers. */
  readonly alone: boolean;
  /** URLs queued now (this run's seeds and what earlier runs left). */
  readonly queuedUrls: number;
  /** Hosts with URLs queued. */
  readonly hostsWithWork: number;
  /** Pages fetched since the crawl began in this data dir. */
  readonly pagesFetched: number;
  /** `--scope` domains. */
  readonly scopes: readonly string[];
}

/**
 * A line for a start that has nothing new to do, or undefined: every seed seen before in the data dir
 * (the crawl there is complete, or resumes with what is queued), every seed outside `--scope`, or a
 * lone agent with neither seeds nor anything queued.
 */
export function startNotice(state: StartState): string | undefined {
  const { routing, dataDir } = state;
  const seeds = `${routing.given === 1 ? "its seed was" : `all ${routing.given} of its seeds were`}`;
  if (routing.given > 0 && routing.outOfScope === routing.given) {
    return `nothing to crawl from the seeds: none is within --scope ${state.scopes.join(", ")}`;
  }
  if (routing.given > 0 && routing.seenBefore + routing.outOfScope === routing.given) {
    if (!state.alone) {
      // The cluster's crawl may go on elsewhere: only this agent's part of it is known here.
      return (
        `${seeds} seen in data dir ${dataDir} before: they are not queued again (a new crawl ` +
        "needs a new --data folder for every agent)"
      );
    }
    if (state.queuedUrls === 0) {
      return (
        `the crawl in data dir ${dataDir} is complete: ${seeds} tried there before and nothing is queued ` +
        `(${state.pagesFetched} pages fetched there since it began). A URL is tried once per data dir: ` +
        "to crawl the seeds again, start a new crawl with a new --data folder"
      );
    }
    return (
      `resuming the crawl in data dir ${dataDir}: ${seeds} seen there before; left: ` +
      `${state.queuedUrls} queued URLs on ${state.hostsWithWork} hosts`
    );
  }
  if (routing.given === 0 && state.alone && state.queuedUrls === 0) {
    return (
      `nothing to crawl: no --seeds, and nothing is queued in data dir ${dataDir} ` +
      `(${state.pagesFetched} pages fetched there before). Give --seeds to start a crawl`
    );
  }
  return undefined;
}

/** Below this, how long an unavailable robots.txt can hold a crawl's end is not worth a notice. */
const END_WAIT_NOTICE_MS = 10_000;

/**
 * A line for an agent started with `--exit-when-done` whose robots.txt retries can hold the crawl's end
 * for a while, or undefined: a host whose robots.txt is unavailable is tried `maxRobotsAttempts` times
 * `robotsRetryMs` apart before its pages are given up, and the crawl is not done until then.
 */
export function endWaitNotice(options: {
  readonly exitWhenDone: boolean;
  readonly maxRobotsAttempts: number;
  readonly robotsRetryMs: number;
}): string | undefined {
  const waitMs = (options.maxRobotsAttempts - 1) * options.robotsRetryMs;
  if (!options.exitWhenDone || waitMs < END_WAIT_NOTICE_MS) return undefined;
  return (
    `with --exit-when-done the crawl ends once every host is done: a host whose robots.txt is unavailable ` +
    `is tried ${options.maxRobotsAttempts} times ${options.robotsRetryMs / 1000} s apart before its pages are ` +
    `given up, so the end can wait up to ${Math.round(waitMs / 1000)} s for it after the last page ` +
    "(--max-robots-attempts, --robots-retry-ms; the progress line shows such hosts as waiting for robots.txt)"
  );
}

/** What {@link nothingFetched} reads of an agent that stopped because its crawl was done. */
export interface EndState {
  readonly id: string;
  readonly dataDir: string;
  readonly stats: CrawlStats;
  /** What the start did with the seeds (undefined: the agent never started). */
  readonly routing: SeedRouting | undefined;
  /** True for a lone agent; false for a cluster agent, whose share is only part of the crawl. */
  readonly alone: boolean;
  /** `--hosts-file`, when names are resolved with it. */
  readonly hostsFile?: string;
}

/**
 * Hosts whose names must fail to resolve before a cluster agent that fetched nothing blames its own
 * resolver (`--hosts-file`, the machine's DNS): a share of one or two hosts whose names are gone is the
 * web's doing — a small share of a small web can be just that — while a resolver that answers nothing
 * fails every host it is given.
 */
const UNRESOLVED_HOSTS_TO_BLAME_RESOLVER = 3;

/**
 * The `NothingFetched` error for a crawl that ended without fetching a page because what it tried
 * failed (this run, or — its seeds all seen before — an earlier run in the same data dir); undefined
 * for a crawl that fetched pages, or had nothing to try. A cluster agent fails so only when its own
 * flags are at fault: the network policy refused an address, or no name of several hosts resolved
 * (in a cluster, a share that fetched nothing for another reason — a server down, a gone host — is the
 * web's doing, not this agent's).
 */
export function nothingFetched(end: EndState): UbiError | undefined {
  const { stats, routing } = end;
  if (stats.pagesFetchedThisRun > 0) return undefined;
  const thisRun = errorsSince(stats, routing?.errorsBefore ?? {});
  const ownFault =
    end.alone ||
    thisRun.has(ErrorCode.AddressForbidden) ||
    (thisRun.has(ErrorCode.DnsNotFound) &&
      stats.unresolvedHostsThisRun >= UNRESOLVED_HOSTS_TO_BLAME_RESOLVER);
  if (thisRun.size > 0 && ownFault) {
    return new UbiError(
      ErrorCode.NothingFetched,
      `agent ${end.id} fetched no page: every URL it tried failed — ${explainAll(thisRun, end.hostsFile, true)}`,
    );
  }
  const triedBefore =
    end.alone &&
    routing !== undefined &&
    routing.given > 0 &&
    routing.queued === 0 &&
    routing.sentAway === 0 &&
    routing.seenBefore > 0;
  if (triedBefore && stats.pagesFetched === 0 && stats.errors.size > 0) {
    return new UbiError(
      ErrorCode.NothingFetched,
      `agent ${end.id} fetched no page: its seeds were tried in an earlier run in the data dir ${end.dataDir} ` +
        `and failed then — ${explainAll(stats.errors, end.hostsFile, false)}. A URL that failed is not tried ` +
        "again in the same data dir: to try the seeds again, start a new crawl with a new --data folder",
    );
  }
  return undefined;
}

/** Errors by class counted since `before`. */
function errorsSince(stats: CrawlStats, before: Readonly<Record<string, number>>): Map<string, number> {
  const since = new Map<string, number>();
  for (const [errorClass, count] of stats.errors) {
    const added = count - (before[errorClass] ?? 0);
    if (added > 0) since.set(errorClass, added);
  }
  return since;
}

function explainAll(
  errors: ReadonlyMap<string, number>,
  hostsFile: string | undefined,
  advise: boolean,
): string {
  return [...errors]
    .sort((a, b) => b[1] - a[1])
    .map(([errorClass, count]) => explain(errorClass, count, hostsFile, advise))
    .join("; ");
}

/** One error class in words, e.g. "3 URLs refused by the network policy (UBI_ERR_ADDRESS_FORBIDDEN): …". */
function explain(errorClass: string, count: number, hostsFile: string | undefined, advise: boolean): string {
  const what = (text: string, advice: string, unit = "URL") =>
    `${count} ${unit}${count === 1 ? "" : "s"} ${text} (${errorClass})${advise && advice !== "" ? `: ${advice}` : ""}`;
  switch (errorClass) {
    case ErrorCode.AddressForbidden:
      return what(
        "refused by the network policy, at a private, loopback or link-local address",
        "allow such addresses with --allow-net CIDR (e.g. --allow-net 127.0.0.0/8 for loopback)",
      );
    case ErrorCode.DnsNotFound:
      return hostsFile === undefined
        ? what(
            "with a host name DNS does not know",
            "check the names, or resolve them with --hosts-file FILE",
          )
        : what(
            `with a host name not in the hosts file ${hostsFile}`,
            "add the names to it, or leave out --hosts-file to use DNS",
          );
    case ErrorCode.ConnectFailed:
      return what("refused or reset by the server", "is a server running there, on that port?");
    case ErrorCode.ConnectTimeout:
      return what("with no connection in time", "is the host reachable from here (a firewall, a proxy)?");
    case ErrorCode.HeadersTimeout:
    case ErrorCode.BodyTimeout:
      return what("with no answer in time", "raise --fetch-timeout-ms for a slow server");
    case ErrorCode.TlsFailed:
      return what(
        "on https: whose certificate could not be verified (see the tls-failed records for why)",
        "trust the CA that signed it with --ca-file FILE (or NODE_EXTRA_CA_CERTS)",
      );
    case ErrorCode.TooSlow:
      return what("sent slower than --min-bytes-per-s", "lower --min-bytes-per-s for a slow server");
    case "robots_unavailable":
      return what(
        "given up because its robots.txt could not be fetched",
        "is the server up? (tried --max-robots-attempts times)",
        "host",
      );
    case ErrorCode.ProtocolError:
      return what("answered with broken HTTP", "");
    default:
      return what("failed", "");
  }
}
