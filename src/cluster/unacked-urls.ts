import type { GroupCommit, StateStore } from "../storage/index.js";
import { outboxDoneOp, outboxEntries } from "../storage/index.js";
import { hostKey } from "../url/index.js";

/**
 * Outbox "peer" holding the URLs handed to other agents and not yet acknowledged by any of them. No
 * agent id contains `~`, so it never collides with a real peer's outbox entries.
 *
 * A URL is handed away in the same atomic batch that records the page it was found on (or the drain of
 * its queue); the batch carrying it goes out later. A SIGKILL in between leaves the URL on no queue but
 * this agent's outbox, and the outbox alone is only replayed when its destination crashes: without
 * this record, a URL whose only link was on that page would never be crawled.
 */
export const UNACKED_PEER = "~unacked";

/** Where {@link resendUnacked} routes each URL again. */
export type RouteAgain = (url: string, depth: number, host: string, attempts?: number) => void;

/**
 * After a restart: routes every URL still marked unacknowledged under the current view (to its owner's
 * batch, or this agent's frontier) and clears its mark; a URL sent out again is marked again by its
 * new hand-off, in the same commit. Returns how many URLs were routed again.
 */
export async function resendUnacked(
  store: StateStore,
  committer: GroupCommit,
  route: RouteAgain,
): Promise<number> {
  let count = 0;
  for await (const { fingerprint, entry } of outboxEntries(store, UNACKED_PEER)) {
    // The mark is cleared before routing: a hand-off of the same URL puts it back, and the later op wins.
    committer.add(outboxDoneOp(UNACKED_PEER, fingerprint));
    route(entry.url, entry.depth, hostKey(entry.url), entry.attempts);
    count++;
  }
  await committer.commit();
  return count;
}
