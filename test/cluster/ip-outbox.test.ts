import { expect, it } from "vitest";
import { IP_MAX_START_SLACK_MS, IP_START_SLACK_MS } from "../../src/cluster/ip-grant.js";
import { IpOutboxes, UNREACHABLE_WAIT_MS } from "../../src/cluster/ip-outbox.js";
import type { IpReply, IpRequest } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

function outboxes(reply: (request: IpRequest) => Promise<IpReply>) {
  const clock = new ManualClock();
  const sent: IpRequest[] = [];
  let messages = 0;
  const boxes = new IpOutboxes("self", {
    clock,
    send: (_authority, request) => {
      sent.push(request);
      return reply(request);
    },
    onMessage: () => messages++,
  });
  return { clock, sent, boxes, messages: () => messages };
}

it("sends the asks made together in one message, with the releases that waited", async () => {
  const { sent, boxes, messages } = outboxes(
    async (request) =>
      ({
        grants: request.asks.map(() => ({ kind: "wait", waitMs: 7 })),
      }) as unknown as IpReply,
  );
  boxes.release("a", "1.1.1.1", 3, undefined, false);
  const answers = Promise.all([boxes.ask("a", "1.1.1.1", false), boxes.ask("a", "2.2.2.2", true)]);
  await answers;
  expect(sent).toHaveLength(1);
  expect(sent[0]?.asks.map((a) => a.ip)).toEqual(["1.1.1.1", "2.2.2.2"]);
  expect(sent[0]?.releases).toEqual([{ ip: "1.1.1.1", slotIds: [3], leaseSlots: 0 }]);
  expect(messages()).toBe(1);
});

it("a held ask takes the refusals and Crawl-delays waiting with the releases, so the authority hears of a block first", async () => {
  let answer: ((reply: IpReply) => void) | undefined;
  const { sent, boxes } = outboxes(
    (request) =>
      new Promise((resolve) => {
        if (request.asks[0]?.holdMs)
          resolve({ grants: [{ kind: "IP_GRANT_WAIT", waitMs: 0 }] } as unknown as IpReply);
        else answer = resolve;
      }),
  );
  const first = boxes.ask("a", "1.1.1.1", false); // in flight: what follows waits behind it
  await Promise.resolve();
  boxes.refused("a", "1.1.1.1", 1_000);
  boxes.crawlDelay("a", "1.1.1.1", 2_000);
  boxes.release("a", "1.1.1.1", 4, undefined, true);
  await boxes.askHeld("a", "1.1.1.1", 500);
  expect(sent).toHaveLength(2);
  expect(sent[1]).toMatchObject({
    releases: [{ ip: "1.1.1.1", slotIds: [4], leaseSlots: 0 }],
    refusals: [{ ip: "1.1.1.1", retryAfterMs: 1_000, hasRetryAfter: true }],
    crawlDelays: [{ ip: "1.1.1.1", delayMs: 2_000 }],
  });
  answer?.({ grants: [{ kind: "IP_GRANT_WAIT", waitMs: 7 }] } as unknown as IpReply);
  await first;
  await Promise.resolve();
  // Nothing was left behind for the next message.
  expect(sent).toHaveLength(2);
});

it("asks for the default start slack before any round trip, then for 100 ms beyond two of the least of the recent ones", async () => {
  const clock = new ManualClock();
  const sent: IpRequest[] = [];
  let tripMs = 0;
  const boxes = new IpOutboxes("self", {
    clock,
    send: async (_authority, request) => {
      sent.push(request);
      clock.advance(tripMs); // the answer comes back a round trip later
      return { grants: request.asks.map(() => ({ kind: "IP_GRANT_WAIT", waitMs: 0 })) } as unknown as IpReply;
    },
  });
  const slackOfNextAsk = async () => {
    await boxes.ask("a", "1.1.1.1", false);
    return sent.at(-1)?.asks[0]?.startSlackMs;
  };
  tripMs = 40;
  expect(await slackOfNextAsk()).toBe(IP_START_SLACK_MS);
  expect(await slackOfNextAsk()).toBe(IP_START_SLACK_MS + 2 * 40);
  // A slower trip (a stalled loop) does not lengthen it: the least of the recent ones counts.
  tripMs = 600;
  expect(await slackOfNextAsk()).toBe(IP_START_SLACK_MS + 2 * 40);
  // Far away for good: once the short trips are out of the last 16, the slack follows, up to its bound.
  for (let i = 0; i < 16; i++) await slackOfNextAsk();
  expect(await slackOfNextAsk()).toBe(IP_MAX_START_SLACK_MS);
  // Another authority has its own.
  await boxes.ask("b", "2.2.2.2", false);
  expect(sent.at(-1)?.asks[0]?.startSlackMs).toBe(IP_START_SLACK_MS);
});

it("batches a release alone for a while, and answers asks to an unreachable authority with a wait", async () => {
  const { clock, sent, boxes } = outboxes(() => Promise.reject(new Error("down")));
  boxes.release("a", "1.1.1.1", undefined, { slots: 2, leaseId: 7 }, false);
  await Promise.resolve();
  expect(sent).toHaveLength(0);
  clock.advance(50);
  expect(sent).toHaveLength(1);
  await Promise.resolve();
  expect(await boxes.ask("a", "1.1.1.1", false)).toEqual({ kind: "wait", waitMs: UNREACHABLE_WAIT_MS });
  expect(await boxes.takeOver("a", "1.1.1.1")).toBeUndefined();
});

it("flushAll sends the batched releases at once and resolves once every authority answered, and what queued meanwhile", async () => {
  const unanswered: (() => void)[] = [];
  const { clock, sent, boxes } = outboxes(
    () =>
      new Promise<IpReply>((resolve) => unanswered.push(() => resolve({ grants: [] } as unknown as IpReply))),
  );
  boxes.release("a", "1.1.1.1", undefined, { slots: 2, leaseId: 7 }, false);
  boxes.release("b", "2.2.2.2", 4, undefined, false);
  let flushed = false;
  const flushing = boxes.flushAll().then(() => {
    flushed = true;
  });
  // Sent now, not after the batching wait.
  expect(sent.map((request) => request.releases)).toEqual([
    [{ ip: "1.1.1.1", slotIds: [], leaseSlots: 2, leaseId: 7 }],
    [{ ip: "2.2.2.2", slotIds: [4], leaseSlots: 0 }],
  ]);
  // Queued while a's message is in flight: it goes next, in the same flush.
  boxes.release("a", "3.3.3.3", undefined, { slots: 1, leaseId: 8 }, false);
  while (unanswered.length > 0) {
    expect(flushed).toBe(false);
    for (const answer of unanswered.splice(0)) answer();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await flushing;
  expect(sent.flatMap((request) => request.releases.map((release) => release.ip))).toEqual([
    "1.1.1.1",
    "2.2.2.2",
    "3.3.3.3",
  ]);
  expect(clock.pending).toBe(0);
});
