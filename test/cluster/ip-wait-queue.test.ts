import { expect, it } from "vitest";
import { IpWaitQueue, type WaitDecision } from "../../src/cluster/ip-wait-queue.js";
import { ManualClock } from "../support/manual-clock.js";

const IP = "127.0.0.9";

/** A queue whose timed-out waiters hear `timeout:AGENT`; `wakes` lists the lines woken. */
function setUp(maxHeldPerIp = 4, maxTotal = 100) {
  const clock = new ManualClock();
  const wakes: string[] = [];
  const queue = new IpWaitQueue<string>(
    { maxHeldPerIp, maxTotal },
    { clock, wake: (ip) => wakes.push(ip), timedOut: (_ip, agent) => `timeout:${agent}` },
  );
  const answers: string[] = [];
  const hold = (agent: string, holdMs = 1_000, ip = IP) => {
    const held = queue.wait(ip, agent, holdMs);
    held?.then((answer) => answers.push(answer));
    return held;
  };
  return { clock, queue, wakes, answers, hold };
}

/** Lets the resolved promises' callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Gives the first `n` waiters an answer naming them, then leaves the rest waiting. */
function grantFirst(n: number) {
  let left = n;
  return (agent: string): WaitDecision<string> => (left-- > 0 ? { answer: `slot:${agent}` } : undefined);
}

it("answers waiters in the order they came, whichever agent asked", async () => {
  const { queue, answers, hold } = setUp();
  hold("b");
  hold("a");
  hold("b");
  expect(queue.waiting(IP)).toBe(3);
  queue.serve(IP, grantFirst(2));
  await settle();
  expect(answers).toEqual(["slot:b", "slot:a"]);
  expect(queue.waiting(IP)).toBe(1);
  queue.serve(IP, grantFirst(1));
  await settle();
  expect(answers).toEqual(["slot:b", "slot:a", "slot:b"]);
  expect(queue.size).toBe(0);
});

it("a release hands the freed slot to the first waiter only, the others keep their places", async () => {
  const { queue, answers, hold } = setUp();
  hold("a");
  hold("b");
  hold("c");
  // One slot freed: the first waiter gets it, the second hears "not yet" and stays first.
  queue.serve(IP, grantFirst(1));
  await settle();
  expect(answers).toEqual(["slot:a"]);
  queue.serve(IP, grantFirst(1));
  await settle();
  expect(answers).toEqual(["slot:a", "slot:b"]);
  expect(queue.waiting(IP)).toBe(1);
});

it("tells how long the first waiter waited and may wait still, and wakes a line at the time it is told", async () => {
  const { clock, queue, wakes, answers, hold } = setUp();
  hold("a", 1_000);
  clock.advance(30);
  const waited: number[][] = [];
  queue.serve(IP, (_agent, waitedMs, leftMs) => {
    waited.push([waitedMs, leftMs]);
    return { notBeforeMs: clock.now() + 50 };
  });
  expect(waited).toEqual([[30, 970]]);
  clock.advance(49);
  expect(wakes).toEqual([]);
  clock.advance(1);
  expect(wakes).toEqual([IP]);
  await settle();
  expect(answers).toEqual([]);
});

it("answers a waiter still waiting at its deadline with the timeout answer, after waking its line", async () => {
  const { clock, queue, wakes, answers, hold } = setUp();
  hold("a", 1_000);
  clock.advance(500);
  hold("b", 1_000);
  clock.advance(499);
  await settle();
  expect(answers).toEqual([]);
  clock.advance(1);
  await settle();
  expect(wakes).toEqual([IP]);
  expect(answers).toEqual(["timeout:a"]);
  expect(queue.waiting(IP)).toBe(1);
  clock.advance(500);
  await settle();
  expect(answers).toEqual(["timeout:a", "timeout:b"]);
  expect(queue.size).toBe(0);
  expect(clock.pending).toBe(0);
});

it("a waiter served when its line wakes at its deadline hears the answer, not the timeout", async () => {
  const clock = new ManualClock();
  let free = false;
  const queue: IpWaitQueue<string> = new IpWaitQueue<string>(
    { maxHeldPerIp: 4, maxTotal: 100 },
    {
      clock,
      // A slot that lapsed is found when the line is looked at again.
      wake: (ip) => queue.serve(ip, (agent) => (free ? { answer: `slot:${agent}` } : undefined)),
      timedOut: () => "timeout",
    },
  );
  const held = queue.wait(IP, "a", 1_000);
  free = true;
  clock.advance(1_000);
  expect(await held).toBe("slot:a");
});

it("holds no more than its bounds: per address and in all; beyond them an ask is not held", () => {
  const { queue, hold } = setUp(2, 3);
  expect(hold("a")).toBeDefined();
  expect(hold("b")).toBeDefined();
  expect(hold("c")).toBeUndefined();
  expect(hold("c", 1_000, "127.0.0.10")).toBeDefined();
  expect(hold("d", 1_000, "127.0.0.11")).toBeUndefined();
  expect(queue.size).toBe(3);
});

it("drops a line, or one agent's waiters everywhere, with the answer given; and its timers with them", async () => {
  const { clock, queue, answers, hold } = setUp();
  hold("a");
  hold("b");
  hold("a", 1_000, "127.0.0.10");
  hold("c", 1_000, "127.0.0.10");
  queue.dropAgent("a", "gone");
  await settle();
  expect(answers).toEqual(["gone", "gone"]);
  queue.drop(IP, "not-authority");
  await settle();
  expect(answers).toEqual(["gone", "gone", "not-authority"]);
  expect(queue.size).toBe(1);
  expect(clock.pending).toBe(1);
});

it("answers every waiter when closed, so nothing hangs, and holds nothing after", async () => {
  const { clock, queue, answers, hold } = setUp();
  hold("a");
  hold("b", 1_000, "127.0.0.10");
  queue.close("stopped");
  await settle();
  expect(answers).toEqual(["stopped", "stopped"]);
  expect(hold("c")).toBeUndefined();
  expect(queue.size).toBe(0);
  expect(clock.pending).toBe(0);
});
