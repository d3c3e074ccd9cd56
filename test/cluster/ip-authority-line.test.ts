import { expect, it } from "vitest";
import {
  IP_MAX_HOLD_MS,
  IP_MAX_START_SLACK_MS,
  IP_POLL_MS,
  IP_START_SLACK_MS,
  type IpAuthority,
  IpAuthority as IpAuthorityClass,
  type IpAuthorityOptions,
  type IpGrant,
} from "../../src/cluster/ip-authority.js";
import { answerIpRequest } from "../../src/cluster/ip-wire.js";
import { ManualClock } from "../support/manual-clock.js";
import { IP, leaseReleased, OPTIONS } from "./ip-authority-fixtures.js";

/**
 * The line of asks held at a full address (IpAuthority.askHeld, over IpWaitQueue): a release hands the
 * slot to the first waiter at once, instead of leaving it idle until someone polls again.
 */

const HOLD = 1_000;

function setUp(options: IpAuthorityOptions = OPTIONS) {
  const clock = new ManualClock();
  let owned = true;
  const authority = new IpAuthorityClass(options, {
    clock,
    owns: () => owned,
    isAlive: () => true,
    takeOver: async () => undefined,
    random: () => 0,
  });
  const disown = () => {
    owned = false;
  };
  return { clock, authority, disown };
}

/** Lets resolved promises' callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The slot's id of a grant that must be a slot. */
function slotOf(grant: IpGrant | undefined): number {
  if (grant?.kind !== "slot") throw new Error(`not a slot: ${JSON.stringify(grant)}`);
  return grant.slotId;
}

/** Agents a and b share the address: two slots out (b's), the address full. */
function fill(authority: IpAuthority): number[] {
  const lease = authority.ask("a", IP, false); // leased to a, alone
  authority.release("a", IP, leaseReleased(lease, OPTIONS.maxPerIp)); // a returns it whole; a and b now share the address
  return [slotOf(authority.ask("b", IP, false)), slotOf(authority.ask("b", IP, false))];
}

/** Holds `agent`'s ask; its answer lands in `answers` as `agent:kind`. */
function held(authority: IpAuthority, agent: string, answers: string[], holdMs = HOLD) {
  const answer = authority.askHeld(agent, IP, holdMs);
  expect(answer).toBeInstanceOf(Promise);
  const done = Promise.resolve(answer).then((grant) => {
    answers.push(`${agent}:${grant.kind}`);
    return grant;
  });
  return done;
}

it("holds asks at a full address and hands each released slot to the first waiter at once, in order", async () => {
  const { clock, authority } = setUp();
  const [s1, s2] = fill(authority);
  const answers: string[] = [];
  const c = held(authority, "c", answers);
  const a = held(authority, "a", answers);
  const d = held(authority, "d", answers);
  expect(authority.held).toBe(3);
  clock.advance(40);
  authority.release("b", IP, { slotIds: [s1 as number], leaseSlots: 0 });
  await settle();
  expect(answers).toEqual(["c:slot"]);
  expect(await c).toMatchObject({ kind: "slot", heldMs: 40 });
  authority.release("b", IP, { slotIds: [s2 as number], leaseSlots: 0 });
  await settle();
  expect(answers).toEqual(["c:slot", "a:slot"]);
  // Never more than maxPerIp out: d waits for one of those two.
  expect(authority.inFlight(IP)).toBe(2);
  authority.release("a", IP, { slotIds: [slotOf(await a)], leaseSlots: 0 });
  await settle();
  expect(answers).toEqual(["c:slot", "a:slot", "d:slot"]);
  expect(authority.inFlight(IP)).toBe(2);
  expect((await d).kind).toBe("slot");
  expect(authority.held).toBe(0);
});

