import type { ClusterFacingAgent } from "../agent/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { UrlBatch, UrlBatchAck } from "../transport/index.js";
import { hostKey, normalizeUrl } from "../url/index.js";
import type { Ownership } from "./ownership.js";
import type { PartitionStats } from "./partition-stats.js";
import type { UrlExchange } from "./url-exchange.js";

/** Default of {@link UrlIntakeOptions.maxConcurrentSubmits}: well above one batch per peer in flight. */
export const DEFAULT_MAX_CONCURRENT_SUBMITS = 32;

/** Seen batch ids kept per process to count each received batch once despite retries. */
const MAX_REMEMBERED_BATCHES = 100_000;

/** Options of a {@link UrlIntake}. */
export interface UrlIntakeOptions {
  /**
   * `SubmitUrls` batches handled at once at most; further ones are answered `Overloaded` at once so
   * their senders back off and retry, which bounds the memory a flood of batches can take.
   * @default 32
   */
  readonly maxConcurrentSubmits?: number;
}

/** What a {@link UrlIntake} needs. */
export interface UrlIntakeDeps {
  readonly agent: Pick<ClusterFacingAgent, "id" | "route" | "accept" | "commit" | "stats">;
  readonly ownership: Pick<Ownership, "ownerOfUrl">;
  readonly partition: Pick<PartitionStats, "batchesReceived">;
  /** Where a leaving agent's URLs are kept for their owners (`keepForOwners` batches). */
  readonly exchange: Pick<UrlExchange, "keep">;
}

/**
 * The receiving half of the URL exchange (`SubmitUrls`): queues the URLs of hosts this agent owns,
 * forwards the others to their owners — or, in a leaving agent's `keepForOwners` batch, keeps them in
 * its outbox for their owners, unsent —, and acknowledges a batch once it is durable. Bounded: past
 * `maxConcurrentSubmits` batches at once it answers `Overloaded`; closed while the agent leaves.
 */
export class UrlIntake {
  private readonly maxConcurrentSubmits: number;
  private readonly receivedBatches = new Set<string>();
  private submitsInProgress = 0;
  private intakeClosed = false;

  constructor(
    options: UrlIntakeOptions,
    private readonly deps: UrlIntakeDeps,
  ) {
    this.maxConcurrentSubmits = options.maxConcurrentSubmits ?? DEFAULT_MAX_CONCURRENT_SUBMITS;
    if (!Number.isSafeInteger(this.maxConcurrentSubmits) || this.maxConcurrentSubmits < 1) {
      throw new UbiError(ErrorCode.InvalidArgument, "maxConcurrentSubmits must be a positive integer");
    }
  }

  /** Refuses URL batches from now on (their senders retry, then re-route once this agent has left). */
  closeIntake(): void {
    this.intakeClosed = true;
  }

  /** Takes URL batches again. */
  reopenIntake(): void {
    this.intakeClosed = false;
  }

  /**
   * `SubmitUrls`: queues URLs of hosts this agent owns, forwards the others; acknowledges once durable.
   * Past `maxConcurrentSubmits` batches in progress, answers `Overloaded` (the sender retries later).
   */
  async submitUrls(batch: UrlBatch): Promise<UrlBatchAck> {
    if (this.intakeClosed)
      throw new UbiError(ErrorCode.Overloaded, "this agent is leaving: send to the next owner");
    const limit = this.maxConcurrentSubmits;
    if (this.submitsInProgress >= limit) {
      throw new UbiError(ErrorCode.Overloaded, `${limit} batches in progress already; retry later`);
    }
    this.submitsInProgress++;
    try {
      return await this.queueBatch(batch);
    } finally {
      this.submitsInProgress--;
    }
  }

  private async queueBatch(batch: UrlBatch): Promise<UrlBatchAck> {
    let accepted = 0;
    let forwarded = 0;
    let duplicates = 0;
    let kept = 0;
    let invalid = 0;
    const { agent, ownership, exchange } = this.deps;
    for (const { url, depth, ...traits } of batch.urls) {
      const canonical = normalizeUrl(url);
      if (canonical === null) {
        invalid++;
        continue;
      }
      const host = hostKey(canonical);
      const owner = ownership.ownerOfUrl(canonical, host);
      if (owner !== agent.id && batch.keepForOwners) {
        // Its owner has it: kept here, not sent, for the owner's crash.
        exchange.keep(owner, canonical, depth, traits);
        kept++;
      } else if (owner !== agent.id) {
        agent.route(canonical, depth, host, traits);
        forwarded++;
      } else if (agent.accept(canonical, depth, host, traits)) accepted++;
      else duplicates++;
    }
    if (invalid > 0 && invalid === batch.urls.length) {
      throw new UbiError(ErrorCode.BadMessage, `batch ${batch.batchId}: no valid http(s) URL in it`);
    }
    await agent.commit();
    if (!this.receivedBatches.has(batch.batchId)) {
      if (this.receivedBatches.size >= MAX_REMEMBERED_BATCHES) this.receivedBatches.clear();
      this.receivedBatches.add(batch.batchId);
      this.deps.partition.batchesReceived++;
      const traffic = agent.stats.peer(batch.fromId);
      traffic.batchesReceived++;
      traffic.urlsReceived += batch.urls.length;
    }
    return { accepted, forwarded, duplicates, ...(kept > 0 ? { kept } : {}) };
  }
}
