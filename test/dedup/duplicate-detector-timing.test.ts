import { describe, expect, it } from "vitest";
import { DigestRegistry } from "../../src/dedup/digest-registry.js";
import {
  DEFAULT_DIGEST_BATCH_MS,
  DEFAULT_SETTLE_BATCH_MS,
  type DigestPeers,
  DuplicateDetector,
  SLOW_OWNER_MS,
} from "../../src/dedup/duplicate-detector.js";
import type { PayloadOriginal } from "../../src/storage/index.js";
import { MAX_DIGESTS_PER_MESSAGE } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * The detector's timing on a manual clock: batches, the pending retries' back-off and patience, the
 * slow-owner average and its probes, settlements riding on questions, stopping. The peer is scripted:
 * each message waits until the test answers it.
 */

const digest = (c: string, n = 0) => `sha1:${c}${String(n).padStart(31, "A")}`;
const ORIGINAL: PayloadOriginal = {
  url: "http://a.test/",
  date: "2026-11-27T10:00:00.000Z",
  recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
};

/** Lets promise callbacks run (the detector's awaits between clock steps). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Message {
  readonly kind: "check" | "settle";
  readonly size: number;
  readonly riding: number;
  answer(): void;
  fail(): void;
}

/** Agent "a" whose digests starting with "B" belong to peer "b", which answers when told to. */
function scripted(options: { claimLeaseMs?: number; batchMs?: number } = {}) {
  const clock = new ManualClock();
  // Leases of an hour: claims outlast every test, and the sweepers' timers stay out of the way.
  const registryOptions = { claimLeaseMs: 3_600_000 };
  const store = { clock, lookup: async (d: readonly string[]) => d.map(() => undefined), save: () => {} };
  const local = new DigestRegistry(registryOptions, store);
  const remote = new DigestRegistry(registryOptions, store);
  const messages: Message[] = [];
  const peers: DigestPeers = {
    ownerOf: (d) => (d.startsWith("sha1:B") ? "b" : "a"),
    check: (_peer, questions, settlements) =>
      new Promise((resolve, reject) => {
        messages.push({
          kind: "check",
          size: questions.length,
          riding: settlements.length,
          answer: () => {
            remote.settle("a", settlements);
            resolve(remote.check(questions));
          },
          fail: () => reject(new Error("unreachable")),
        });
      }),
    settle: (_peer, settlements) =>
      new Promise((resolve, reject) => {
        messages.push({
          kind: "settle",
          size: settlements.length,
          riding: 0,
          answer: () => {
            remote.settle("a", settlements);
            resolve();
          },
          fail: () => reject(new Error("unreachable")),
        });
      }),
  };
  const detector = new DuplicateDetector(
    {
      claimLeaseMs: options.claimLeaseMs ?? 30_000,
      ...(options.batchMs === undefined ? {} : { batchMs: options.batchMs }),
    },
    { selfId: "a", clock, registry: local, peers },
  );
  return { clock, local, remote, messages, detector };
}

/** Asks about a remote digest (its owner has no question in flight: it goes at once), answers it after `latencyMs`; the verdict. */
async function askAfter(setup: ReturnType<typeof scripted>, d: string, latencyMs: number) {
  const verdict = setup.detector.check(d);
  await flush();
  const message = setup.messages.at(-1) as Message;
  setup.clock.advance(latencyMs);
  message.answer();
  return verdict;
}

