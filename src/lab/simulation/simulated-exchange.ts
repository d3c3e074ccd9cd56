import type { FlushPolicy } from "../../cluster/index.js";
import type { EventQueue, ScheduledEvent } from "./event-queue.js";
import type { SimulationSettings, SimulationTiming } from "./parameters.js";

/**
 * A simulated agent's side of the URL exchange: a buffer per destination agent, sent as a batch when
 * the real {@link FlushPolicy} says (at most one batch in flight per destination), each URL offered by
 * a link sent once (a sent set), everything ever handed to a destination kept (the real agent's durable
 * outbox) to hand again to the new owners if it dies; a batch whose receiver does not answer is tried
 * again (200 ms, doubling, at most 5 s) until the agent's view says the receiver is dead, and then goes
 * to the new owners.
 */

/** What a {@link SimulatedExchange} asks of the agent it belongs to. */
export interface ExchangeOwner {
  /** Started and not killed. */
  readonly alive: boolean;
  /** Nothing to fetch: what the flush policy calls the agent's idleness. */
  readonly crawlIdle: boolean;
  /** True while `peer` is alive in the agent's view. */
  sees(peer: number): boolean;
  /** Routes `node` again, as a URL given back. */
  reroute(node: number): void;
}

/** An agent a batch goes to: it answers the sending exchange, {@link SimulatedExchange.acked} or `failed`. */
export interface ExchangeReceiver {
  receive(from: SimulatedExchange, urls: readonly number[]): void;
}

/** What a {@link SimulatedExchange} reaches beyond its agent. */
export interface ExchangeWorld {
  /** The simulated time. */
  readonly events: EventQueue;
  readonly settings: Pick<SimulationSettings, "batchUrls" | "retryMinMs">;
  readonly timing: Pick<SimulationTiming, "latencyMs">;
  /** When a buffer to another agent goes (the real agents' policy). */
  readonly policy: FlushPolicy;
  /** The agent of an index. */
  agent(index: number): ExchangeReceiver;
  /** Agent `index`'s queued URLs in its last heartbeat (0 when it was idle); undefined before any. */
  reportedQueued(index: number): number | undefined;
}

interface Outbox {
  urls: number[];
  oldestAt: number;
  inFlight: boolean;
  timer: ScheduledEvent | undefined;
  fruitless: number;
  retries: number;
  /** Every URL ever handed to this peer. */
  readonly everSent: number[];
}

/** The longest wait before a batch is tried again, ms. */
const RETRY_MAX_MS = 5000;

/** See the module's comment. */
export class SimulatedExchange {
  /** URLs and batches acknowledged by their receivers. */
  urlsSent = 0;
  batchesSent = 0;
  private readonly sentAway = new Set<number>();
  private readonly outboxes = new Map<number, Outbox>();
  private inFlight = 0;

  constructor(
    private readonly owner: ExchangeOwner,
    private readonly world: ExchangeWorld,
  ) {}

  /** Nothing buffered, nothing on its way. */
  get quiet(): boolean {
    if (this.inFlight > 0) return false;
    for (const outbox of this.outboxes.values()) if (outbox.urls.length > 0) return false;
    return true;
  }

  /** A link (or seed) to agent `peer`'s host: sent unless this agent sent it before. */
  offer(peer: number, node: number): void {
    if (!this.sentAway.has(node)) this.send(peer, node);
  }

  /** Hands `node` to agent `peer`, whether sent before or not (a forward, a queue handed over). */
  send(peer: number, node: number): void {
    this.sentAway.add(node);
    const outbox = this.outboxOf(peer);
    if (outbox.urls.length === 0) outbox.oldestAt = this.world.events.now;
    outbox.urls.push(node);
    outbox.everSent.push(node);
    this.schedule(peer);
  }

