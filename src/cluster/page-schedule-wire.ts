import { ErrorCode, UbiError } from "../errors.js";
import type { PageHistory } from "../recrawl/index.js";
import type { PageSchedule } from "../transport/index.js";
import { hostKey, normalizeUrl } from "../url/index.js";

/**
 * Page histories (`--recrawl`) as `HostHandOver.pages` carries them, and back (the recrawl module
 * knows nothing of the wire): absent fields are empty strings and zeros there.
 */

/** A history as sent with its host. */
export function toPageSchedule(history: PageHistory): PageSchedule {
  return {
    url: history.url,
    depth: history.depth,
    etag: history.etag ?? "",
    lastModified: history.lastModified ?? "",
    captureDigest: history.capture?.digest ?? "",
    captureUrl: history.capture?.original.url ?? "",
    captureDate: history.capture?.original.date ?? "",
    captureRecordId: history.capture?.original.recordId ?? "",
    visits: history.visits,
    changes: history.changes,
    observedMs: history.observedMs,
    lastAtMs: history.lastAtMs,
    nextAtMs: history.nextAtMs ?? 0,
    changefreq: history.changefreq ?? "",
  };
}

/**
 * The histories of a (validated) hand-over of `host`. A page that is not a canonical URL of that host
 * fails as `BadMessage`: its history would be kept under another host's key, out of every schedule.
 */
export function fromPageSchedules(host: string, pages: readonly PageSchedule[]): PageHistory[] {
  return pages.map((page, i) => {
    if (normalizeUrl(page.url) !== page.url || hostKey(page.url) !== host) {
      throw new UbiError(
        ErrorCode.BadMessage,
        `hand-over of ${host}: pages[${i}].url is not a canonical URL of the host: ${page.url.slice(0, 200)}`,
      );
    }
    return {
      url: page.url,
      depth: page.depth,
      ...(page.etag === "" ? {} : { etag: page.etag }),
      ...(page.lastModified === "" ? {} : { lastModified: page.lastModified }),
      ...(page.captureDigest === ""
        ? {}
        : {
            capture: {
              digest: page.captureDigest,
              original: { url: page.captureUrl, date: page.captureDate, recordId: page.captureRecordId },
            },
          }),
      visits: page.visits,
      changes: page.changes,
      observedMs: page.observedMs,
      lastAtMs: page.lastAtMs,
      ...(page.nextAtMs === 0 ? {} : { nextAtMs: page.nextAtMs }),
      ...(page.changefreq === "" ? {} : { changefreq: page.changefreq }),
    };
  });
}
