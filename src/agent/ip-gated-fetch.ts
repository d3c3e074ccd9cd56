import { eitherAborted } from "../abort-watch.js";
import { type Clock, sleep } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { Fetcher } from "../fetching/index.js";
import type { IpLimiter, IpRelease } from "../frontier/index.js";

/** A fetch like {@link Fetcher.fetch}. */
type Fetch = Pick<Fetcher, "fetch">;

/** How often a request held by a pause looks whether the visits resumed, ms. */
const RESUME_POLL_MS = 100;

/** The agent's pause, as a request about to be sent sees it. */
export interface PauseWatch {
  /** A signal aborted while visits are paused (a new one after the resume); undefined: never paused. */
  readonly pausedSignal: () => AbortSignal | undefined;
  /** A signal aborted once the agent stops: a request held by a pause then fails instead of waiting on. */
  readonly stoppedSignal?: () => AbortSignal | undefined;
  readonly clock: Clock;
}

/**
 * `fetcher`, each request holding a slot of `ipGate` for its server's address while it runs: robots.txt
 * requests count against `--max-per-ip` like pages do (pages take their slot in the host visitor,
 * after the host's politeness wait), and are spaced from when they are written. The address is resolved
 * anew for each request and the request sent there, so it goes where it was counted. A name that does
 * not resolve is fetched as before, so the fetcher reports its failure. While `pause` says the agent is
 * paused, no request is sent: a wait for its slot ends at the pause (the slot is given back if it came
 * as the pause did), and the request waits for the resume.
 */
export function ipGatedFetch(
  fetcher: Fetch,
  resolve: (hostname: string) => Promise<string>,
  ipGate: IpLimiter,
  pause?: PauseWatch,
): Fetch {
  return {
    fetch: async (url, options) => {
      const { hostname, host } = new URL(url);
      let ip: string;
      try {
        ip = await resolve(hostname);
      } catch {
        return fetcher.fetch(url, options);
      }
      for (;;) {
        const release = await acquireUnpaused(ipGate, ip, host, options?.signal, pause);
        if (release === undefined) continue;
        try {
          return await fetcher.fetch(url, { ...options, ip, onSent: release.sent });
        } catch (error) {
          // Its slot lapsed on its way, nothing sent: given back, and asked for again.
          if (!isUbiError(error, ErrorCode.StartLapsed)) throw error;
        } finally {
          release();
        }
      }
    },
  };
}

/**
 * A slot of `ipGate` at `ip` once the agent is not paused; undefined when a pause ended the wait, or
 * came with the slot (given back): to be asked again.
 */
async function acquireUnpaused(
  ipGate: IpLimiter,
  ip: string,
  host: string,
  signal: AbortSignal | undefined,
  pause: PauseWatch | undefined,
): Promise<IpRelease | undefined> {
  if (pause !== undefined && pause.pausedSignal()?.aborted === true) await waitForResume(pause, signal);
  const paused = pause?.pausedSignal();
  const cut = paused === undefined || signal === undefined ? undefined : eitherAborted(signal, paused);
  try {
    const release = await ipGate.acquire(ip, cut?.signal ?? signal ?? paused, host);
    if (pause?.pausedSignal()?.aborted !== true) return release;
    release();
    return undefined;
  } catch (error) {
    // The pause ended the wait (not the caller, nor the gate closing as the agent stops).
    if (paused?.aborted === true && error === paused.reason && signal?.aborted !== true) return undefined;
    throw error;
  } finally {
    cut?.dispose();
  }
}

/**
 * Waits until `pause` says the agent's visits resumed, looking every {@link RESUME_POLL_MS}; rejects
 * when `signal` aborts or the agent stops meanwhile (a pause a stop ends is never resumed).
 */
async function waitForResume(pause: PauseWatch, signal: AbortSignal | undefined): Promise<void> {
  const stopped = pause.stoppedSignal?.();
  const cut = stopped === undefined || signal === undefined ? undefined : eitherAborted(signal, stopped);
  try {
    while (pause.pausedSignal()?.aborted === true)
      await sleep(pause.clock, RESUME_POLL_MS, cut?.signal ?? signal ?? stopped);
  } finally {
    cut?.dispose();
  }
}
