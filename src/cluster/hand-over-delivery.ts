import type { ClusterFacingAgent } from "../agent/index.js";
import type { FoundLink } from "../agent/link-origins.js";
import { traitsOf } from "../storage/index.js";
import type { Ownership } from "./ownership.js";
import type { UrlExchange } from "./url-exchange.js";

/** What a {@link HandOverDelivery} needs. */
export interface HandOverDeliveryDeps {
  readonly selfId: string;
  readonly ownership: Pick<Ownership, "ownerOnceGone" | "ownerOfUrl" | "holdsHost">;
  readonly agent: Pick<ClusterFacingAgent, "handOver" | "takeLinksFoundOn" | "keepLinks" | "takeLinksKeptBy">;
  readonly exchange: Pick<UrlExchange, "send" | "entrust" | "deliver" | "unsettledPeers">;
  /** How long a hand-over waits for what it delivers to be acknowledged (`HAND_OVER_DELIVERY_MS`). */
  readonly waitMs: number;
  /** Told when what a hand-over of `hosts` delivered to `peers` was not acknowledged in time (for a log). */
  readonly onLate?: (hosts: readonly string[], peers: readonly string[]) => void;
}

/**
 * What must be with other agents before a host's done set leaves this one (`HandOverDeskDeps
 * .beforeHandOver`), and after: the URLs waiting in the host's queue go to its new holder, and the links
 * its pages gave, queued here for this agent's own hosts, to the agents that would own those hosts
 * without this one (their keepers, which re-send them if this agent dies); both acknowledged. A keeper
 * that leaves or crashes later has the links it kept and that still wait here given to the next one
 * ({@link keeperGone}).
 */
export class HandOverDelivery {
  /**
   * By host whose hand-over did not get its links acknowledged in time: the keepers they went to. The
   * next try (the claim asked again, the push redone) takes no link anew and must wait for those.
   */
  private readonly keepersOf = new Map<string, Set<string>>();

  constructor(private readonly deps: HandOverDeliveryDeps) {}

  /**
   * `hosts` go to agent `to` with their done sets: resolves true once what their queues held and the
   * links their pages gave are acknowledged by the agents they went to, false when not in time (the
   * hosts are then not handed over yet: asked again, this waits for them again).
   */
  async before(hosts: readonly string[], to: string): Promise<boolean> {
    const { agent, exchange, ownership, selfId } = this.deps;
    const peers = new Set([to]);
    // Drained here, not left to the view's re-examination, which may come later (it is busy, or a URL
    // went back to the queue since): those URLs must be on their way before the delivery is looked at.
    // Each goes to its URL's owner (the host's, but under URL partitioning). All at once: their commits
    // go together.
    await Promise.all(
      hosts
        .filter((host) => !ownership.holdsHost(host))
        .map((host) =>
          agent.handOver(host, (entry) => {
            const owner = ownership.ownerOfUrl(entry.url, host);
            exchange.send(owner, entry.url, entry.depth, host, traitsOf(entry));
            peers.add(owner);
          }),
        ),
    );
    for (const host of hosts) {
      const keepers = this.keepersOf.get(host) ?? new Set<string>();
      for (const keeper of this.entrust(agent.takeLinksFoundOn(host)).keys()) keepers.add(keeper);
      if (keepers.size > 0) this.keepersOf.set(host, keepers);
      for (const keeper of keepers) peers.add(keeper);
    }
    // The links the hosts' pages gave to other agents' hosts wait in those agents' outboxes, maybe
    // for the batch policy's longest delay: they must be acknowledged too, or this agent's crash would
    // lose them with its outbox. Which peers they went to is not kept, so every peer owed a URL is.
    for (const peer of exchange.unsettledPeers()) peers.add(peer);
    peers.delete(selfId);
    const delivered = await exchange.deliver(peers, this.deps.waitMs);
    if (delivered) for (const host of hosts) this.keepersOf.delete(host);
    else this.deps.onLate?.(hosts, [...peers]);
    return delivered;
  }

  /**
   * Agent `id` left the view (a leave, a crash): the links it kept for this agent and that still wait
   * here go to the agents that would own their hosts without this one now, sent at once (not waited for).
   */
  keeperGone(id: string): void {
    const links = this.deps.agent.takeLinksKeptBy(id);
    if (links.length === 0) return;
    const keepers = this.entrust(links);
    void this.deps.exchange.deliver(keepers.keys(), this.deps.waitMs);
  }

  /** Gives each of `links` to the agent that would own its host without this one; by keeper. */
  private entrust(links: readonly FoundLink[]): Map<string, FoundLink[]> {
    const { agent, exchange, ownership, selfId } = this.deps;
    const byKeeper = new Map<string, FoundLink[]>();
    for (const link of links) {
      const keeper = ownership.ownerOnceGone(link.host);
      if (keeper === undefined || keeper === selfId) continue;
      exchange.entrust(keeper, link.url, link.depth, link.host, link.traits);
      const kept = byKeeper.get(keeper) ?? [];
      kept.push(link);
      byKeeper.set(keeper, kept);
    }
    for (const [keeper, kept] of byKeeper) agent.keepLinks(keeper, kept);
    return byKeeper;
  }
}
