import type { FoundLink } from "../agent/link-origins.js";
import { type Clock, sleep, within } from "../clock.js";
import { outboxEntries, outboxPeers, type StateReader, traitsOf, type UrlTraits } from "../storage/index.js";
import type { DiscoveredUrl, UrlBatch, UrlBatchAck } from "../transport/index.js";
import { hostKey } from "../url/index.js";
import type { Ownership } from "./ownership.js";
import { UNACKED_PEER } from "./unacked-urls.js";

/** URLs in one `keepForOwners` batch at most (a batch may hold 10,000; these go while the leave's time lasts). */
const KEEP_BATCH_URLS = 1_000;
/** Wait before a keep batch that failed is sent again. */
const KEEP_RETRY_MS = 200;

/** What {@link entrustToKeepers} needs. */
export interface LeaveKeepersDeps {
  readonly selfId: string;
  readonly clock: Clock;
  /** This agent's state: its outbox, the URLs it handed to each agent. */
  readonly store: StateReader;
  readonly ownership: Pick<Ownership, "ownerOnceGone" | "keeperFor">;
  /** True for an agent that stays: alive in this agent's view, not itself. */
  readonly isStaying: (id: string) => boolean;
  /** The links noted here for this agent's own hosts, found on other hosts' pages (see link-origins.ts), forgotten here. */
  readonly takeAllLinks: () => FoundLink[];
  /** Sends one batch to a peer and resolves with its acknowledgement. */
  readonly submit: (peer: string, batch: UrlBatch, signal: AbortSignal) => Promise<UrlBatchAck>;
}

/**
 * A graceful leave's last step. An agent's outbox (every URL it handed to another agent) and the links
 * its pages gave to its own hosts are what lets the crawl survive another agent's crash: a crashed
 * agent's URLs are re-sent from the outboxes of those that gave them, and a link on a page done
 * elsewhere is known to the agent that found it alone. Leaving, it would take them along, and a later
 * crash of an agent that took its hosts would lose them where no other page leads. So each goes to a
 * keeper: the agent that would own the URL's host without this one and the URL's holder (its owner
 * once this one is gone; `Ownership.keeperFor`), in `keepForOwners` batches, which the keeper records
 * in its own outbox for the holder without sending them (a copy sent on could race the leave's own
 * hand-over of the URL and win with stale traits). Read a batch at a time, so the memory stays
 * bounded; a URL whose holder is not staying, or that has no third agent to keep it, is skipped.
 * Resolves true once every batch is acknowledged, false when `deadlineAtMs` (on `clock`) came first.
 */
export async function entrustToKeepers(deps: LeaveKeepersDeps, deadlineAtMs: number): Promise<boolean> {
  const { clock, ownership, isStaying, selfId } = deps;
  const pending = new Map<string, DiscoveredUrl[]>();
  let serial = 0;
  let complete = true;
  const send = async (keeper: string, urls: DiscoveredUrl[]): Promise<void> => {
    const batch: UrlBatch = {
      batchId: `${selfId}.keep.${clock.now()}.${++serial}`,
      fromId: selfId,
      urls,
      keepForOwners: true,
    };
    const acknowledged = await within(clock, deadlineAtMs - clock.now(), async (timeUp) => {
      for (;;) {
        try {
          await deps.submit(keeper, batch, timeUp);
          return true;
        } catch (error) {
          if (timeUp.aborted || !isStaying(keeper)) throw error;
          await sleep(clock, KEEP_RETRY_MS, timeUp);
        }
      }
    });
    if (acknowledged !== true) complete = false;
  };
  const add = async (holder: string, url: string, depth: number, traits: UrlTraits): Promise<void> => {
    const host = hostKey(url);
    const keeper = isStaying(holder) ? ownership.keeperFor(host, holder) : undefined;
    if (keeper === undefined || !isStaying(keeper)) return;
    const urls = pending.get(keeper) ?? [];
    urls.push({ url, depth, ...traitsOf(traits) });
    pending.set(keeper, urls);
    if (urls.length < KEEP_BATCH_URLS) return;
    pending.delete(keeper);
    await send(keeper, urls);
  };
  for (const link of deps.takeAllLinks()) {
    const holder = ownership.ownerOnceGone(link.host);
    if (holder !== undefined) await add(holder, link.url, link.depth, link.traits);
    if (clock.now() >= deadlineAtMs) return false;
  }
  for (const holder of await outboxPeers(deps.store)) {
    if (holder === UNACKED_PEER || holder === selfId || !isStaying(holder)) continue;
    for await (const { entry } of outboxEntries(deps.store, holder)) {
      await add(holder, entry.url, entry.depth, traitsOf(entry));
      if (clock.now() >= deadlineAtMs) return false;
    }
  }
  for (const [keeper, urls] of pending) await send(keeper, urls);
  return complete;
}
