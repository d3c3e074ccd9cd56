import {
  type BlacklistRemoval,
  type BlacklistRestore,
  type ClusterFacingAgent,
  describeRestore,
} from "../agent/index.js";
import type { Clock } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { FailureDetector } from "../failure-detector/index.js";
import type { Logger } from "../logging/index.js";
import type {
  ControlReply,
  ControlRequest,
  PeerClientPool,
  StatsReply,
  StatsRequest,
} from "../transport/index.js";
import { MAX_REPLY_MESSAGE_CHARS } from "../transport/index.js";
import { hostKey, normalizeUrl } from "../url/index.js";
import type { BlacklistGossip } from "./blacklist-gossip.js";
import { controlCluster } from "./cluster-control.js";
import { type LastKnownFigures, rememberedStats } from "./last-known.js";
import type { Ownership } from "./ownership.js";
import type { PartitionStats } from "./partition-stats.js";

/** What an {@link AdminService} needs. */
export interface AdminServiceDeps {
  readonly clock: Clock;
  readonly agent: ClusterFacingAgent;
  readonly detector: Pick<FailureDetector, "members" | "alive">;
  readonly ownership: Pick<Ownership, "ownerOfUrl">;
  readonly partition: Pick<PartitionStats, "stats">;
  /** The last figures of every member, for the rows of those that cannot be asked. */
  readonly lastKnown: Pick<LastKnownFigures, "noteStats" | "of">;
  readonly peers: PeerClientPool;
  /** Spreads blacklist changes to the other agents. */
  readonly blacklist: Pick<BlacklistGossip, "pushChange">;
  /** Starts a graceful leave of the cluster, and what follows it (the `LEAVE` control action). */
  readonly leave: () => void;
  /** Where operator commands are recorded (an audit trail). */
  readonly logger: Logger;
}

/**
 * What an operator asks of an agent (`GetStats`, `Control`), served on the `Admin` service and, for
 * the agents, on the `Agent` service: partition stats of this agent or of the whole cluster, and the
 * commands — pause, resume, leave, blacklist, add seeds, change a setting — on this agent or, relayed,
 * on every live one. Each command is logged.
 */
export class AdminService {
  constructor(private readonly deps: AdminServiceDeps) {}

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
          const added = await agent.blacklist.add(request.argument);
          // Spread to every live agent before answering (each of them pushes nothing further).
          if (added) await this.deps.blacklist.pushChange();
          return { ok: true, message: `blacklisted ${request.argument}${added ? "" : " (it was already)"}` };
        } catch (error) {
          if (!isUbiError(error, ErrorCode.InvalidArgument)) throw error;
          return { ok: false, message: error.message };
        }
      case "BLACKLIST_REMOVE": {
        const removal = await agent.blacklist.remove(request.argument);
        // As an add of a pattern listed already: the blacklist is as asked either way.
        if (removal === false) return { ok: true, message: `${request.argument} was not blacklisted` };
        const others = await this.deps.blacklist.pushChange();
        return {
          ok: true,
          message: removalMessage(request.argument, removal, others, agent.blacklist.maxAsidePerHost),
        };
      }
      case "BLACKLIST_LIST": {
        const patterns = agent.blacklist.patterns();
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
