import { ErrorCode, isUbiError } from "../errors.js";
import type { Fetcher } from "../fetching/index.js";
import type { IpLimiter } from "../frontier/index.js";

/** A fetch like {@link Fetcher.fetch}. */
type Fetch = Pick<Fetcher, "fetch">;

/**
 * `fetcher`, each request holding a slot of `ipGate` for its server's address while it runs: robots.txt
 * requests count against `--max-per-ip` like pages do (pages take their slot in the host visitor,
 * after the host's politeness wait), and are spaced from when they are written. The address is resolved anew for each request and the request
 * sent there, so it goes where it was counted. A name that does not resolve is fetched as before, so
 * the fetcher reports its failure.
 */
export function ipGatedFetch(
  fetcher: Fetch,
  resolve: (hostname: string) => Promise<string>,
  ipGate: IpLimiter,
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
        const release = await ipGate.acquire(ip, options?.signal, host);
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
