import type { AsideRestore } from "../frontier/index.js";

// What an agent does with the URLs it kept aside while their hosts were blacklisted, once the hosts
// come off the list, and how that is said to an operator.

/** What coming off the blacklist gave back, over the hosts restored (see BlacklistControl.restoreUnlisted). */
export interface BlacklistRestore {
  /** Hosts whose kept-aside URLs were restored. */
  readonly hosts: number;
  /** URLs queued again here (this agent owns their hosts). */
  readonly queuedHere: number;
  /** URLs sent to the agents owning their hosts, each queued there unless it has them already. */
  readonly sentToOwners: number;
  /** URLs no longer within the limits (deeper than --max-depth, out of --scope): dropped. */
  readonly outOfLimits: number;
  /** URLs kept aside that were done meanwhile (nothing is fetched twice). */
  readonly doneMeanwhile: number;
  /** URLs dropped while blacklisted beyond the per-host cap: not kept, so not restored. */
  readonly beyondCap: number;
}

/** A restore that gave back nothing. */
export const NO_RESTORE: BlacklistRestore = {
  hosts: 0,
  queuedHere: 0,
  sentToOwners: 0,
  outOfLimits: 0,
  doneMeanwhile: 0,
  beyondCap: 0,
};

/** The sum of two restores (an agent's and its peers'). */
export function addRestores(a: BlacklistRestore, b: BlacklistRestore): BlacklistRestore {
  return {
    hosts: a.hosts + b.hosts,
    queuedHere: a.queuedHere + b.queuedHere,
    sentToOwners: a.sentToOwners + b.sentToOwners,
    outOfLimits: a.outOfLimits + b.outOfLimits,
    doneMeanwhile: a.doneMeanwhile + b.doneMeanwhile,
    beyondCap: a.beyondCap + b.beyondCap,
  };
}

/** `restore` with one host's {@link AsideRestore} added, its placed URLs split by where they went. */
export function withHost(
  restore: BlacklistRestore,
  host: AsideRestore,
  placed: { readonly here: number; readonly sent: number; readonly dropped: number },
): BlacklistRestore {
  return addRestores(restore, {
    hosts: 1,
    queuedHere: placed.here,
    sentToOwners: placed.sent,
    outOfLimits: placed.dropped,
    doneMeanwhile: host.doneMeanwhile,
    beyondCap: host.beyondCap,
  });
}

/** What a removal from the blacklist did here (see BlacklistControl.remove). */
export interface BlacklistRemoval {
  /** What the hosts of the pattern (and of any other pattern no longer matching) gave back here. */
  readonly restore: BlacklistRestore;
  /**
   * True when the pattern was added before this agent's state kept dropped URLs aside (an older
   * version): the URLs it dropped then are not known, and cannot be restored.
   */
  readonly droppedBeforeKeeping: boolean;
}

/** What a merge of blacklist entries gave back, when it took patterns off the list. */
export interface RestoredByMerge {
  readonly restore?: BlacklistRestore;
}

/**
 * The operator's summary of a restore: how many URLs were queued again and where, and plainly what
 * could not be restored and why. `cap` is the per-host number of URLs kept aside at most.
 */
export function describeRestore(restore: BlacklistRestore, cap: number): string {
  const parts: string[] = [];
  const back = restore.queuedHere + restore.sentToOwners;
  parts.push(
    `${plural(back, "URL")} dropped while listed queued again` +
      (restore.sentToOwners > 0
        ? ` (${restore.queuedHere} here, ${restore.sentToOwners} sent to their hosts' owners)`
        : ""),
  );
  if (restore.doneMeanwhile > 0) parts.push(`${restore.doneMeanwhile} done meanwhile, not fetched again`);
  if (restore.outOfLimits > 0)
    parts.push(`${restore.outOfLimits} now beyond --max-depth or --scope, dropped`);
  if (restore.beyondCap > 0) {
    parts.push(
      `${restore.beyondCap} cannot be restored: dropped beyond the ${cap} URLs a host kept aside (give them to ctl add-seeds --force)`,
    );
  }
  return parts.join("; ");
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
