import { eitherAborted } from "../abort-watch.js";
import { type Clock, sleep } from "../clock.js";
import { ErrorCode } from "../errors.js";
import type { IpLimiter, IpRelease, PageTurns } from "../frontier/index.js";
import type { RobotsRules } from "../robots/index.js";
import { type HandedOverWatch, pausedOrHandedOver } from "./hands-changes.js";
import { currentAddress, type HostAddressDeps } from "./host-address.js";
import { PARK_LONGER_WAITS_MS } from "./host-pace.js";
import type { HostRuntime } from "./host-runtime.js";
import type { Stop } from "./url-checks.js";

// The wait before a page's request, in the order it is waited: the host's politeness delay, its
// address asked again, the site's Crawl-delay at that address, the page's turn, the address's slot.
// The host visitor only learns whether the request may go, and what it holds until it ends.

/** The politeness wait is slept in slices of this many ms at most, checking between them for a pause. */
const POLITENESS_SLICE_MS = 250;

/** What {@link waitForRequest} reads and holds. */
export interface RequestWaitDeps extends HostAddressDeps {
  readonly clock: Clock;
  /** Requests at once and spacing per IP address: this agent's, or the cluster's. */
  readonly ipGate: Pick<IpLimiter, "crawlDelay" | "spacingWaitMs" | "acquire" | "tryAcquire">;
  /** Turns to fetch and process a page, the longest queues served first (see page-turns.ts). */
  readonly turns: Pick<PageTurns, "acquire">;
  /** URLs of `host` waiting in its queue: how soon its page turn comes. */
  readonly waitingOf: (host: string) => number;
  /** True when the politeness wait ends early: a pause or stop, or `host` is no longer this agent's to fetch. */
  readonly waitCut: (host: string) => boolean;
  /** Aborted while visits are paused: the wait for the address's slot ends there (the URL goes back). */
  readonly pausedSignal?: () => AbortSignal | undefined;
  /** Aborted once `host` is no longer this agent's to fetch: the wait for the address's slot ends there too. */
  readonly handedOver?: (host: string) => HandedOverWatch | undefined;
}

/** A request that may go now, and what it holds until it ends. */
export interface ClearedRequest {
  readonly kind: "cleared";
  /** The address the request is counted at and sent to. */
  readonly ip: string;
  /** Gives the address's slot back: when the request ends; its `sent` when the request is written. */
  readonly release: IpRelease;
  /** Ends the page's turn: once the page is processed, or its fetch failed. */
  readonly endTurn: () => void;
}

/**
 * Waits until a request to `host` (under `rules`) is due: its politeness delay (in slices, so a pause or a
 * hand-over ends it early; a leave waits for requests in flight), then — at the address its resolver
 * gives now, so a host that moved is counted at its new address — the site's Crawl-delay spacing, a page
 * turn and the address's slot. Either the request is cleared, or the URL stops: a host that cannot be
 * resolved fails, one whose server is spaced longer than a park's threshold parks. Stopped meanwhile
 * (`signal`), it throws, holding nothing.
 */
export async function waitForRequest(
  host: string,
  state: HostRuntime,
  rules: RobotsRules,
  signal: AbortSignal,
  deps: RequestWaitDeps,
): Promise<ClearedRequest | Stop> {
  const { clock, ipGate } = deps;
  const { pace } = state;
  for (let wait = pace.nextFetchAtMs - clock.now(); wait > 0; wait = pace.nextFetchAtMs - clock.now()) {
    await sleep(clock, Math.min(wait, POLITENESS_SLICE_MS), signal);
    if (deps.waitCut(host)) break;
  }
  // Asked now, not before the politeness wait: the address the request waits for a slot at is its own.
  const ip = await currentAddress(host, state, signal, deps);
  if (ip === undefined) return { kind: "fail", code: state.dnsError ?? ErrorCode.DnsNotFound };
  // The site's Crawl-delay spaces every request to its server, whichever host they are for; a host
  // whose server is spaced that long parks, as for its own long waits, rather than hold a worker.
  if (rules.crawlDelayMs) ipGate.crawlDelay(ip, rules.crawlDelayMs);
  const spacedMs = ipGate.spacingWaitMs(ip);
  if (spacedMs > PARK_LONGER_WAITS_MS) {
    return {
      kind: "put-back",
      outcome: { kind: "parked", untilMs: clock.now() + spacedMs, reason: "crawl-delay" },
    };
  }
  // The page's turn: held until it is processed (or its fetch failed).
  const endTurn = await deps.turns.acquire(deps.waitingOf(host), signal);
  // Most requests find their address's slot free: taken at once, with no signals to end a wait.
  const now = signal.aborted || deps.waitCut(host) ? undefined : ipGate.tryAcquire(ip, host);
  if (now !== undefined) return { kind: "cleared", ip, release: now, endTurn };
  // The address's slot may be long in coming (a busy shared server, its authority's line): a pause ends
  // the wait, so a leaving agent's URL goes back to its queue and is handed over, not held in flight; so
  // does the host's hand-over to another agent (a join), so the URL goes on to its new owner.
  const ends = pausedOrHandedOver(deps.pausedSignal?.(), deps.handedOver?.(host));
  const cut = ends.signal === undefined ? undefined : eitherAborted(signal, ends.signal);
  try {
    return { kind: "cleared", ip, release: await ipGate.acquire(ip, cut?.signal ?? signal, host), endTurn };
  } catch (error) {
    endTurn();
    if (!signal.aborted && ends.signal?.aborted === true)
      return { kind: "put-back", outcome: { kind: "yielded" } };
    throw error;
  } finally {
    cut?.dispose();
    ends.dispose();
  }
}
