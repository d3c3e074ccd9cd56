import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { UrlExchange, type UrlExchangeOptions } from "../../src/cluster/index.js";
import { UNACKED_PEER } from "../../src/cluster/unacked-urls.js";
import { ErrorCode, isUbiError, UbiError } from "../../src/errors.js";
import { GroupCommit, outboxEntries, StateStore, type UrlTraits } from "../../src/storage/index.js";
import type { UrlBatch, UrlBatchAck } from "../../src/transport/index.js";
import { hostKey, UrlFingerprinter } from "../../src/url/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** One `submit` call, answered by the test. */
interface SubmitCall {
  readonly peer: string;
  readonly batch: UrlBatch;
  readonly signal: AbortSignal;
  /** Acknowledges the batch, by default with 1 URL new to the peer. */
  ack(answer?: UrlBatchAck): void;
  fail(): void;
  /** Rejects the batch as a bad message: the peer refuses these URLs for good. */
  refuse(): void;
}

const ACK: UrlBatchAck = { accepted: 1, forwarded: 0, duplicates: 0 };

let cleanup: (() => Promise<void>) | undefined;

afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/**
 * `localIdle`: whether this agent is idle (the batch policy). `rerouteTo`: the peer re-routed URLs are
 * sent to (the new owner, as the router does); recorded only, when absent.
 */
async function setup(options: UrlExchangeOptions = {}, localIdle?: () => boolean, rerouteTo?: string) {
  const dir = await mkdtemp(join(tmpdir(), "ubicrawl-exchange-"));
  const store = await StateStore.open(dir);
  /** Writes to fail before the store is written again (a full disk, say). */
  const failingWrites = { remaining: 0 };
  const committer = new GroupCommit(async (ops) => {
    if (failingWrites.remaining > 0) {
      failingWrites.remaining--;
      throw new UbiError(ErrorCode.StorageFailed, "disk full");
    }
    await store.write(ops);
  });
  const clock = new ManualClock();
  const stats = new CrawlStats(clock);
  const alive = new Set(["self", "p", "q"]);
  const calls: SubmitCall[] = [];
  const rerouted: string[] = [];
  const requeued: ({ url: string; depth: number; host: string } & UrlTraits)[] = [];
  /** Rerouted URLs with their fetch attempts, as "url#attempts". */
  const reroutedAttempts: string[] = [];
  const reroutedTraits: ({ url: string } & UrlTraits)[] = [];
  const delivered: string[] = [];
  const sentAway: bigint[] = [];
  // Options are checked first: a refused set must not leave its store and folder behind.
  const close = async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    new UrlExchange(options, {} as never);
  } catch (error) {
    if (isUbiError(error, ErrorCode.InvalidArgument)) await close();
    throw error;
  }
  const exchange = new UrlExchange(options, {
    onSentAway: (fingerprint) => sentAway.push(fingerprint),
    sentAwayBefore: (fingerprint) => sentAway.includes(fingerprint),
    selfId: "self",
    incarnation: 42,
    clock,
    stats,
    committer,
    store,
    fingerprinter: await UrlFingerprinter.create(),
    submit: (peer, batch, signal) =>
      new Promise<UrlBatchAck>((resolve, reject) => {
        // As the transport's client does: an aborted call ends with the signal's reason.
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        calls.push({
          peer,
          batch,
          signal,
          ack: (answer = ACK) => resolve(answer),
          fail: () => reject(new UbiError(ErrorCode.PeerUnreachable, `${peer} did not answer`)),
          refuse: () => reject(new UbiError(ErrorCode.BadMessage, `${peer} refuses the batch`)),
        });
      }),
    isAlive: (peer) => alive.has(peer),
    reroute: (url, depth, host, traits) => {
      if (rerouteTo !== undefined) exchange.send(rerouteTo, url, depth, host, traits);
      rerouted.push(url);
      reroutedAttempts.push(`${url}#${traits.attempts}`);
      reroutedTraits.push({ url, ...traits });
    },
    requeue: (url, depth, host, traits) => requeued.push({ url, depth, host, ...traits }),
    onDelivered: (peer) => delivered.push(peer),
    ...(localIdle ? { localIdle } : {}),
  });
  cleanup = async () => {
    exchange.stop();
    await committer.commit().catch(() => {});
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
  /** Lets real I/O (the group commit before each send) run, then checks nothing more was submitted. */
  const quiet = async () => {
    await committer.commit();
    await new Promise((resolve) => setTimeout(resolve, 20));
  };
  const callCount = (count: number) =>
    vi.waitFor(() => expect(calls).toHaveLength(count), { timeout: 5000, interval: 5 });
  const timersSet = (count: number) =>
    vi.waitFor(() => expect(clock.pending).toBe(count), { timeout: 5000, interval: 5 });
  return {
    exchange,
    store,
    committer,
    failingWrites,
    clock,
    stats,
    alive,
    calls,
    rerouted,
    reroutedAttempts,
    reroutedTraits,
    requeued,
    delivered,
    sentAway,
    quiet,
    callCount,
    timersSet,
  };
}

const url = (n: number, host = "h1.example") => `http://${host}/page/${n}`;
const urlsOf = (call: SubmitCall | undefined) => call?.batch.urls.map((item) => item.url);

function sendAll(exchange: UrlExchange, peer: string, urls: readonly string[]): void {
  for (const [i, item] of urls.entries()) exchange.send(peer, item, i % 3, hostKey(item));
}