  /** `dead` died: what is buffered for it, and all ever sent to it, goes to the new owners. */
  redistribute(dead: number): void {
    const outbox = this.outboxes.get(dead);
    if (!outbox) return;
    const buffered = outbox.urls.splice(0);
    if (outbox.timer) this.world.events.cancel(outbox.timer);
    outbox.timer = undefined;
    for (const node of outbox.everSent) this.owner.reroute(node);
    for (const node of buffered) this.owner.reroute(node);
  }

  /** Re-examines every buffer: a heartbeat brought loads, or the agent went idle. */
  examine(): void {
    for (const peer of this.outboxes.keys()) this.schedule(peer);
  }

  /** `peer` acknowledged a batch, `fresh` of its URLs new to it. */
  acked(peer: number, urls: readonly number[], fresh: number): void {
    if (!this.owner.alive) return;
    const outbox = this.outboxOf(peer);
    outbox.inFlight = false;
    outbox.retries = 0;
    outbox.fruitless = fresh === 0 ? outbox.fruitless + 1 : 0;
    this.inFlight--;
    this.urlsSent += urls.length;
    this.batchesSent++;
    this.schedule(peer);
  }

  /**
   * `peer` did not answer a batch: tried again later, or sent to the new owners once it is dead — as
   * the real agent does, though {@link redistribute} sends them too (everything ever sent to the dead).
   */
  failed(peer: number, urls: readonly number[]): void {
    if (!this.owner.alive) return;
    const outbox = this.outboxOf(peer);
    const delay = Math.min(RETRY_MAX_MS, this.world.settings.retryMinMs * 2 ** outbox.retries);
    outbox.retries++;
    this.world.events.after(delay, () => {
      if (!this.owner.alive) return;
      if (this.owner.sees(peer)) {
        this.deliver(peer, urls);
        return;
      }
      outbox.inFlight = false;
      outbox.retries = 0;
      this.inFlight--;
      for (const node of urls) this.owner.reroute(node);
    });
  }

  /** Sends the buffer for `peer` now, or sets a timer for when the flush policy says. */
  private schedule(peer: number): void {
    const outbox = this.outboxOf(peer);
    if (outbox.inFlight || outbox.urls.length === 0) return;
    const { events, policy, settings } = this.world;
    const delay =
      outbox.urls.length >= settings.batchUrls
        ? 0
        : policy.delayMs(
            {
              urls: outbox.urls.length,
              oldestAtMs: outbox.oldestAt,
              peerQueuedUrls: this.world.reportedQueued(peer),
              localIdle: this.owner.crawlIdle,
              fruitlessBatches: outbox.fruitless,
            },
            events.now,
          );
    const due = events.now + delay;
    if (outbox.timer && outbox.timer.at <= due) return;
    if (outbox.timer) events.cancel(outbox.timer);
    outbox.timer = events.at(due, () => {
      outbox.timer = undefined;
      this.flush(peer);
    });
  }

  private flush(peer: number): void {
    if (!this.owner.alive) return;
    const outbox = this.outboxOf(peer);
    if (outbox.inFlight || outbox.urls.length === 0) return;
    if (!this.owner.sees(peer)) {
      for (const node of outbox.urls.splice(0)) this.owner.reroute(node);
      return;
    }
    const urls = outbox.urls.splice(0, this.world.settings.batchUrls);
    outbox.oldestAt = this.world.events.now;
    outbox.inFlight = true;
    this.inFlight++;
    this.deliver(peer, urls);
  }

  private deliver(peer: number, urls: readonly number[]): void {
    const receiver = this.world.agent(peer);
    this.world.events.after(this.world.timing.latencyMs, () => receiver.receive(this, urls));
  }

  private outboxOf(peer: number): Outbox {
    let outbox = this.outboxes.get(peer);
    if (!outbox) {
      outbox = {
        urls: [],
        oldestAt: 0,
        inFlight: false,
        timer: undefined,
        fruitless: 0,
        retries: 0,
        everSent: [],
      };
      this.outboxes.set(peer, outbox);
    }
    return outbox;
  }
}
