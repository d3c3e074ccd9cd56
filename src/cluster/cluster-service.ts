import {
  type BlacklistRemoval,
  type BlacklistRestore,
  type ClusterFacingAgent,
  describeRestore,
} from "../agent/index.js";
import type { Clock } from "../clock.js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import type { FailureDetector } from "../failure-detector/index.js";
import type { Logger } from "../logging/index.js";
import type {
  AgentServiceHandlers,
  BlacklistSync,
  ClaimReply,
  ClaimRequest,
  ControlReply,
  ControlRequest,
  DigestCheck,
  DigestSettleAck,
  DigestSettlements,
  DigestVerdicts,
  HandOverReply,
  HandOverRequest,
  HeartbeatReply,
  HeartbeatRequest,
  IpReply,
  IpRequest,
  JoinReply,
  JoinRequest,
  Member,
  MemberFigures,
  PeerClientPool,
  StatsReply,
  StatsRequest,
  UrlBatch,
  UrlBatchAck,
} from "../transport/index.js";
import { MAX_REPLY_MESSAGE_CHARS } from "../transport/index.js";
import { hostKey, normalizeUrl } from "../url/index.js";
import type { BlacklistGossip } from "./blacklist-gossip.js";
import { controlCluster } from "./cluster-control.js";
import type { CrawlEnd } from "./crawl-end.js";
import { fromWireSettlements, toWireVerdict } from "./digest-wire.js";
import type { HandOverDesk } from "./hand-over.js";
import { type LastKnownFigures, rememberedStats } from "./last-known.js";
import { fromWireMember, toWireMember } from "./members.js";
import type { Ownership } from "./ownership.js";
import type { PartitionStats } from "./partition-stats.js";
import type { WorkLoad } from "./termination.js";
import type { UrlExchange } from "./url-exchange.js";

/** Default of {@link ClusterServiceOptions.maxConcurrentSubmits}: well above one batch per peer in flight. */
export const DEFAULT_MAX_CONCURRENT_SUBMITS = 32;

/** Seen batch ids kept per process to count each received batch once despite retries. */
const MAX_REMEMBERED_BATCHES = 100_000;

/** Options of a {@link ClusterService}. */
export interface ClusterServiceOptions {
  /**
   * `SubmitUrls` batches handled at once at most; further ones are answered `Overloaded` at once so
   * their senders back off and retry, which bounds the memory a flood of batches can take.
   * @default 32
   */
  readonly maxConcurrentSubmits?: number;
}

/** What a {@link ClusterService} needs. */
export interface ClusterServiceDeps {
  readonly clock: Clock;
  readonly agent: ClusterFacingAgent;
  readonly detector: Pick<FailureDetector, "members" | "alive" | "onHeartbeat">;
  readonly ownership: Pick<Ownership, "ownerOfUrl" | "checkNewcomer" | "partitioning">;
  readonly exchange: Pick<UrlExchange, "notePeerLoad">;
  readonly crawlEnd: Pick<CrawlEnd, "observeRequest">;
  /** Answers claims and takes in pushed hosts (host hand-overs). */
  readonly desk: Pick<HandOverDesk, "answer" | "takeIn">;
  readonly partition: PartitionStats;
  /** The last figures of every member, for the rows of those that cannot be asked; gossiped. */
  readonly lastKnown: LastKnownFigures;
  readonly peers: PeerClientPool;
  /** Answers asks about the IP addresses this agent is the authority of (see ip-authority.ts). */
  readonly ipGrants: (request: IpRequest) => IpReply;
  /** Spreads blacklist changes and answers peers' syncs. */
  readonly blacklist: Pick<BlacklistGossip, "answer" | "pushChange">;
  /** Starts a graceful leave of the cluster, and what follows it (the `LEAVE` control action). */
  readonly leave: () => void;
  /** Where operator commands are recorded (an audit trail). */
  readonly logger: Logger;
}

