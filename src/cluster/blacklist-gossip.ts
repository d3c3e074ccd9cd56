import {
  addRestores,
  type BlacklistEntry,
  type BlacklistRestore,
  NO_RESTORE,
  type RuntimeBlacklist,
} from "../agent/index.js";
import type { Clock, TimerHandle } from "../clock.js";
import type { Logger } from "../logging/index.js";
import type { BlacklistSync } from "../transport/index.js";

/** How often an agent syncs its blacklist with one live agent picked at random. */
export const BLACKLIST_SYNC_INTERVAL_MS = 30_000;

/** What a {@link BlacklistGossip} needs. */
export interface BlacklistGossipDeps {
  readonly clock: Clock;
  /** This agent's blacklist, where a peer's entries merge. */
  readonly blacklist: Pick<RuntimeBlacklist, "entries" | "merge">;
  /** The other live agents' ids. */
  readonly peers: () => readonly string[];
  /** Sends this agent's entries to a peer; resolves with the peer's after its merge. */
  readonly sync: (peerId: string, request: BlacklistSync) => Promise<BlacklistSync>;
  readonly logger: Logger;
  /** Picks a peer among `count` (index). @default uniformly at random */
  readonly pick?: (count: number) => number;
}

/**
 * Spreads the host blacklist through the cluster (anti-entropy over `SyncBlacklist`): a change made
 * here by an operator is pushed to every live agent at once, an agent pulls from every live agent when
 * it joins (so a newcomer, or an agent back from a crash, has the blacklist before it crawls much), and
 * every {@link BLACKLIST_SYNC_INTERVAL_MS} it syncs with one live agent, which repairs any push that
 * did not arrive. Entries merge by last change (see HostBlacklist), so every agent ends with the same
 * list whatever the order.
 */
export class BlacklistGossip {
  private timer: TimerHandle | undefined;
  private running = false;

  constructor(
    private readonly options: { readonly intervalMs?: number },
    private readonly deps: BlacklistGossipDeps,
  ) {}

  /**
   * `SyncBlacklist`: merges a peer's entries and answers with this agent's after the merge, and with
   * what the merge gave back of the hosts it took off the list (the URLs kept aside for them).
   */
  async answer(request: BlacklistSync): Promise<BlacklistSync> {
    const merge = await this.deps.blacklist.merge(request.entries);
    const entries = this.deps.blacklist.entries();
    return merge.restore === undefined || merge.restore.hosts === 0
      ? { entries }
      : { entries, restored: merge.restore };
  }

  /** Pulls from (and pushes to) every live agent; then syncs with one now and then until stopped. */
  async start(): Promise<void> {
    this.running = true;
    await this.syncWithAll();
    this.schedule();
  }

  /**
   * After an operator's change here: pushes it to every live agent (failures are repaired later).
   * Resolves with what the peers gave back of hosts the change took off the list (the peers that
   * answered; the others restore theirs when the change reaches them).
   */
  async pushChange(): Promise<BlacklistRestore> {
    return this.syncWithAll();
  }

  /** Stops the periodic sync. */
  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.deps.clock.setTimeout(() => {
      const peers = this.deps.peers();
      const pick = this.deps.pick ?? ((count: number) => Math.floor(Math.random() * count));
      const peer = peers.length === 0 ? undefined : peers[pick(peers.length)];
      const done = peer === undefined ? Promise.resolve() : this.syncWith(peer);
      done.finally(() => this.schedule());
    }, this.options.intervalMs ?? BLACKLIST_SYNC_INTERVAL_MS);
  }

  private async syncWithAll(): Promise<BlacklistRestore> {
    const restores = await Promise.all(this.deps.peers().map((peer) => this.syncWith(peer)));
    return restores.reduce(addRestores, NO_RESTORE);
  }

  /** Syncs with `peer`; resolves with what its merge gave back (nothing when the sync failed). */
  private async syncWith(peer: string): Promise<BlacklistRestore> {
    const entries: BlacklistEntry[] = this.deps.blacklist.entries();
    try {
      const reply = await this.deps.sync(peer, { entries });
      const merge = await this.deps.blacklist.merge(reply.entries);
      if (merge.added.length > 0 || merge.removed.length > 0) {
        this.deps.logger.info(
          { event: "blacklist-synced", peer, added: merge.added, removed: merge.removed },
          `blacklist from ${peer}: ${[...merge.added.map((p) => `+${p}`), ...merge.removed.map((p) => `-${p}`)].join(" ")}`,
        );
      }
      return reply.restored ?? NO_RESTORE;
    } catch (error) {
      // Repaired by a later sync (this peer's, or another's).
      this.deps.logger.debug(
        { event: "blacklist-sync-failed", peer, err: error },
        `blacklist sync with ${peer} failed`,
      );
      return NO_RESTORE;
    }
  }
}