describe("UrlExchange", () => {
  it("checks its options", async () => {
    for (const bad of [
      { maxBatchUrls: 0 },
      { retryMinMs: 1.5 },
      { flushDelayMs: -1 },
      { retryMaxMs: 0 },
      { targetBatchUrls: 0 },
      { urgentDelayMs: -5 },
      { starvingQueuedUrls: 0.5 },
    ]) {
      let error: unknown;
      try {
        await setup(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument), JSON.stringify(bad)).toBe(true);
    }
  });

  it("entrusts URLs to a keeper, not marked as handed away, delivers them at once when asked, and keeps them in the keeper's outbox", async () => {
    // Links found on a page of a host handed over, still queued here: the keeper passes them back to
    // this agent (their host's owner) and so holds them, and re-sends them if this agent dies. They must
    // be with it before the host's done set leaves: deliver() sends them whatever the batch policy says.
    const t = await setup({ maxBatchUrls: 1, flushDelayMs: 30_000, urgentDelayMs: 30_000 });
    t.exchange.entrust("p", url(1), 0, "h1.example", { attempts: 2 });
    t.exchange.entrust("p", url(2), 0, "h1.example");
    let delivered: boolean | undefined;
    void t.exchange.deliver(["p"], 5_000).then((ok) => {
      delivered = ok;
    });
    await t.callCount(1);
    expect(t.calls[0]?.peer).toBe("p");
    expect(t.calls[0]?.batch.urls).toEqual([{ url: url(1), depth: 0, attempts: 2 }]);
    expect(t.sentAway).toEqual([]);
    t.calls[0]?.ack();
    await t.quiet();
    expect(delivered).toBeUndefined();
    // The second goes at deliver's next look (20 ms), not after the policy's 30 s.
    t.clock.advance(20);
    await t.callCount(2);
    t.calls[1]?.ack();
    await t.quiet();
    t.clock.advance(20);
    await vi.waitFor(() => expect(delivered).toBe(true), { timeout: 5000, interval: 5 });
    expect(await t.exchange.redistribute("p")).toBe(2);
    // In the outbox's key order (by fingerprint).
    expect(t.requeued).toHaveLength(2);
    expect(t.requeued).toEqual(
      expect.arrayContaining([
        { url: url(1), depth: 0, host: "h1.example", attempts: 2 },
        { url: url(2), depth: 0, host: "h1.example" },
      ]),
    );
  });

  it("waits for URLs re-routed during a delivery where they went: settled for the peer that left, they are with no one yet", async () => {
    const t = await setup({ flushDelayMs: 30_000, urgentDelayMs: 30_000 }, undefined, "q");
    t.exchange.send("p", url(1), 0, "h1.example");
    let delivered: boolean | undefined;
    void t.exchange.deliver(["p"], 5_000).then((ok) => {
      delivered = ok;
    });
    await t.callCount(1);
    // p leaves the view with the batch on its way: it goes to q, its host's new owner.
    t.alive.delete("p");
    t.exchange.onViewChange();
    await t.quiet();
    // Sent at deliver's next look, whatever the batch policy says.
    t.clock.advance(20);
    await t.callCount(2);
    expect(t.calls[1]?.peer).toBe("q");
    expect(urlsOf(t.calls[1])).toEqual([url(1)]);
    for (let i = 0; i < 3; i++) {
      t.clock.advance(20);
      await t.quiet();
    }
    expect(delivered).toBeUndefined();
    t.calls[1]?.ack();
    await t.quiet();
    t.clock.advance(20);
    await vi.waitFor(() => expect(delivered).toBe(true), { timeout: 5000, interval: 5 });
  });

  it("says a delivery failed when its URLs are not acknowledged in time, and waits on nothing handed later", async () => {
    const t = await setup({ flushDelayMs: 30_000, urgentDelayMs: 30_000 });
    t.exchange.send("q", url(1), 0, "h1.example");
    let delivered: boolean | undefined;
    void t.exchange.deliver(["q"], 100).then((ok) => {
      delivered = ok;
    });
    await t.callCount(1);
    for (let i = 0; i < 6; i++) {
      t.clock.advance(20);
      await t.quiet();
    }
    expect(delivered).toBe(false);
    // Handed before the call: settled once acknowledged; one handed after is not waited for.
    void t.exchange.deliver(["q"], 10_000).then((ok) => {
      delivered = ok;
    });
    t.exchange.send("q", url(2), 0, "h2.example");
    t.calls[0]?.ack();
    await t.quiet();
    t.clock.advance(20);
    await vi.waitFor(() => expect(delivered).toBe(true), { timeout: 5000, interval: 5 });
    // Nothing handed to a peer: delivered at once.
    expect(await t.exchange.deliver(["nobody"], 0)).toBe(true);
  });

  it("sends a full buffer at once, keeps one batch in flight per peer, and the rest after the delay", async () => {
    const t = await setup({ maxBatchUrls: 3, flushDelayMs: 1000 });
    const urls = Array.from({ length: 7 }, (_, i) => url(i));
    sendAll(t.exchange, "p", urls);
    expect(t.exchange.pendingUrls).toBe(7);
    expect(t.exchange.isIdle).toBe(false);
    await t.callCount(1);
    expect(urlsOf(t.calls[0])).toEqual(urls.slice(0, 3));
    expect(t.calls[0]?.batch.urls.map((item) => item.depth)).toEqual([0, 1, 2]);
    expect(t.calls[0]?.batch.fromId).toBe("self");
    expect(t.calls[0]?.batch.batchId).toMatch(/^self\.42\.\d+$/);
    // A second full batch waits for the first acknowledgement.
    await t.quiet();
    expect(t.calls).toHaveLength(1);

    t.calls[0]?.ack();
    await t.callCount(2);
    expect(urlsOf(t.calls[1])).toEqual(urls.slice(3, 6));
    expect(t.exchange.pendingUrls).toBe(4);
    expect(t.delivered).toEqual(["p"]);

    t.calls[1]?.ack();
    // The last URL does not fill a batch: it goes after the flush delay.
    await t.timersSet(1);
    expect(t.clock.pendingDelays).toEqual([1000]);
    await t.quiet();
    expect(t.calls).toHaveLength(2);
    t.clock.advance(1000);
    await t.callCount(3);
    expect(urlsOf(t.calls[2])).toEqual(urls.slice(6));
    expect(new Set(t.calls.map((call) => call.batch.batchId)).size).toBe(3);
    t.calls[2]?.ack();

    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.exchange.pendingUrls).toBe(0);
    expect(t.delivered).toEqual(["p", "p", "p"]);
    expect(t.stats.peer("p")).toEqual({ urlsSent: 7, batchesSent: 3, urlsReceived: 0, batchesReceived: 0 });
    expect(t.rerouted).toEqual([]);
  });

  it("offers a link found again once, counting every link; sends handed-away URLs again on request", async () => {
    const t = await setup({ flushDelayMs: 100 });
    for (const n of [1, 2, 1, 3, 2, 1]) t.exchange.offer("p", url(n), 0, hostKey(url(n)));
    expect(t.stats.linksToOtherAgents).toBe(6);
    expect(t.exchange.pendingUrls).toBe(3);
    t.clock.advance(100);
    await t.callCount(1);
    expect(urlsOf(t.calls[0])).toEqual([url(1), url(2), url(3)]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    // Found on yet another page: already handed away, so nothing goes out.
    t.exchange.offer("q", url(2), 0, hostKey(url(2)));
    expect(t.exchange.pendingUrls).toBe(0);
    // Sent again on purpose (a rerouted or resent URL): it goes, though handed away before.
    t.exchange.send("q", url(2), 0, hostKey(url(2)));
    expect(t.exchange.pendingUrls).toBe(1);
    t.clock.advance(100);
    await t.callCount(2);
    expect(t.calls[1]?.peer).toBe("q");
    expect(urlsOf(t.calls[1])).toEqual([url(2)]);
    t.calls[1]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.stats.linksToOtherAgents).toBe(7);
    expect(t.stats.traffic.urlsSent).toBe(4);
  });

  it("sends a partial buffer after flushDelayMs, not before", async () => {
    const t = await setup({ flushDelayMs: 250, urgentDelayMs: 30 });
    sendAll(t.exchange, "p", [url(1), url(2)]);
    expect(t.clock.pendingDelays).toEqual([250]);
    t.clock.advance(249);
    await t.quiet();
    expect(t.calls).toHaveLength(0);
    // A URL added meanwhile does not push the deadline back.
    sendAll(t.exchange, "p", [url(3)]);
    t.clock.advance(1);
    await t.callCount(1);
    expect(urlsOf(t.calls[0])).toEqual([url(1), url(2), url(3)]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
  });

  it("sends a batch that reaches targetBatchUrls at once, without waiting for the delay", async () => {
    const t = await setup({ targetBatchUrls: 4, maxBatchUrls: 10, flushDelayMs: 5000 });
    const urls = Array.from({ length: 5 }, (_, i) => url(i));
    sendAll(t.exchange, "p", urls);
    await t.callCount(1);
    expect(urlsOf(t.calls[0])).toEqual(urls.slice(0, 4));
    t.calls[0]?.ack();
    // The fifth is alone: it waits.
    await t.timersSet(1);
    expect(t.clock.pendingDelays).toEqual([5000]);
    t.clock.advance(5000);
    await t.callCount(2);
    expect(urlsOf(t.calls[1])).toEqual([url(4)]);
    t.calls[1]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
  });

  it("brings a batch forward when its peer reports little queued work, not for a busy peer", async () => {
    const t = await setup({ flushDelayMs: 2000, urgentDelayMs: 40, starvingQueuedUrls: 10 });
    sendAll(t.exchange, "p", [url(3)]);
    sendAll(t.exchange, "q", [url(4)]);
    expect(t.clock.pendingDelays).toEqual([2000, 2000]);
    t.clock.advance(100);
    t.exchange.notePeerLoad("p", { idle: false, queuedUrls: 500, spareHostSlots: 0 });
    t.exchange.notePeerLoad("q", { idle: false, queuedUrls: 3, spareHostSlots: 0 });
    // q's batch is overdue for a starving peer (100 ms > 40 ms): at once, through a timer of 0.
    expect(t.clock.pendingDelays).toEqual([0, 1900]);
    t.clock.advance(0);
    await t.callCount(1);
    expect(t.calls[0]?.peer).toBe("q");
    expect(urlsOf(t.calls[0])).toEqual([url(4)]);
    await t.quiet();
    expect(t.calls).toHaveLength(1);
    // An idle peer is short of work too, whatever its queue says.
    t.exchange.notePeerLoad("p", { idle: true, queuedUrls: 500, spareHostSlots: 0 });
    t.clock.advance(0);
    await t.callCount(2);
    expect(urlsOf(t.calls[1])).toEqual([url(3)]);
    for (const call of t.calls) call.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    // A fresh batch for a starving peer waits only urgentDelayMs.
    sendAll(t.exchange, "q", [url(5)]);
    expect(t.clock.pendingDelays).toEqual([40]);
    t.clock.advance(40);
    await t.callCount(3);
    t.calls[2]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
  });

  it("sends a host new to a busy peer with visit slots to spare after urgentDelayMs, a host sent before after the full delay", async () => {
    const t = await setup({ flushDelayMs: 2000, urgentDelayMs: 40, starvingQueuedUrls: 10 });
    t.exchange.notePeerLoad("p", { idle: false, queuedUrls: 500, spareHostSlots: 3 });
    t.exchange.notePeerLoad("q", { idle: false, queuedUrls: 500, spareHostSlots: 0 });
    sendAll(t.exchange, "p", [url(1, "big.example")]);
    sendAll(t.exchange, "q", [url(2, "big.example")]);
    // p could start the host at once: 40 ms; q has every slot taken: the full 2,000 ms.
    expect(t.clock.pendingDelays).toEqual([40, 2000]);
    t.clock.advance(40);
    await t.callCount(1);
    expect(t.calls[0]?.peer).toBe("p");
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.pendingUrls).toBe(1));
    // The same host again: p knows it, so no hurry; a host new to p is again.
    sendAll(t.exchange, "p", [url(3, "big.example")]);
    expect(t.clock.pendingDelays).toEqual([1960, 2000]);
    t.clock.advance(10);
    sendAll(t.exchange, "p", [url(4, "other.example")]);
    expect(t.clock.pendingDelays).toEqual([40, 1950]);
    t.clock.advance(40);
    await t.callCount(2);
    expect(urlsOf(t.calls[1])).toEqual([url(3, "big.example"), url(4, "other.example")]);
    t.clock.advance(2000);
    await t.callCount(3);
    for (const call of t.calls) call.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
  });

  it("doubles the wait of a starving peer's batches while they bring it nothing new, not when idle", async () => {
    const local = { idle: false };
    const t = await setup(
      { flushDelayMs: 2000, urgentDelayMs: 40, starvingQueuedUrls: 10 },
      () => local.idle,
    );
    const duplicates = (urls: number): UrlBatchAck => ({ accepted: 0, forwarded: 0, duplicates: urls });
    /** Sends one URL to q (which reports an empty queue), checks the wait, lets it go and acks it. */
    const round = async (n: number, expectedDelayMs: number, answer: UrlBatchAck) => {
      sendAll(t.exchange, "q", [url(n)]);
      t.exchange.notePeerLoad("q", { idle: true, queuedUrls: 0, spareHostSlots: 0 });
      expect(t.clock.pendingDelays).toEqual([expectedDelayMs]);
      t.clock.advance(expectedDelayMs);
      await t.callCount(n);
      t.calls[n - 1]?.ack(answer);
      await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    };
    await round(1, 40, duplicates(1));
    await round(2, 80, duplicates(1));
    await round(3, 160, { accepted: 0, forwarded: 1, duplicates: 0 });
    // A URL passed on to its owner was news: back to the short wait.
    await round(4, 40, duplicates(1));
    await round(5, 80, duplicates(1));
    await round(6, 160, duplicates(1));
    await round(7, 320, duplicates(1));
    await round(8, 640, duplicates(1));
    await round(9, 1280, duplicates(1));
    // Never past the longest delay.
    await round(10, 2000, duplicates(1));
    await round(11, 2000, duplicates(1));
    // This agent idle: what it holds is all the peer will get, so it goes soon whatever came before.
    local.idle = true;
    await round(12, 40, duplicates(1));
    local.idle = false;
    await round(13, 2000, ACK);
    await round(14, 40, ACK);
  });

  it("flushes soon once this agent is idle, when reconsidered; buffered URLs keep it from being idle", async () => {
    const local = { idle: false };
    const t = await setup({ flushDelayMs: 2000, urgentDelayMs: 40 }, () => local.idle);
    sendAll(t.exchange, "p", [url(2)]);
    expect(t.clock.pendingDelays).toEqual([2000]);
    // Termination detection must not see an idle agent while a URL waits in a buffer.
    expect(t.exchange.isIdle).toBe(false);
    t.clock.advance(10);
    local.idle = true;
    t.exchange.reconsider();
    expect(t.clock.pendingDelays).toEqual([30]);
    t.clock.advance(30);
    await t.callCount(1);
    expect(urlsOf(t.calls[0])).toEqual([url(2)]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
  });

  it("sends to different peers in parallel, one batch each", async () => {
    const t = await setup({ maxBatchUrls: 2 });
    sendAll(t.exchange, "p", [url(1), url(2), url(3), url(4)]);
    sendAll(t.exchange, "q", [url(1, "h2.example"), url(2, "h2.example")]);
    await t.callCount(2);
    await t.quiet();
    expect(t.calls.map((call) => call.peer).sort()).toEqual(["p", "q"]);
    for (const call of t.calls) call.ack();
    await t.callCount(3);
    expect(t.calls[2]?.peer).toBe("p");
    expect(urlsOf(t.calls[2])).toEqual([url(3), url(4)]);
    t.calls[2]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.delivered.sort()).toEqual(["p", "p", "q"]);
  });

  it("retries a failed batch with doubling delays, same batch id, while the peer lives", async () => {
    const t = await setup({ flushDelayMs: 0, retryMinMs: 100, retryMaxMs: 300 });
    sendAll(t.exchange, "p", [url(1), url(2)]);
    t.clock.advance(0);
    await t.callCount(1);
    const expectedDelays = [100, 200, 300, 300];
    for (const [attempt, delayMs] of expectedDelays.entries()) {
      t.calls[attempt]?.fail();
      await t.timersSet(1);
      expect(t.clock.pendingDelays).toEqual([delayMs]);
      t.clock.advance(delayMs - 1);
      await t.quiet();
      expect(t.calls).toHaveLength(attempt + 1);
      expect(t.exchange.isIdle).toBe(false);
      t.clock.advance(1);
      await t.callCount(attempt + 2);
    }
    expect(new Set(t.calls.map((call) => call.batch.batchId)).size).toBe(1);
    t.calls.at(-1)?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.delivered).toEqual(["p"]);
    expect(t.stats.peer("p").batchesSent).toBe(1);
    expect(t.rerouted).toEqual([]);
  });

  it("reroutes a batch on its way to a peer that leaves the view at once, without waiting for its answer", async () => {
    const t = await setup({ flushDelayMs: 50 });
    sendAll(t.exchange, "p", [url(1), url(2)]);
    t.clock.advance(50);
    await t.callCount(1);
    // Never answered (lost in a partition); the view drops p long before the call's deadline.
    t.alive.delete("p");
    t.exchange.onViewChange();
    expect(t.calls[0]?.signal.aborted).toBe(true);
    await vi.waitFor(() => expect([...t.rerouted].sort()).toEqual([url(1), url(2)]));
    expect(t.exchange.pendingUrls).toBe(0);
    expect(t.delivered).toEqual([]);
  });

  it("reroutes every URL exactly once when the peer dies, none lost, none acknowledged twice", async () => {
    const t = await setup({ maxBatchUrls: 3, flushDelayMs: 50, retryMinMs: 100 });
    const urls = Array.from({ length: 10 }, (_, i) => url(i));
    sendAll(t.exchange, "p", urls);
    await t.callCount(1);
    t.calls[0]?.ack();
    await t.callCount(2);
    // The second batch fails; the peer dies before the retry.
    t.calls[1]?.fail();
    await t.timersSet(1);
    t.alive.delete("p");
    t.exchange.onViewChange(); // a batch is in flight: the buffer waits for it
    t.clock.advance(100);
    // The failed batch and then the buffered URLs (in batches, after the delay) are rerouted.
    for (let i = 0; i < 5 && t.rerouted.length < 7; i++) {
      await vi.waitFor(() => expect(t.exchange.isIdle || t.clock.pending > 0).toBe(true));
      t.clock.advance(50);
      await t.quiet();
    }
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.calls).toHaveLength(2);
    expect(urlsOf(t.calls[0])).toEqual(urls.slice(0, 3)); // the only acknowledged batch
    expect([...t.rerouted].sort()).toEqual(urls.slice(3).sort());
    expect(new Set(t.rerouted).size).toBe(t.rerouted.length);
    expect(t.exchange.pendingUrls).toBe(0);
    expect(t.delivered).toEqual(["p"]);
  });

  it("on a view change, reroutes the buffer of a dead peer at once", async () => {
    const t = await setup({ flushDelayMs: 1000 });
    sendAll(t.exchange, "q", [url(1), url(2)]);
    sendAll(t.exchange, "p", [url(3)]);
    t.alive.delete("q");
    t.exchange.onViewChange();
    expect(t.rerouted).toEqual([url(1), url(2)]);
    expect(t.clock.pendingDelays).toEqual([1000]); // p's; q's timer went with its buffer
    expect(t.exchange.pendingUrls).toBe(1);
    t.clock.advance(1000);
    await t.callCount(1);
    expect(t.calls[0]?.peer).toBe("p");
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.calls).toHaveLength(1);
  });

  it("remembers every URL handed to a peer durably; redistribute(peer) requeues and deletes them", async () => {
    const t = await setup({ flushDelayMs: 0 });
    const toP = [url(1), url(2), url(3, "h2.example:8080")];
    sendAll(t.exchange, "p", toP);
    sendAll(t.exchange, "q", [url(9, "h3.example")]);
    t.clock.advance(0);
    await t.callCount(2);
    for (const call of t.calls) call.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));

    // Acknowledged or not, the outbox keeps them: if p dies, its queue is rebuilt from here.
    const entries = async (peer: string) => {
      const result: { url: string; depth: number }[] = [];
      for await (const { entry } of outboxEntries(t.store, peer)) result.push(entry);
      return result.sort((a, b) => a.url.localeCompare(b.url));
    };
    expect(await entries("p")).toEqual(
      toP.map((item, i) => ({ url: item, depth: i % 3 })).sort((a, b) => a.url.localeCompare(b.url)),
    );
    expect(await entries("q")).toEqual([{ url: url(9, "h3.example"), depth: 0 }]);

    expect(await t.exchange.redistribute("p")).toBe(3);
    expect([...t.requeued].sort((a, b) => a.url.localeCompare(b.url))).toEqual(
      toP
        .map((item, i) => ({ url: item, depth: i % 3, host: hostKey(item) }))
        .sort((a, b) => a.url.localeCompare(b.url)),
    );
    expect(await entries("p")).toEqual([]);
    expect(await entries("q")).toHaveLength(1);
    // A second redistribution finds nothing left.
    expect(await t.exchange.redistribute("p")).toBe(0);
    expect(t.requeued).toHaveLength(3);
  });

  it("rehome(peer) moves what was handed to a peer that left to its hosts' next owners, unsent, this agent's own dropped", async () => {
    const t = await setup({ flushDelayMs: 0 });
    const toP = [url(1), url(2, "h2.example:8080"), url(3, "h3.example")];
    sendAll(t.exchange, "p", toP);
    t.clock.advance(0);
    await t.callCount(1);
    for (const call of t.calls) call.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    const entries = async (peer: string) => {
      const result: string[] = [];
      for await (const { entry } of outboxEntries(t.store, peer)) result.push(entry.url);
      return result.sort();
    };

    // h2 went to q with the leave, h3 to r, the first host to this agent.
    const nextOwner = (_url: string, host: string) =>
      host === "h2.example:8080" ? "q" : host === "h3.example" ? "r" : "self";
    expect(await t.exchange.rehome("p", nextOwner)).toBe(3);
    expect(await entries("p")).toEqual([]);
    expect(await entries("q")).toEqual([toP[1]]);
    expect(await entries("r")).toEqual([toP[2]]);
    expect(await entries("self")).toEqual([]);
    // Nothing sent nor queued: the next owners have them from the leaver.
    expect(t.calls).toHaveLength(1);
    expect(t.requeued).toEqual([]);
    // Should q crash, what p had is re-sent from here.
    expect(await t.exchange.redistribute("q")).toBe(1);
    expect(t.requeued.map((item) => item.url)).toEqual([toP[1]]);
  });

  it("retries a batch whose outbox records could not be written, and sends it only once durable", async () => {
    const t = await setup({ flushDelayMs: 0, retryMinMs: 100 });
    t.failingWrites.remaining = 1;
    sendAll(t.exchange, "p", [url(1), url(2)]);
    t.clock.advance(0);
    await t.timersSet(1);
    expect(t.calls).toHaveLength(0);
    expect(t.exchange.pendingUrls).toBe(2);
    t.clock.advance(100);
    await t.callCount(1);
    const durable: string[] = [];
    for await (const { entry } of outboxEntries(t.store, "p")) durable.push(entry.url);
    expect(durable.sort()).toEqual([url(1), url(2)]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.delivered).toEqual(["p"]);
  });

  it("stop() cancels pending flushes and sends nothing more", async () => {
    const t = await setup({ flushDelayMs: 100 });
    sendAll(t.exchange, "p", [url(1)]);
    expect(t.clock.pending).toBe(1);
    t.exchange.stop();
    expect(t.clock.pending).toBe(0);
    t.clock.advance(1000);
    await t.quiet();
    expect(t.calls).toHaveLength(0);
    // The URL stays in the durable outbox for the next start.
    const left: string[] = [];
    for await (const { entry } of outboxEntries(t.store, "p")) left.push(entry.url);
    expect(left).toEqual([url(1)]);
  });
});