/**
 * The `Agent` gRPC service of one cluster agent: membership (join, heartbeats), URL intake from
 * peers, host hand-overs, stats and operator control. Every handler is local: no coordinator.
 */
export class ClusterService implements AgentServiceHandlers {
  private readonly maxConcurrentSubmits: number;
  private readonly receivedBatches = new Set<string>();
  private submitsInProgress = 0;
  private intakeClosed = false;

  constructor(
    options: ClusterServiceOptions,
    private readonly deps: ClusterServiceDeps,
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

  /** `Join`: a newcomer announces itself; refused when its id is taken or its replicas collide. */
  async join(request: JoinRequest): Promise<JoinReply> {
    const reply = await this.heartbeat({
      from: request.member,
      members: [request.member],
      load: idleLoad(),
      unanswered: false,
    });
    return { members: reply.members };
  }

  /** `Heartbeat`: liveness, gossip and load, both ways. */
  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatReply> {
    const { detector, clock } = this.deps;
    const from = fromWireMember(request.from);
    const partitioning = request.partitioning ?? "host";
    if (partitioning !== this.deps.ownership.partitioning) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `agent ${from.id} partitions by ${partitioning}, this cluster by ${this.deps.ownership.partitioning}: ` +
          "every agent of a cluster must use the same --partition",
      );
    }
    this.checkNewcomer(request.from);
    let answer: ReturnType<FailureDetector["onHeartbeat"]>;
    try {
      answer = detector.onHeartbeat({
        from,
        entries: request.members.map(fromWireMember),
        unanswered: request.unanswered,
      });
    } catch (error) {
      // The id is alive here at another address: tell the claimant what to do about it.
      throw withIdAdvice(error);
    }
    // Only a sender the detector accepted may report a load (a refused claimant must not fake one).
    this.deps.crawlEnd.observeRequest(from.id, request.load);
    this.noteLoad(from.id, request.load);
    this.deps.lastKnown.noteGossip(request.figures);
    this.deps.exchange.notePeerLoad(from.id, request.load);
    const now = clock.now();
    return {
      members: answer.entries.map((entry) => toWireMember(entry, now)),
      load: this.deps.partition.load(),
      from: toWireMember(answer.from, now),
      figures: this.figures(),
    };
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
    let invalid = 0;
    const { agent, ownership } = this.deps;
    for (const { url, depth, ...traits } of batch.urls) {
      const canonical = normalizeUrl(url);
      if (canonical === null) {
        invalid++;
        continue;
      }
      const host = hostKey(canonical);
      if (ownership.ownerOfUrl(canonical, host) !== agent.id) {
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
    return { accepted, forwarded, duplicates };
  }

  /** `ClaimHosts`: a new owner asks for hosts this agent may hold (see {@link HandOverDesk.answer}). */
  async claimHosts(request: ClaimRequest): Promise<ClaimReply> {
    this.checkNewcomer(request.claimant);
    try {
      return await this.deps.desk.answer(request);
    } catch (error) {
      throw withIdAdvice(error);
    }
  }

  /** `HandOverHosts`: a leaving agent pushes the hosts it held; answered once they are durable here. */
  async handOverHosts(request: HandOverRequest): Promise<HandOverReply> {
    this.checkNewcomer(request.from);
    try {
      return await this.deps.desk.takeIn(request);
    } catch (error) {
      throw withIdAdvice(error);
    }
  }

  /** Refuses a sender unknown here whose replicas would collide with a member's (`IdConflict`). */
  private checkNewcomer(member: Member): void {
    if (this.deps.detector.members().some((known) => known.id === member.id)) return;
    try {
      this.deps.ownership.checkNewcomer({ id: member.id, capacity: member.capacity });
    } catch (error) {
      throw withIdAdvice(error);
    }
  }

  /** A member's heartbeat load: its figures when it cannot be asked for its stats. */
  noteLoad(memberId: string, load: WorkLoad): void {
    this.deps.lastKnown.noteLoad(memberId, load);
  }

  /** The fetch totals this agent gossips with each heartbeat: its own, and the best known of every member. */
  figures(): MemberFigures[] {
    return this.deps.lastKnown.gossip(
      this.deps.partition.figures(),
      this.deps.detector.members().map((member) => member.id),
    );
  }

  /**
   * `GetStats`: this agent's partition stats, or every member's: the live ones asked now, the others
   * (suspected, left, not answering) as rows of their last known figures, with their status.
   */
  async getStats(request: StatsRequest): Promise<StatsReply> {
    const own = this.deps.partition.stats();
    if (!request.cluster) return { agents: [own] };
    const { clock } = this.deps;
    const others = await Promise.all(
      this.deps.detector
        .members()
        .filter((member) => member.id !== own.id)
        .map(async (member) => {
          if (member.status === "alive") {
            try {
              const [stats] = (await this.deps.peers.get(member.address).getStats({ cluster: false })).agents;
              if (stats?.id === member.id) {
                this.deps.lastKnown.noteStats(member.id, stats);
                return stats;
              }
            } catch {
              // Not answering: its last known figures below.
            }
          }
          return rememberedStats(member, this.deps.lastKnown.of(member.id), clock.now());
        }),
    );
    return { agents: [own, ...others] };
  }

  /** `SyncBlacklist`: a peer's blacklist entries, merged; this agent's answered. */
  syncBlacklist(request: BlacklistSync): Promise<BlacklistSync> {
    return this.deps.blacklist.answer(request);
  }

  /** `CheckDigests`: whether payloads with these digests (this agent owns them) were stored before. */
  async checkDigests(request: DigestCheck): Promise<DigestVerdicts> {
    const settled = request.settlements ?? [];
    if (settled.length > 0) {
      this.deps.agent.settleDigests(
        request.fromId,
        fromWireSettlements({ fromId: request.fromId, settlements: settled }),
      );
    }
    const verdicts = await this.deps.agent.checkDigests(
      request.digests.map((digest) => ({
        digest,
        asker: request.fromId,
        incarnation: request.fromIncarnation,
      })),
    );
    return { verdicts: verdicts.map(toWireVerdict) };
  }

  /** `SettleDigests`: what the asker did with the digests it claimed. */
  async settleDigests(request: DigestSettlements): Promise<DigestSettleAck> {
    this.deps.agent.settleDigests(request.fromId, fromWireSettlements(request));
    return {};
  }

  /** `IpGrants`: releases, refusals and asks about addresses this agent is the authority of. */
  async ipGrants(request: IpRequest): Promise<IpReply> {
    return this.deps.ipGrants(request);
  }

  /**
   * `Control`: pause, resume, leave, blacklist, add seeds, change a setting; with `cluster`, on every
   * live agent, relayed by this one.
   */
  async control(request: ControlRequest): Promise<ControlReply> {
    if (request.cluster) {
      const selfId = this.deps.agent.id;
      const alive = this.deps.detector.alive();
      return controlCluster(request, {
        self: { id: selfId, address: alive.find((member) => member.id === selfId)?.address ?? "" },
        applyHere: (command) => this.control(command),
        others: () => this.deps.detector.alive().filter((member) => member.id !== selfId),
        relay: (address, command) => this.deps.peers.get(address).relayControl(command),
      });
    }
    const reply = await this.apply(request);
    const urls = request.urls?.length ?? 0;
    (reply.ok ? this.deps.logger.info : this.deps.logger.warn).call(
      this.deps.logger,
      { event: "control", action: request.action, argument: request.argument, urls, ok: reply.ok },
      `operator command ${request.action}${request.argument === "" ? "" : ` ${request.argument}`}${urls > 0 ? ` (${urls} URLs)` : ""}: ${reply.ok ? "" : "refused: "}${reply.message.split("\n").join(", ")}`,
    );
    return reply;
  }

  private async apply(request: ControlRequest): Promise<ControlReply> {
    const { agent } = this.deps;
    switch (request.action) {
      case "PAUSE":
        agent.pause();
        return { ok: true, message: "paused" };
      case "RESUME":
        agent.resume();
        return { ok: true, message: "resumed" };
      case "LEAVE":
        this.deps.leave();
        return { ok: true, message: "leaving: handing queued URLs to their next owners" };
      case "BLACKLIST_ADD":
        try {
          const added = await agent.blacklistHost(request.argument);
          // Spread to every live agent before answering (each of them pushes nothing further).
          if (added) await this.deps.blacklist.pushChange();
          return { ok: true, message: `blacklisted ${request.argument}${added ? "" : " (it was already)"}` };
        } catch (error) {
          if (!isUbiError(error, ErrorCode.InvalidArgument)) throw error;
          return { ok: false, message: error.message };
        }
      case "BLACKLIST_REMOVE": {
        const removal = await agent.unblacklistHost(request.argument);
        // As an add of a pattern listed already: the blacklist is as asked either way.
        if (removal === false) return { ok: true, message: `${request.argument} was not blacklisted` };
        const others = await this.deps.blacklist.pushChange();
        return {
          ok: true,
          message: removalMessage(request.argument, removal, others, agent.maxAsidePerHost),
        };
      }
      case "BLACKLIST_LIST": {
        const patterns = agent.blacklistPatterns();
        return { ok: true, message: patterns.join("\n") };
      }
      case "ADD_SEEDS":
        return request.force === true
          ? this.forceSeeds(request.urls ?? [], request.relayed === true)
          : this.addSeeds(request.urls ?? []);
      case "SET": {
        const match = /^([a-z-]+)=(-?\d+)$/.exec(request.argument);
        if (!match) return { ok: false, message: `SET takes NAME=INTEGER, got "${request.argument}"` };
        try {
          agent.applySetting(match[1] as string, Number(match[2]));
          return { ok: true, message: `${match[1]} is now ${match[2]}` };
        } catch (error) {
          if (!isUbiError(error, ErrorCode.InvalidArgument)) throw error;
          return { ok: false, message: error.message };
        }
      }
    }
  }

  /**
   * `Control ADD_SEEDS`: routes each URL to its host's owner as a seed (depth 0), as a seed given at
   * start would be; answered once this agent's share is durable. URLs that are not http(s) refuse the
   * whole command, before anything is routed.
   */
  private async addSeeds(urls: readonly string[]): Promise<ControlReply> {
    const { agent } = this.deps;
    const seeds = normalizedSeeds(urls);
    if (!Array.isArray(seeds)) return seeds;
    let own = 0;
    for (const url of seeds) {
      const host = hostKey(url);
      if (this.deps.ownership.ownerOfUrl(url, host) === agent.id) own++;
      agent.route(url, 0, host);
    }
    await agent.commit();
    agent.wakeHosts();
    const sent = seeds.length - own;
    return {
      ok: true,
      message:
        `${seeds.length} seed${seeds.length === 1 ? "" : "s"}: ${own} of this agent's hosts, queued here, ` +
        `${sent} sent to the agents that own their hosts (an agent skips a URL it has seen before; ` +
        "add-seeds --force queues those too)",
    };
  }

  /**
   * `Control ADD_SEEDS` with `force`: each URL is queued by its host's owner even when seen before,
   * unless done there already (nothing is fetched twice). This agent queues its own, and relays the
   * others' to them (`relayed`: a relayed request is not relayed further: a URL this agent does not own
   * in its view then goes to its owner as a plain seed). The reply says what became of each URL.
   */
  private async forceSeeds(urls: readonly string[], relayed: boolean): Promise<ControlReply> {
    const { agent } = this.deps;
    const seeds = normalizedSeeds(urls);
    if (!Array.isArray(seeds)) return seeds;
    const lines: string[] = [];
    const elsewhere = new Map<string, string[]>();
    let plain = false;
    for (const url of seeds) {
      const host = hostKey(url);
      const owner = this.deps.ownership.ownerOfUrl(url, host);
      if (owner === agent.id) {
        lines.push(`${url}: ${FORCED_OUTCOMES[await agent.forceSeed(url)]}`);
      } else if (relayed) {
        agent.route(url, 0, host);
        plain = true;
        lines.push(
          `${url}: ${owner} owns its host in this agent's view: sent there as a plain seed (skipped if seen)`,
        );
      } else {
        elsewhere.set(owner, [...(elsewhere.get(owner) ?? []), url]);
      }
    }
    for (const [owner, owned] of elsewhere) {
      const address = this.deps.detector.alive().find((member) => member.id === owner)?.address;
      let reply: ControlReply | undefined;
      let why = "not alive";
      if (address !== undefined) {
        try {
          reply = await this.deps.peers
            .get(address)
            .relayControl({ action: "ADD_SEEDS", argument: "", urls: owned, force: true, relayed: true });
        } catch (error) {
          why = error instanceof Error ? error.message : String(error);
        }
      }
      if (reply?.ok === true) {
        for (const line of reply.message.split("\n")) lines.push(`${line} (at ${owner})`);
        continue;
      }
      // The owner could not take them forced: they still reach it, as plain seeds (durably, outbox).
      for (const url of owned) {
        agent.route(url, 0, hostKey(url));
        plain = true;
        lines.push(
          `${url}: ${owner} could not be asked (${reply?.message ?? why}): sent as a plain seed (skipped if seen)`,
        );
      }
    }
    if (plain) {
      await agent.commit();
      agent.wakeHosts();
    }
    return { ok: true, message: boundedLines(lines) };
  }
}

/**
 * The reply to a blacklist removal: what the agent asked gave back of the hosts (the URLs it kept
 * aside), what the peers that answered the push gave back, and plainly what could not be restored.
 */
export function removalMessage(
  pattern: string,
  removal: BlacklistRemoval,
  others: BlacklistRestore,
  cap: number,
): string {
  let message = `unblacklisted ${pattern}: ${describeRestore(removal.restore, cap)}`;
  if (others.hosts > 0) message += `; on the other agents: ${describeRestore(others, cap)}`;
  if (removal.droppedBeforeKeeping) {
    message +=
      "; URLs dropped before this agent's state kept them aside (the pattern is older) are not known " +
      "and cannot be restored: give them to ctl add-seeds --force";
  }
  return message;
}

/** An `IdConflict` refusal with what the claimant should do; any other error as it is. */
function withIdAdvice(error: unknown): unknown {
  if (!isUbiError(error, ErrorCode.IdConflict)) return error;
  return new UbiError(ErrorCode.IdConflict, `${error.message}; choose another agent id`);
}

/** What each outcome of a forced seed is told as. */
const FORCED_OUTCOMES = {
  queued: "queued (not seen before)",
  "queued-again": "queued again (seen before, never fetched)",
  "done-before": "done already (fetched, or failed for good): not fetched again",
  "out-of-scope": "out of --scope: not queued",
} as const;

/** `lines`, one a line, cut to fit a reply (saying how many were left out). */
function boundedLines(lines: readonly string[]): string {
  const limit = MAX_REPLY_MESSAGE_CHARS - 100;
  let length = 0;
  for (const [i, line] of lines.entries()) {
    length += line.length + 1;
    if (length > limit) return `${lines.slice(0, i).join("\n")}\n… and ${lines.length - i} more`;
  }
  return lines.join("\n");
}

function idleLoad(): WorkLoad {
  return {
    idle: true,
    urlBatchesSent: 0,
    urlBatchesReceived: 0,
    pagesFetched: 0,
    queuedUrls: 0,
    spareHostSlots: 0,
  };
}

/** `urls` normalized, or the refusal of the whole command naming the first that is not http(s). */
function normalizedSeeds(urls: readonly string[]): string[] | ControlReply {
  const seeds: string[] = [];
  for (const raw of urls) {
    const url = normalizeUrl(raw);
    if (url === null) return { ok: false, message: `not an http(s) URL: ${raw}` };
    seeds.push(url);
  }
  return seeds;
}