it("an ask not held comes after those waiting: it is told to wait, and the waiter gets the slot", async () => {
  const { authority } = setUp();
  const [s1] = fill(authority);
  const answers: string[] = [];
  held(authority, "c", answers);
  authority.release("b", IP, { slotIds: [s1 as number], leaseSlots: 0 });
  await settle();
  expect(answers).toEqual(["c:slot"]);
  held(authority, "d", answers);
  // Full again; a fresh ask from another agent is not served ahead of d.
  expect(authority.ask("e", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  expect(authority.held).toBe(1);
});

it("answers a waiter `wait 0` at the end of its hold (ask again), holding it no longer than the cap", async () => {
  const { clock, authority } = setUp();
  fill(authority);
  const answers: string[] = [];
  const c = held(authority, "c", answers, 60_000);
  clock.advance(IP_MAX_HOLD_MS - 1);
  await settle();
  expect(answers).toEqual([]);
  clock.advance(1);
  expect(await c).toEqual({ kind: "wait", waitMs: 0 });
  expect(authority.held).toBe(0);
  expect(clock.pending).toBe(0);
});

it("a slot that lapsed (its holder never released it) goes to the first waiter at its deadline", async () => {
  const options = { ...OPTIONS, slotTtlMs: 800 };
  const { clock, authority } = setUp(options);
  fill(authority);
  const answers: string[] = [];
  const c = held(authority, "c", answers, HOLD);
  clock.advance(HOLD);
  expect(await c).toMatchObject({ kind: "slot", heldMs: HOLD });
});

it("holds a bounded line per address: beyond it an ask is answered at once, as without a line", async () => {
  const { authority } = setUp();
  fill(authority);
  const answers: string[] = [];
  for (let i = 0; i < 64; i++) held(authority, `w${i}`, answers);
  expect(authority.askHeld("late", IP, HOLD)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  expect(authority.held).toBe(64);
});

it("answers every waiter when it stops, so no call hangs, and holds nothing after", async () => {
  const { authority } = setUp();
  fill(authority);
  const answers: string[] = [];
  const c = held(authority, "c", answers);
  authority.close();
  expect(await c).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  expect(authority.askHeld("d", IP, HOLD)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
});

it("a waiter found dead leaves the line: the slot freed next goes to the one behind it", async () => {
  const { authority } = setUp();
  const [s1] = fill(authority);
  const answers: string[] = [];
  held(authority, "c", answers);
  held(authority, "d", answers);
  authority.agentGone("c");
  await settle();
  expect(answers).toEqual(["c:wait"]);
  authority.release("b", IP, { slotIds: [s1 as number], leaseSlots: 0 });
  await settle();
  expect(answers).toEqual(["c:wait", "d:slot"]);
  // b's other slot still counts: never more than maxPerIp out.
  expect(authority.inFlight(IP)).toBe(2);
});

it("answers the line when the address is handed over, or no longer this agent's", async () => {
  const { authority, disown } = setUp();
  fill(authority);
  const answers: string[] = [];
  const c = held(authority, "c", answers);
  authority.handOver(IP, "next");
  expect((await c).kind).toBe("wait");
  const second = setUp();
  fill(second.authority);
  const d = held(second.authority, "d", answers);
  second.disown();
  second.authority.viewChanged(() => undefined);
  expect((await d).kind).toBe("wait");
  disown();
});

it("with an IP delay, a waiter gets its slot when the delay allows it, and its start slack counts from then", async () => {
  const options = { ...OPTIONS, maxPerIp: 4, ipDelayMs: 300 };
  const { clock, authority } = setUp(options);
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, options.maxPerIp)); // a's lease may have started a request until now
  clock.advance(300);
  slotOf(authority.ask("b", IP, false)); // b may start it until IP_START_SLACK_MS from now
  const answers: string[] = [];
  const c = held(authority, "c", answers);
  const spacedMs = IP_START_SLACK_MS + 300;
  clock.advance(spacedMs - 1);
  await settle();
  expect(answers).toEqual([]);
  clock.advance(1);
  expect(await c).toMatchObject({ kind: "slot", heldMs: spacedMs });
});

it("over the wire: a request with a held ask is answered once a slot frees; others at once", async () => {
  const { authority } = setUp();
  const [s1] = fill(authority);
  const request = (from: string, holdMs: number) => ({
    fromId: from,
    releases: [],
    refusals: [],
    asks: [{ ip: IP, renew: false, holdMs, startSlackMs: 0 }],
  });
  expect(answerIpRequest(authority, request("c", 0))).toMatchObject({
    grants: [{ kind: "IP_GRANT_WAIT", waitMs: IP_POLL_MS }],
  });
  const reply = answerIpRequest(authority, request("c", HOLD));
  expect(reply).toBeInstanceOf(Promise);
  answerIpRequest(authority, {
    ...request("b", 0),
    asks: [],
    releases: [{ ip: IP, slotIds: [s1 as number], leaseSlots: 0 }],
  });
  expect(await reply).toMatchObject({ grants: [{ kind: "IP_GRANT_SLOT", heldMs: 0 }] });
});

it("over the wire: a refused request's release that comes with its refusal frees no slot for the line before the block", async () => {
  const { authority } = setUp();
  const [s1] = fill(authority);
  const answers: string[] = [];
  const c = held(authority, "c", answers);
  // b's request was refused (Retry-After: 1 s): its release and the refusal travel in one message.
  answerIpRequest(authority, {
    fromId: "b",
    releases: [{ ip: IP, slotIds: [s1 as number], leaseSlots: 0 }],
    refusals: [{ ip: IP, retryAfterMs: 1_000, hasRetryAfter: true }],
    asks: [],
  });
  await settle();
  expect(answers).toEqual(["c:wait"]);
  expect(await c).toEqual({ kind: "wait", waitMs: 1_000 });
});

it("spaces a slot by the start slack its ask asked for, within the bounds, and says it in the grant", () => {
  const options = { ...OPTIONS, ipDelayMs: 20 };
  const { clock, authority } = setUp(options);
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, options.maxPerIp)); // a and b share the address now
  clock.advance(20);
  // b is 150 ms away: it asks for 400 ms to start; the next slot comes the delay after that.
  const far = authority.ask("b", IP, false, 400);
  expect(far).toMatchObject({ kind: "slot", startSlackMs: 400 });
  expect(authority.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: 400 + 20 });
  clock.advance(420);
  // Asked for less than the default: the default; for more than the bound: the bound.
  const near = authority.ask("c", IP, false, 10);
  expect(near).not.toHaveProperty("startSlackMs");
  authority.release("b", IP, { slotIds: [slotOf(far)], leaseSlots: 0 });
  authority.release("c", IP, { slotIds: [slotOf(near)], leaseSlots: 0 });
  clock.advance(20);
  expect(authority.ask("d", IP, false, 60_000)).toMatchObject({ startSlackMs: IP_MAX_START_SLACK_MS });
});

it("under an IP delay, a released slot's request started by its release: the next is spaced from that, not from the slack", () => {
  const options = { ...OPTIONS, ipDelayMs: 20 };
  const { clock, authority } = setUp(options);
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, options.maxPerIp)); // a's lease may have started a request until now
  clock.advance(20);
  const slot = slotOf(authority.ask("b", IP, false)); // may start until IP_START_SLACK_MS from now
  expect(authority.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: IP_START_SLACK_MS + 20 });
  clock.advance(5);
  authority.release("b", IP, { slotIds: [slot], leaseSlots: 0 }); // it started, and ended, by now
  expect(authority.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: 20 });
  clock.advance(20);
  expect(authority.ask("c", IP, false).kind).toBe("slot");
});
