import { afterAll, beforeAll } from "vitest";
import { Fetcher, type FetcherOptions, HostsFileResolver, NetPolicy } from "../../src/fetching/index.js";
import { type HostileWebOptions, type RunningHostileWeb, startHostileWeb } from "../../src/testweb/index.js";

/** Drip interval of the unit tests: fast enough to be quick, slow enough to be a drip. */
export const TEST_DRIP_MS = 50;

/** Deadlines of the unit tests' fetchers, ms. */
export const TEST_TIMEOUTS: FetcherOptions = {
  connectTimeoutMs: 2000,
  headersTimeoutMs: 600,
  bodyIdleTimeoutMs: 600,
  totalTimeoutMs: 800,
};

/** A hostile web for the whole test file (small drip interval) and fetchers against it, closed after. */
export interface HostileFixture {
  readonly web: RunningHostileWeb;
  /** A Fetcher resolving through the web's hosts file, allowed loopback only; closed after the file. */
  fetcher(options?: FetcherOptions): Fetcher;
}

/** Starts the hostile web in `beforeAll` and stops it (and every fetcher made) in `afterAll`. */
export function useHostileWeb(options: HostileWebOptions = {}): HostileFixture {
  let web: RunningHostileWeb | undefined;
  const fetchers: Fetcher[] = [];
  beforeAll(async () => {
    web = await startHostileWeb({ dripIntervalMs: TEST_DRIP_MS, ...options });
  });
  afterAll(async () => {
    await Promise.all(fetchers.map((fetcher) => fetcher.close()));
    await web?.stop();
  });
  const fixture: HostileFixture = {
    get web() {
      if (web === undefined) throw new Error("the hostile web is not started yet");
      return web;
    },
    fetcher(fetcherOptions = {}) {
      const resolver = new HostsFileResolver(fixture.web.hostsFileText());
      const fetcher = new Fetcher(
        { ...TEST_TIMEOUTS, ...fetcherOptions },
        { resolver, netPolicy: new NetPolicy({ allow: ["127.0.0.0/8"] }) },
      );
      fetchers.push(fetcher);
      return fetcher;
    },
  };
  return fixture;
}

/** Runs `fetch` and returns its rejection reason (fails the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the fetch to fail, but it succeeded");
}

/** Waits until `predicate` holds, polling every 10 ms; throws after `timeoutMs`. */
export async function until(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