describe("DuplicateDetector timing", () => {
  it("sends a question to an owner with none in flight at once; those asked meanwhile go together when it is answered", async () => {
    const { clock, messages, detector } = scripted();
    const first = detector.check(digest("B", 1));
    expect(messages.map((m) => m.size)).toEqual([1]);
    const meanwhile = [detector.check(digest("B", 2)), detector.check(digest("B", 3))];
    await flush();
    expect(messages).toHaveLength(1);
    expect(clock.pendingDelays).toEqual([DEFAULT_DIGEST_BATCH_MS]);
    clock.advance(DEFAULT_DIGEST_BATCH_MS - 1);
    messages[0]?.answer();
    await flush();
    expect(messages.map((m) => m.size)).toEqual([1, 2]);
    expect(clock.pendingDelays.filter((ms) => ms < 60_000)).toEqual([]);
    messages[1]?.answer();
    expect(await Promise.all([first, ...meanwhile])).toEqual([
      { kind: "claimed", owner: "b" },
      { kind: "claimed", owner: "b" },
      { kind: "claimed", owner: "b" },
    ]);
  });

  it(`sends the questions gathered behind a message in flight after ${DEFAULT_DIGEST_BATCH_MS} ms at most`, async () => {
    const { clock, messages, detector } = scripted();
    const first = detector.check(digest("B", 1));
    const second = detector.check(digest("B", 2));
    await flush();
    clock.advance(DEFAULT_DIGEST_BATCH_MS - 1);
    expect(messages.map((m) => m.size)).toEqual([1]);
    clock.advance(1);
    expect(messages.map((m) => m.size)).toEqual([1, 1]);
    for (const message of messages) message.answer();
    expect(await Promise.all([first, second])).toEqual([
      { kind: "claimed", owner: "b" },
      { kind: "claimed", owner: "b" },
    ]);
  });

  it(`sends a full message at once: ${MAX_DIGESTS_PER_MESSAGE} questions, no wait`, async () => {
    const { clock, messages, detector } = scripted();
    const first = detector.check(digest("B", 0));
    const verdicts = Array.from({ length: MAX_DIGESTS_PER_MESSAGE + 1 }, (_, n) =>
      detector.check(digest("B", n + 1)),
    );
    await flush();
    expect(messages.map((m) => m.size)).toEqual([1, MAX_DIGESTS_PER_MESSAGE]);
    clock.advance(DEFAULT_DIGEST_BATCH_MS);
    expect(messages.map((m) => m.size)).toEqual([1, MAX_DIGESTS_PER_MESSAGE, 1]);
    for (const message of messages) message.answer();
    expect((await Promise.all([first, ...verdicts])).every((v) => v.kind === "claimed")).toBe(true);
  });

  it("without peers (an agent alone) asks and settles with its own registry", async () => {
    const clock = new ManualClock();
    const registry = new DigestRegistry(
      {},
      { clock, lookup: async (d) => d.map(() => undefined), save: () => {} },
    );
    const alone = new DuplicateDetector({ claimLeaseMs: 30_000 }, { selfId: "a", clock, registry });
    expect(await alone.check(digest("B"))).toEqual({ kind: "claimed", owner: "a" });
    await alone.settle("a", digest("B"), ORIGINAL);
    expect(await alone.check(digest("B"))).toEqual({ kind: "seen", original: ORIGINAL });
  });

  it("settles its own digests in its own registry, sending nothing", async () => {
    const { messages, detector } = scripted();
    expect(await detector.check(digest("C"))).toEqual({ kind: "claimed", owner: "a" });
    await detector.settle("a", digest("C"), ORIGINAL);
    expect(await detector.check(digest("C"))).toEqual({ kind: "seen", original: ORIGINAL });
    await detector.settle("a", digest("D"), undefined);
    expect(messages).toEqual([]);
  });

  it("while another agent stores the bytes, asks again after 50, 100, … 2,000 ms, and gives up just after lease + 2 s", async () => {
    // Asks at 0, 50, 150, 350, 750, 1550, 3150, 5150 ms: with a lease of 1,150 ms the patience (3,150 ms)
    // is reached exactly at the 7th question, which must still wait once more.
    const { clock, local, detector } = scripted({ claimLeaseMs: 1_150 });
    await local.check([{ digest: digest("C"), asker: "z" }]);
    let result: unknown;
    void detector.check(digest("C")).then((verdict) => {
      result = verdict;
    });
    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      await flush();
      delays.push(...clock.pendingDelays.filter((ms) => ms < 60_000));
      clock.advance(delays.at(-1) as number);
    }
    await flush();
    expect(delays).toEqual([50, 100, 200, 400, 800, 1600, 2000]);
    expect(result).toEqual({ kind: "unchecked", owner: "a" });
    expect(clock.now() - 1_000_000).toBe(5150);
  });

  it(`takes an owner for slow when its average answer time passes ${SLOW_OWNER_MS} ms, not at it`, async () => {
    const setup = scripted();
    expect(await askAfter(setup, digest("B", 1), SLOW_OWNER_MS)).toEqual({ kind: "claimed", owner: "b" });
    // Not slow at exactly 500 ms: the next question is asked.
    expect(await askAfter(setup, digest("B", 2), 100)).toEqual({ kind: "claimed", owner: "b" });
    expect(setup.messages).toHaveLength(2);
    // 500 → 420 (one fifth of the way to 100) → 516 (a fifth of the way to 900): slow now.
    expect(await askAfter(setup, digest("B", 3), 900)).toEqual({ kind: "claimed", owner: "b" });
    const sent = setup.messages.length;
    expect(await setup.detector.check(digest("B", 4))).toEqual({ kind: "unchecked", owner: "b" });
    expect(setup.messages).toHaveLength(sent);
  });

  it("moves the average a fifth of the way to each answer time", async () => {
    const setup = scripted();
    await askAfter(setup, digest("B", 1), 100);
    // 100 + (2,100 − 100) / 5 = 500: not slow yet.
    await askAfter(setup, digest("B", 2), 2_100);
    const next = setup.detector.check(digest("B", 3));
    await flush();
    setup.clock.advance(DEFAULT_DIGEST_BATCH_MS);
    expect(setup.messages).toHaveLength(3);
    setup.messages[2]?.answer();
    expect(await next).toEqual({ kind: "claimed", owner: "b" });
  });

  it("asks a slow owner again 5 s after it turned slow (one probe), and trusts a fast answer at once", async () => {
    const setup = scripted();
    const { clock, messages, detector } = setup;
    await askAfter(setup, digest("B", 1), 600);
    const slowAt = clock.now();
    clock.advance(4_999 - DEFAULT_DIGEST_BATCH_MS);
    expect(await detector.check(digest("B", 2))).toEqual({ kind: "unchecked", owner: "b" });
    clock.advance(DEFAULT_DIGEST_BATCH_MS);
    expect(clock.now() - slowAt).toBe(4_999);
    clock.advance(1);
    // The probe: asked. Others meanwhile go around the owner.
    const probe = detector.check(digest("B", 3));
    await flush();
    expect(await detector.check(digest("B", 4))).toEqual({ kind: "unchecked", owner: "b" });
    clock.advance(DEFAULT_DIGEST_BATCH_MS);
    expect(messages.map((m) => m.size)).toEqual([1, 1]);
    clock.advance(20);
    messages[1]?.answer();
    expect(await probe).toEqual({ kind: "claimed", owner: "b" });
    // A fresh start, not an average with the slow past: the next question is asked.
    expect(await askAfter(setup, digest("B", 5), 20)).toEqual({ kind: "claimed", owner: "b" });
    expect(messages).toHaveLength(3);
  });

  it("a probe answered slowly keeps the owner skipped until 5 s after the probe was sent", async () => {
    const setup = scripted();
    const { clock, messages, detector } = setup;
    await askAfter(setup, digest("B", 1), 600);
    clock.advance(5_000);
    const probeSentAt = clock.now();
    await askAfter(setup, digest("B", 2), 600);
    expect(messages).toHaveLength(2);
    clock.advance(100);
    expect(await detector.check(digest("B", 3))).toEqual({ kind: "unchecked", owner: "b" });
    clock.advance(probeSentAt + 5_000 - clock.now() - 1);
    expect(await detector.check(digest("B", 4))).toEqual({ kind: "unchecked", owner: "b" });
    clock.advance(1);
    const probe = detector.check(digest("B", 5));
    await flush();
    clock.advance(DEFAULT_DIGEST_BATCH_MS);
    expect(messages).toHaveLength(3);
    messages[2]?.answer();
    await probe;
  });

  it("settlements ride on the next questions: one message, their timer cleared, their callers answered", async () => {
    const setup = scripted();
    const { clock, messages, detector } = setup;
    await askAfter(setup, digest("B", 1), 10);
    let settled = false;
    void detector.settle("b", digest("B", 1), ORIGINAL).then(() => {
      settled = true;
    });
    await flush();
    expect(clock.pendingDelays.filter((ms) => ms < 60_000)).toEqual([DEFAULT_SETTLE_BATCH_MS]);
    await askAfter(setup, digest("B", 2), 10);
    await flush();
    expect(settled).toBe(true);
    expect(messages.map((m) => [m.kind, m.size, m.riding])).toEqual([
      ["check", 1, 0],
      ["check", 1, 1],
    ]);
    expect(clock.pendingDelays.filter((ms) => ms < 60_000)).toEqual([]);
    clock.advance(DEFAULT_SETTLE_BATCH_MS);
    expect(messages).toHaveLength(2);
    // What rode is gone: the next settlement goes alone, itself only.
    const next = detector.settle("b", digest("B", 2), ORIGINAL);
    await flush();
    clock.advance(DEFAULT_SETTLE_BATCH_MS);
    expect(messages.map((m) => [m.kind, m.size])).toEqual([
      ["check", 1],
      ["check", 1],
      ["settle", 1],
    ]);
    messages[2]?.answer();
    await next;
  });

  it("settlements that rode on a message that failed end too (the claim runs out at the owner)", async () => {
    const setup = scripted();
    const { clock, messages, detector } = setup;
    await askAfter(setup, digest("B", 1), 10);
    let settled = false;
    void detector.settle("b", digest("B", 1), ORIGINAL).then(() => {
      settled = true;
    });
    const verdict = detector.check(digest("B", 2));
    await flush();
    clock.advance(DEFAULT_DIGEST_BATCH_MS);
    messages[1]?.fail();
    expect(await verdict).toEqual({ kind: "unchecked", owner: "b" });
    await flush();
    expect(settled).toBe(true);
  });

  it(`sends settlements alone after ${DEFAULT_SETTLE_BATCH_MS} ms when no question goes that way`, async () => {
    const setup = scripted();
    const { clock, messages, detector } = setup;
    await askAfter(setup, digest("B", 1), 10);
    const settled = detector.settle("b", digest("B", 1), ORIGINAL);
    await flush();
    clock.advance(DEFAULT_SETTLE_BATCH_MS);
    expect(messages.map((m) => [m.kind, m.size])).toEqual([
      ["check", 1],
      ["settle", 1],
    ]);
    messages[1]?.answer();
    await settled;
    expect(await setup.remote.check([{ digest: digest("B", 1), asker: "c" }])).toEqual([
      { kind: "seen", original: ORIGINAL },
    ]);
  });

  it("stop ends the batches not sent: their questions are stored whole, their timers gone", async () => {
    const { clock, messages, detector } = scripted();
    void detector.check(digest("B", 1));
    const verdict = detector.check(digest("B", 3));
    const settled = detector.settle("b", digest("B", 2), ORIGINAL);
    await flush();
    expect(clock.pendingDelays).toEqual([DEFAULT_DIGEST_BATCH_MS, DEFAULT_SETTLE_BATCH_MS]);
    detector.stop();
    expect(clock.pending).toBe(0);
    expect(await verdict).toEqual({ kind: "unchecked", owner: "b" });
    await settled;
    expect(messages.map((m) => m.size)).toEqual([1]);
  });
});
