import { type IpLimiter, type IpRelease, ipRelease } from "../frontier/index.js";
import type { IpActivity } from "./ip-activity.js";

/**
 * `limiter`, with each request's wait for its slot, its run and its server's push-backs told to
 * `activity` (the busiest addresses' report); the limits are `limiter`'s alone.
 */
export function trackedIpLimiter(limiter: IpLimiter, activity: IpActivity): IpLimiter {
  return {
    acquire: async (ip, signal, host) => {
      const wait = activity.waits(ip, host);
      let release: IpRelease;
      try {
        release = await limiter.acquire(ip, signal, host);
      } catch (error) {
        wait.gaveUp();
        throw error;
      }
      return endedWith(release, wait.started());
    },
    tryAcquire: (ip, host) => {
      const release = limiter.tryAcquire(ip, host);
      return release === undefined ? undefined : endedWith(release, activity.waits(ip, host).started());
    },
    refused: (ip, retryAfterMs) => {
      activity.refused(ip);
      limiter.refused(ip, retryAfterMs);
    },
    crawlDelay: (ip, delayMs) => limiter.crawlDelay(ip, delayMs),
    spacingWaitMs: (ip) => limiter.spacingWaitMs(ip),
    politenessAt: (ip) => limiter.politenessAt(ip),
  };
}

/** `release`, telling `ended` first: the request's run is over. */
function endedWith(release: IpRelease, ended: () => void): IpRelease {
  return ipRelease(() => {
    ended();
    release();
  }, release.sent);
}
