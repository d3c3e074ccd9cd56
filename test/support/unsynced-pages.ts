import { UNSYNCED_PAGES_PER_HOST } from "../../src/agent/index.js";

/**
 * The URLs of each host's last {@link UNSYNCED_PAGES_PER_HOST} requests among `requests`, in order: what
 * a crash or a power cut right after them can make an agent fetch again (a host's next fetch does not
 * wait for its last page's commit, so that many of its pages may not be durable yet).
 */
export function lastPagesOfEachHost(
  requests: Iterable<{ readonly host: string; readonly url: string }>,
): string[] {
  const lastOfHost = new Map<string, string[]>();
  for (const { host, url } of requests) {
    const last = lastOfHost.get(host) ?? [];
    last.push(url);
    if (last.length > UNSYNCED_PAGES_PER_HOST) last.shift();
    lastOfHost.set(host, last);
  }
  return [...lastOfHost.values()].flat();
}
