import type { Admission, ClusterHooks } from "../agent/index.js";
import type { Clock } from "../clock.js";
import type { DigestPeers } from "../dedup/index.js";
import type { BudgetOf } from "../recrawl/index.js";
import type { PeerClient } from "../transport/index.js";
import type { CrawlTenure } from "./crawl-tenure.js";
import { fromWireVerdicts, toWireSettlements } from "./digest-wire.js";
import type { Ownership } from "./ownership.js";
import type { TakeoverGrace } from "./takeover-grace.js";

/**
 * Longest wait for a peer's answer about payload digests: past it the page is stored whole (a slow or
 * dead owner costs bytes, never a page).
 */
const DIGEST_DEADLINE_MS = 2_000;

/** What {@link clusterHooks} answers the agent from. */
export interface ClusterHooksDeps {
  readonly clock: Clock;
  readonly ownership: Ownership;
  /** Holds a crashed agent's hosts for it a while. */
  readonly grace: TakeoverGrace;
  /** The hosts whose crawl this agent holds. */
  readonly tenure: CrawlTenure;
  /** Where links to hosts other agents own go (the URL exchange). */
  readonly exchange: ClusterHooks["exchange"];
  /** When this agent may crawl `host`, which another agent may hold (0: now): the host claims' answer. */
  readonly claim: (host: string) => number | Promise<number>;
  /** True when every live agent is idle and no URL batch is in transit. */
  readonly isCrawlComplete: () => boolean;
  /** The cluster-wide per-IP limit, under `--ip-limit cluster` (absent: each agent's own only). */
  readonly ipLimiter?: ClusterHooks["ipLimiter"];
  /** Told when who may fetch which host changes (see {@link ClusterHooks.hands}). */
  readonly hands?: ClusterHooks["hands"];
  /** Hands URLs left in queues of hosts owned by others to their owners now (see {@link ClusterHooks.stranded}). */
  readonly stranded?: ClusterHooks["stranded"];
  /** Where payload digests other agents own are asked about. */
  readonly digests: DigestPeers;
  /** This agent's part of the cluster's revisit budgets (see {@link ClusterHooks.revisitBudget}). */
  readonly revisitBudget: BudgetOf;
}

/**
 * The cluster as its agent sees it ({@link ClusterHooks}): who owns a host or URL, when a host may be
 * crawled here (after a crashed owner's grace, once claimed from its holder) and fetched, where links
 * to other agents go, when the whole crawl is complete, the per-IP limit and the digests' owners.
 */
export function clusterHooks(deps: ClusterHooksDeps): ClusterHooks {
  const { clock, ownership, grace, tenure } = deps;
  // Under URL partitioning hosts are not claimed, held or handed over: every agent crawls every host.
  const byUrl = ownership.partitioning === "url";
  const owns = (host: string) => ownership.holdsHost(host);
  return {
    ownership: () => ownership,
    exchange: deps.exchange,
    owns,
    admit: (host) => {
      if (byUrl) return 0;
      // A crashed previous owner's hosts wait for it first; then the host is claimed from whoever holds it.
      const heldUntilMs = grace.heldUntilMs(host);
      if (heldUntilMs > clock.now()) return { untilMs: heldUntilMs, reason: "held" };
      const claimed = deps.claim(host);
      const admission = (atMs: number): Admission =>
        atMs === 0 ? 0 : { untilMs: atMs, reason: "hand-over" };
      return typeof claimed === "number" ? admission(claimed) : claimed.then(admission);
    },
    mayFetch: (host) => owns(host) && (byUrl || tenure.holds(host)),
    isCrawlComplete: deps.isCrawlComplete,
    ...(deps.ipLimiter === undefined ? {} : { ipLimiter: deps.ipLimiter }),
    ...(deps.hands === undefined ? {} : { hands: deps.hands }),
    ...(deps.stranded === undefined ? {} : { stranded: deps.stranded }),
    digests: deps.digests,
    revisitBudget: deps.revisitBudget,
    handsOverHosts: !byUrl,
  };
}

/**
 * The owners of payload digests, asked over the `Agent` service (`--dedup cluster`): each question
 * carries the settlements that waited for the same peer, and every call is bounded by
 * {@link DIGEST_DEADLINE_MS}.
 */
export function digestPeers(
  selfId: string,
  ownership: Ownership,
  /** The client of a member, by id. */
  peerClient: (id: string) => PeerClient,
  /** This agent's incarnation now (it goes with each question). */
  incarnation: () => number,
): DigestPeers {
  return {
    ownerOf: (digest) => ownership.ownerOfDigest(digest),
    check: async (peerId, questions, settlements) =>
      fromWireVerdicts(
        await peerClient(peerId).streamCheckDigests(
          {
            fromId: selfId,
            fromIncarnation: incarnation(),
            digests: questions.map(({ digest }) => digest),
            settlements: toWireSettlements(selfId, settlements).settlements,
          },
          { deadlineMs: DIGEST_DEADLINE_MS },
        ),
      ),
    settle: async (peerId, settlements) => {
      await peerClient(peerId).settleDigests(toWireSettlements(selfId, settlements), {
        deadlineMs: DIGEST_DEADLINE_MS,
      });
    },
  };
}
