import type { Clock } from "../clock.js";
import {
  DEFAULT_CLAIM_LEASE_MS,
  type DigestPeers,
  DigestRegistry,
  DuplicateDetector,
} from "../dedup/index.js";
import {
  digestOp,
  forEachPayloadDigest,
  type GroupCommit,
  payloadOriginals,
  type StateStore,
} from "../storage/index.js";
import type { AgentOptions } from "./agent-options.js";
import type { CrawlStats } from "./crawl-stats.js";

/** Confirmed payload digests wait this long for a page's commit to ride on before they commit alone. */
const DIGEST_SAVE_DELAY_MS = 50;

/** An agent's side of storing each payload once: what {@link openPayloadDedup} wires. */
export interface PayloadDedup {
  /** The payload digests this agent owns, and the responses that stored them first. */
  readonly digestRegistry: DigestRegistry;
  /** Asks whether a payload was stored before (`--dedup`); undefined with `--dedup off`. */
  readonly duplicates: DuplicateDetector | undefined;
}

/**
 * Loads the digests this agent owns from `store` and wires the duplicate detector that asks them — and,
 * with `--dedup cluster`, `peers` for the digests other agents own. Confirmed digests are saved with
 * the pages' next commit (or one of their own, when none comes soon); messages, copies and payloads
 * left unchecked are counted in `stats`.
 */
export async function openPayloadDedup(
  options: AgentOptions,
  deps: {
    readonly clock: Clock;
    readonly store: StateStore;
    readonly committer: GroupCommit;
    readonly stats: CrawlStats;
    readonly peers: DigestPeers | undefined;
  },
): Promise<PayloadDedup> {
  const { clock, store, committer, stats } = deps;
  let digestCommitDue = false;
  const digestRegistry = new DigestRegistry(
    {},
    {
      clock,
      lookup: (digests) => payloadOriginals(store, digests),
      forEachStored: (visit) => forEachPayloadDigest(store, visit),
      onCopy: () => stats.payloadCopies++,
      save: (confirmed) => {
        for (const [digest, original] of confirmed) committer.add(digestOp(digest, original));
        // Rides on the pages' next commit; a commit of their own only if none came meanwhile (the crawl
        // may be over, and an uncommitted op keeps the frontier from looking empty). A failed commit
        // keeps its ops for the next one (the storage guard sees the page commits fail).
        if (digestCommitDue) return;
        digestCommitDue = true;
        clock.setTimeout(() => {
          digestCommitDue = false;
          if (committer.pendingOps > 0) committer.commit().catch(() => {});
        }, DIGEST_SAVE_DELAY_MS);
      },
    },
  );
  await digestRegistry.load();
  const duplicates =
    options.dedup === "off"
      ? undefined
      : new DuplicateDetector(
          { claimLeaseMs: DEFAULT_CLAIM_LEASE_MS },
          {
            selfId: options.id,
            clock,
            registry: digestRegistry,
            ...(options.dedup === "cluster" && deps.peers ? { peers: deps.peers } : {}),
            onMessage: () => stats.digestMessages++,
            onUnchecked: () => stats.payloadsUnchecked++,
          },
        );
  return { digestRegistry, duplicates };
}
