import type { Clock } from "../clock.js";
import type { Frontier } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import type { GroupCommit } from "../storage/index.js";
import { metaOp } from "../storage/index.js";
import {
  type BlacklistRemoval,
  type BlacklistRestore,
  describeRestore,
  NO_RESTORE,
  type RestoredByMerge,
  withHost,
} from "./blacklist-restore.js";
import type { BlacklistChange, BlacklistEntry, BlacklistMerge, HostBlacklist } from "./host-blacklist.js";
import type { LinkRouter } from "./link-router.js";
import { BLACKLIST_META_KEY } from "./saved-state.js";

/** What a {@link BlacklistControl} changes, saves and restores through. */
export interface BlacklistControlDeps {
  /** The list itself, as loaded from the state. */
  readonly blacklist: HostBlacklist;
  /** Since when this agent's state keeps the URLs dropped for blacklisted hosts aside (ms). */
  readonly keptAsideSinceMs: number;
  /** Who changes the list from here (this agent's id), and when. */
  readonly selfId: string;
  readonly clock: Clock;
  /** The group commit the list is saved with. */
  readonly committer: GroupCommit;
  /** Where the URLs kept aside wait, and are queued again. */
  readonly frontier: Pick<
    Frontier,
    "asideHosts" | "restoreAside" | "maxAsidePerHost" | "commit" | "hostsWithWork"
  >;
  /** Where a restored URL goes: queued here, sent to its owner, or dropped. */
  readonly router: Pick<LinkRouter, "restore">;
  /** Offers `host`, with URLs queued, to the scheduler. */
  readonly markReady: (host: string) => void;
  /** Offers every host with work to the scheduler again, and wakes those parked for a view change. */
  readonly wakeHosts: () => void;
  readonly logger: Logger;
}

/** What the cluster's parts change and read of an agent's runtime blacklist (see {@link BlacklistControl}). */
export type RuntimeBlacklist = Pick<
  BlacklistControl,
  "add" | "remove" | "merge" | "patterns" | "entries" | "maxAsidePerHost"
>;

/**
 * The runtime blacklist's changes (`ubicrawl ctl`, and other agents' through gossip), each made durable
 * before it is answered, and the URLs kept aside for hosts that come off it given back.
 */
export class BlacklistControl {
  constructor(private readonly deps: BlacklistControlDeps) {}

  /** URLs of one host kept aside at most while it is blacklisted; those beyond are only counted. */
  get maxAsidePerHost(): number {
    return this.deps.frontier.maxAsidePerHost;
  }

  /**
   * Adds a host pattern (see {@link HostBlacklist}): its hosts' queued URLs are dropped as they come, and
   * no new request goes to them. Resolves once the list is durable; false when the pattern was on it
   * already. Throws `InvalidArgument` for a malformed pattern.
   */
  async add(pattern: string): Promise<boolean> {
    const added = this.deps.blacklist.add(pattern, this.change());
    if (added) await this.save();
    return added;
  }

  /**
   * Removes a pattern, durably; false when it was not on the list. Its hosts are crawled again: the URLs
   * kept aside while they were listed are queued again (or sent to their hosts' owners), and the removal
   * says how many, and what it could not restore.
   */
  async remove(pattern: string): Promise<BlacklistRemoval | false> {
    const { blacklist, keptAsideSinceMs } = this.deps;
    const normalized = pattern.trim().toLowerCase();
    const addedAtMs = blacklist.entries().find((entry) => entry.pattern === normalized)?.changedAtMs;
    if (!blacklist.remove(pattern, this.change())) return false;
    await this.save();
    const restore = await this.restoreUnlisted();
    this.deps.wakeHosts();
    return { restore, droppedBeforeKeeping: addedAtMs !== undefined && addedAtMs < keptAsideSinceMs };
  }

  /**
   * Merges another agent's entries (the later change of each pattern wins), durably when anything
   * changed; hosts of removed patterns are crawled again.
   */
  async merge(entries: readonly BlacklistEntry[]): Promise<BlacklistMerge & RestoredByMerge> {
    const { blacklist } = this.deps;
    const before = JSON.stringify(blacklist.entries());
    const merge = blacklist.merge(entries);
    if (JSON.stringify(blacklist.entries()) !== before) await this.save();
    if (merge.removed.length === 0) return merge;
    const restore = await this.restoreUnlisted();
    this.deps.wakeHosts();
    return { ...merge, restore };
  }

  /** The list's patterns, sorted. */
  patterns(): string[] {
    return this.deps.blacklist.toJSON();
  }

  /** Every entry, removals included (what another agent merges). */
  entries(): BlacklistEntry[] {
    return this.deps.blacklist.entries();
  }

  /**
   * Gives back the URLs kept aside for hosts no longer blacklisted: each is queued again here when this
   * agent owns its host (though seen before: it was never fetched), else sent to the owner; those done
   * meanwhile are skipped, and those now beyond --max-depth or --scope dropped. Durable when it resolves;
   * logged when anything was restored or could not be. At start, it finishes a removal that a crash (or
   * a stop) cut short.
   */
  async restoreUnlisted(): Promise<BlacklistRestore> {
    const { frontier, blacklist, router } = this.deps;
    let total = NO_RESTORE;
    for (const host of frontier.asideHosts()) {
      if (blacklist.matches(host)) continue;
      const placed = { here: 0, sent: 0, dropped: 0 };
      const restored = await frontier.restoreAside(host, (entry) => {
        const { url, depth, ...traits } = entry;
        const where = router.restore(url, depth, host, traits);
        if (where === "here") placed.here++;
        else if (where === "sent") placed.sent++;
        else placed.dropped++;
      });
      if (restored === undefined) continue;
      total = withHost(total, restored, placed);
      this.deps.logger.info(
        { event: "blacklist-restored", host, ...placed, ...restored },
        `${host} is off the blacklist: ${describeRestore(withHost(NO_RESTORE, restored, placed), frontier.maxAsidePerHost)}`,
      );
    }
    if (total.hosts > 0) {
      await frontier.commit();
      for (const host of frontier.hostsWithWork()) this.deps.markReady(host);
    }
    return total;
  }

  /** A change made by this agent, now. */
  private change(): BlacklistChange {
    return { atMs: this.deps.clock.now(), by: this.deps.selfId };
  }

  private async save(): Promise<void> {
    const { committer, blacklist } = this.deps;
    committer.add(metaOp(BLACKLIST_META_KEY, JSON.stringify(blacklist.entries())));
    await committer.commit();
  }
}
