import type { DigestSettlement, DigestVerdict } from "../dedup/index.js";
import type {
  DigestSettlementMessage,
  DigestSettlements,
  DigestVerdictMessage,
  DigestVerdicts,
} from "../transport/index.js";

/**
 * Duplicate detection's verdicts and settlements as `CheckDigests`/`SettleDigests` carry them, and
 * back (the dedup module knows nothing of the wire).
 */

/** A verdict as sent. */
export function toWireVerdict(verdict: DigestVerdict): DigestVerdictMessage {
  switch (verdict.kind) {
    case "seen":
      return { state: "DIGEST_SEEN", original: { ...verdict.original } };
    case "new":
      return { state: "DIGEST_NEW", original: null };
    case "pending":
      return { state: "DIGEST_PENDING", original: null };
  }
}

/** The verdicts of a (validated) reply. */
export function fromWireVerdicts(reply: DigestVerdicts): DigestVerdict[] {
  return reply.verdicts.map(({ state, original }): DigestVerdict => {
    if (state === "DIGEST_SEEN" && original) return { kind: "seen", original };
    return { kind: state === "DIGEST_NEW" ? "new" : "pending" };
  });
}

/** Settlements as sent by `fromId`. */
export function toWireSettlements(
  fromId: string,
  settlements: readonly DigestSettlement[],
): DigestSettlements {
  return {
    fromId,
    settlements: settlements.map(
      ({ digest, original }): DigestSettlementMessage => ({
        digest,
        original: original ? { ...original } : null,
      }),
    ),
  };
}

/** The settlements of a (validated) request. */
export function fromWireSettlements(request: DigestSettlements): DigestSettlement[] {
  return request.settlements.map(({ digest, original }) => (original ? { digest, original } : { digest }));
}