describe("UrlExchange rules", () => {
  /** The URLs of `peer`'s durable outbox, sorted, as "url" or "url#attempts". */
  async function outbox(t: Awaited<ReturnType<typeof setup>>, peer: string): Promise<string[]> {
    await t.committer.commit();
    const result: string[] = [];
    for await (const { entry } of outboxEntries(t.store, peer)) {
      result.push(entry.attempts === undefined ? entry.url : `${entry.url}#${entry.attempts}`);
    }
    return result.sort();
  }

  it("names the bad option in its error, and lets the delays and the starving level be 0", () => {
    expect(() => new UrlExchange({ retryMaxMs: 0 }, {} as never)).toThrow(
      "retryMaxMs must be a positive integer, got 0",
    );
    expect(() => new UrlExchange({ urgentDelayMs: 1.5 }, {} as never)).toThrow(
      "urgentDelayMs must be a positive integer, got 1.5",
    );
    expect(
      () => new UrlExchange({ flushDelayMs: 0, urgentDelayMs: 0, starvingQueuedUrls: 0 }, {} as never),
    ).not.toThrow();
  });

  it("caps the urgent wait at flushDelayMs", async () => {
    const t = await setup({ flushDelayMs: 100, urgentDelayMs: 500, starvingQueuedUrls: 10 });
    sendAll(t.exchange, "q", [url(1)]);
    t.exchange.notePeerLoad("q", { idle: true, queuedUrls: 0, spareHostSlots: 0 });
    expect(t.clock.pendingDelays).toEqual([100]);
    t.exchange.notePeerLoad("nobody", { idle: true, queuedUrls: 0, spareHostSlots: 0 }); // nothing buffered: no timer
    expect(t.clock.pendingDelays).toEqual([100]);
  });

  it("keeps a peer's load heard before any URL for it: a newcomer's first URLs go urgently", async () => {
    const t = await setup({ flushDelayMs: 2000, urgentDelayMs: 40, starvingQueuedUrls: 10 });
    t.exchange.notePeerLoad("q", { idle: true, queuedUrls: 0, spareHostSlots: 0 });
    t.exchange.notePeerLoad("p", { idle: false, queuedUrls: 500, spareHostSlots: 0 });
    expect(t.clock.pendingDelays).toEqual([]);
    sendAll(t.exchange, "q", [url(1)]);
    sendAll(t.exchange, "p", [url(2)]);
    expect(t.clock.pendingDelays).toEqual([40, 2000]);
    t.clock.advance(40);
    await t.callCount(1);
    expect(t.calls[0]?.peer).toBe("q");
    t.calls[0]?.ack();
  });

  it("carries a URL's failed fetch attempts in its batch, its outbox record, its redistribution and its reroute", async () => {
    const t = await setup({ flushDelayMs: 0 });
    t.exchange.send("p", url(1), 2, hostKey(url(1)), { attempts: 3 });
    t.exchange.send("p", url(2), 1, hostKey(url(2)));
    t.clock.advance(0);
    await t.callCount(1);
    expect(t.calls[0]?.batch.urls).toStrictEqual([
      { url: url(1), depth: 2, attempts: 3 },
      { url: url(2), depth: 1 },
    ]);
    expect(await outbox(t, "p")).toEqual([`${url(1)}#3`, url(2)]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(await t.exchange.redistribute("p")).toBe(2);
    expect(t.requeued.find((item) => item.url === url(1))).toEqual({
      url: url(1),
      depth: 2,
      host: hostKey(url(1)),
      attempts: 3,
    });

    // Buffered for a peer that dies: rerouted with its attempts.
    t.exchange.send("q", url(3), 0, hostKey(url(3)), { attempts: 2 });
    t.alive.delete("q");
    t.exchange.onViewChange();
    // A batch in flight to a peer that dies: rerouted with its attempts too.
    t.exchange.send("p", url(4), 0, hostKey(url(4)), { attempts: 1 });
    t.clock.advance(0);
    await t.callCount(2);
    t.alive.delete("p");
    t.calls[1]?.fail(); // no retry's wait: the peer is found dead at once
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.reroutedAttempts).toEqual([`${url(3)}#2`, `${url(4)}#1`]);
  });

  it("carries a sitemap mark, a lastmod and a changefreq like the attempts: batch, outbox, redistribution, reroute", async () => {
    const t = await setup({ flushDelayMs: 0 });
    t.exchange.send("p", url(1), 0, hostKey(url(1)), { sitemap: true, sitemapFor: "site.test" });
    t.exchange.offer("p", url(2), 1, hostKey(url(2)), { lastmod: "2026-11-27", changefreq: "daily" });
    t.clock.advance(0);
    await t.callCount(1);
    expect(t.calls[0]?.batch.urls).toStrictEqual([
      { url: url(1), depth: 0, sitemap: true, sitemapFor: "site.test" },
      { url: url(2), depth: 1, lastmod: "2026-11-27", changefreq: "daily" },
    ]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(await t.exchange.redistribute("p")).toBe(2);
    // The outbox is read back in fingerprint order.
    expect([...t.requeued].sort((a, b) => a.url.localeCompare(b.url))).toEqual([
      { url: url(1), depth: 0, host: hostKey(url(1)), sitemap: true, sitemapFor: "site.test" },
      { url: url(2), depth: 1, host: hostKey(url(2)), lastmod: "2026-11-27", changefreq: "daily" },
    ]);
    t.exchange.send("q", url(3), 0, hostKey(url(3)), { sitemap: true, attempts: 1 });
    t.alive.delete("q");
    t.exchange.onViewChange();
    expect(t.reroutedTraits).toEqual([{ url: url(3), sitemap: true, attempts: 1 }]);
  });

  it("marks every URL handed away as unacknowledged until its batch is acknowledged", async () => {
    const t = await setup({ flushDelayMs: 0 });
    sendAll(t.exchange, "p", [url(1), url(2)]);
    t.clock.advance(0);
    await t.callCount(1);
    expect(await outbox(t, UNACKED_PEER)).toEqual([url(1), url(2)]);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    await vi.waitFor(async () => expect(await outbox(t, UNACKED_PEER)).toEqual([]));
    expect(await outbox(t, "p")).toEqual([url(1), url(2)]);
  });

  it("drops a batch the peer refuses for good, counting it, with no retry and no reroute", async () => {
    const t = await setup({ flushDelayMs: 0, retryMinMs: 100 });
    sendAll(t.exchange, "p", [url(1), url(2)]);
    t.clock.advance(0);
    await t.callCount(1);
    t.calls[0]?.refuse();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(t.exchange.pendingUrls).toBe(0);
    expect(t.stats.errors.get("batch_refused")).toBe(1);
    expect(t.clock.pending).toBe(0);
    t.clock.advance(1000);
    await t.quiet();
    expect(t.calls).toHaveLength(1);
    expect(t.delivered).toEqual([]);
    expect(t.rerouted).toEqual([]);
    expect(t.stats.peer("p").batchesSent).toBe(0);
  });

  it("cuts batches at 2 MiB of URL characters; a longer URL goes alone", async () => {
    const t = await setup({ flushDelayMs: 0 });
    const long = (n: number, chars: number) => {
      const prefix = `http://h1.example/${n}/`;
      return prefix + "a".repeat(chars - prefix.length);
    };
    const MiB = 1024 * 1024;
    const urls = [long(1, MiB), long(2, MiB), long(3, 3 * MiB), url(4)];
    sendAll(t.exchange, "p", urls);
    t.clock.advance(0);
    const sizes: number[] = [];
    for (let n = 1; n <= 3; n++) {
      await t.callCount(n);
      sizes.push(t.calls[n - 1]?.batch.urls.length ?? 0);
      t.calls[n - 1]?.ack();
      if (n === 3) break;
      await t.timersSet(1);
      t.clock.advance(0);
    }
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    expect(sizes).toEqual([2, 1, 1]);
    expect(t.calls.flatMap((call) => call.batch.urls.map((item) => item.url))).toEqual(urls);
  });

  it("drains: sends every buffer now and resolves once all are acknowledged", async () => {
    const t = await setup({ flushDelayMs: 10_000 });
    sendAll(t.exchange, "p", [url(1)]);
    sendAll(t.exchange, "q", [url(2)]);
    let drained = false;
    const draining = t.exchange.drain().then(() => {
      drained = true;
    });
    await t.callCount(2);
    t.calls[0]?.ack();
    await t.quiet();
    t.clock.advance(20);
    await t.quiet();
    expect(drained).toBe(false);
    t.calls[1]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    for (let i = 0; i < 3 && !drained; i++) {
      t.clock.advance(20);
      await t.quiet();
    }
    await draining;
    expect(drained).toBe(true);
    expect(t.clock.pendingDelays).toEqual([]);

    // Once stopped, a drain does not wait for what can no longer be sent.
    sendAll(t.exchange, "p", [url(3)]);
    t.exchange.stop();
    await t.exchange.drain();
    expect(t.calls).toHaveLength(2);
  });

  it("drains what was buffered behind a batch on its way as soon as that batch is answered", async () => {
    const t = await setup({ flushDelayMs: 10_000 });
    sendAll(t.exchange, "p", [url(1)]);
    const draining = t.exchange.drain();
    await t.callCount(1);
    // Routed while the first batch is on its way: the flush policy alone would hold it 10 s.
    sendAll(t.exchange, "p", [url(2)]);
    t.calls[0]?.ack();
    await t.quiet();
    for (let i = 0; i < 3 && t.calls.length < 2; i++) {
      t.clock.advance(20);
      await t.quiet();
    }
    expect(urlsOf(t.calls[1])).toEqual([url(2)]);
    t.calls[1]?.ack();
    for (let i = 0; i < 5 && !t.exchange.isIdle; i++) await t.quiet();
    t.clock.advance(20);
    await draining;
  });

  it("stops draining when its signal aborts, leaving the batch on the way to end by itself", async () => {
    const t = await setup({ flushDelayMs: 10_000 });
    sendAll(t.exchange, "p", [url(1)]);
    const timeUp = new AbortController();
    let drained = false;
    const draining = t.exchange.drain(timeUp.signal).then(() => {
      drained = true;
    });
    await t.callCount(1);
    t.clock.advance(20);
    await t.quiet();
    expect(drained).toBe(false);
    timeUp.abort();
    t.clock.advance(20);
    await draining;
    expect(t.exchange.isIdle).toBe(false);
    expect(t.calls[0]?.signal.aborted).toBe(false);
  });

  it("clears the unacknowledged marks of the URLs it redistributes", async () => {
    const t = await setup({ flushDelayMs: 10_000 });
    sendAll(t.exchange, "p", [url(1), url(2)]);
    expect(await outbox(t, UNACKED_PEER)).toEqual([url(1), url(2)]);
    expect(await t.exchange.redistribute("p")).toBe(2);
    expect(await outbox(t, UNACKED_PEER)).toEqual([]);
    expect(await outbox(t, "p")).toEqual([]);
  });

  it("aborts the batch in flight when stopped, saying so", async () => {
    const t = await setup({ flushDelayMs: 0 });
    sendAll(t.exchange, "p", [url(1)]);
    t.clock.advance(0);
    await t.callCount(1);
    t.exchange.stop();
    expect(t.calls[0]?.signal.reason).toMatchObject({
      code: ErrorCode.PeerUnreachable,
      message: "exchange stopped",
    });
  });

  it("drains without a second batch to a peer that has one in flight, nor an empty one", async () => {
    const t = await setup({ flushDelayMs: 10_000, maxBatchUrls: 1 });
    sendAll(t.exchange, "q", [url(9)]);
    await t.callCount(1);
    t.calls[0]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true)); // q's outbox is empty now
    sendAll(t.exchange, "p", [url(1), url(2)]); // a full batch goes at once, one URL waits
    await t.callCount(2);
    const draining = t.exchange.drain();
    await t.quiet();
    expect(t.calls.map((call) => `${call.peer}:${urlsOf(call)?.join()}`)).toEqual([
      `q:${url(9)}`,
      `p:${url(1)}`,
    ]);
    t.calls[1]?.ack();
    await t.callCount(3);
    expect(urlsOf(t.calls[2])).toEqual([url(2)]);
    t.calls[2]?.ack();
    await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
    t.clock.advance(20);
    await draining;
  });

  it("never puts a batch's timer back, even when its peer then reports more work", async () => {
    const t = await setup({ flushDelayMs: 2000, urgentDelayMs: 40, starvingQueuedUrls: 10 });
    sendAll(t.exchange, "q", [url(1)]);
    t.exchange.notePeerLoad("q", { idle: true, queuedUrls: 0, spareHostSlots: 0 });
    expect(t.clock.pendingDelays).toEqual([40]);
    t.clock.advance(10);
    t.exchange.notePeerLoad("q", { idle: false, queuedUrls: 500, spareHostSlots: 0 });
    expect(t.clock.pendingDelays).toEqual([30]);
  });

  it("counts a batch whose URLs were all forwarded or accepted as news", async () => {
    const t = await setup({ flushDelayMs: 2000, urgentDelayMs: 40, starvingQueuedUrls: 10 });
    const round = async (n: number, answer: UrlBatchAck) => {
      sendAll(t.exchange, "q", [url(n)]);
      t.exchange.notePeerLoad("q", { idle: true, queuedUrls: 0, spareHostSlots: 0 });
      const [delayMs = -1] = t.clock.pendingDelays;
      t.clock.advance(delayMs);
      await t.callCount(n);
      t.calls[n - 1]?.ack(answer);
      await vi.waitFor(() => expect(t.exchange.isIdle).toBe(true));
      return delayMs;
    };
    expect(await round(1, { accepted: 0, forwarded: 0, duplicates: 1 })).toBe(40);
    expect(await round(2, { accepted: 1, forwarded: 1, duplicates: 0 })).toBe(80);
    expect(await round(3, ACK)).toBe(40);
  });

  it("does not write the store again before retrying a batch already durable", async () => {
    const t = await setup({ flushDelayMs: 0, retryMinMs: 100 });
    sendAll(t.exchange, "p", [url(1)]);
    t.clock.advance(0);
    await t.callCount(1);
    t.calls[0]?.fail();
    await t.timersSet(1);
    sendAll(t.exchange, "p", [url(2)]); // buffered behind the batch; its records wait for a commit
    t.failingWrites.remaining = 1; // the next write fails
    t.clock.advance(100);
    await t.callCount(2);
    expect(urlsOf(t.calls[1])).toEqual([url(1)]);
  });
});
