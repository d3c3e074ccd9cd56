import { expect, it } from "vitest";
import {
  HAND_OVER_RETRY_MS,
  IP_CRAWL_DELAY_MEMORY_MS,
  IP_POLL_MS,
  IP_START_SLACK_MS,
  IpAuthority,
  type IpAuthorityOptions,
  type IpReleased,
} from "../../src/cluster/ip-authority.js";
import { IP_BACK_OFF } from "../../src/cluster/ip-back-off.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";
import { IP, leaseReleased, OPTIONS } from "./ip-authority-fixtures.js";

/** Lets promise callbacks (a hand-over's answer or failure) run. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** An authority that is alone: nothing to take over from anyone. */
function setUp(owns: (ip: string) => boolean = () => true, options: IpAuthorityOptions = OPTIONS) {
  const clock = new ManualClock();
  const authority = new IpAuthority(options, {
    clock,
    owns,
    isAlive: () => true,
    takeOver: async () => undefined,
    random: () => 0,
  });
  return { clock, authority };
}

it("leases an address to its only user, and renews the lease while nobody else asks", () => {
  const { clock, authority } = setUp();
  const lease = authority.ask("a", IP, false);
  const leaseId = (lease as { leaseId?: number }).leaseId;
  expect(leaseId).toBeGreaterThan(0);
  expect(lease).toEqual({ kind: "lease", leaseId, ttlMs: 5_000, blockedForMs: 0, delayMs: 0 });
  clock.advance(4_000);
  // The same lease, renewed.
  expect(authority.ask("a", IP, true)).toEqual({
    kind: "lease",
    leaseId,
    ttlMs: 5_000,
    blockedForMs: 0,
    delayMs: 0,
  });
  clock.advance(4_000);
  // Asking again to start a request under the lease changes nothing.
  expect(authority.ask("a", IP, false)).toEqual({
    kind: "lease",
    leaseId,
    ttlMs: 1_000,
    blockedForMs: 0,
    delayMs: 0,
  });
  // Returned, it is over: the next is another lease.
  authority.release("a", IP, leaseReleased(lease, 2));
  expect(authority.inFlight(IP)).toBe(0);
  const next = authority.ask("a", IP, false) as { kind: string; leaseId?: number };
  expect(next.kind).toBe("lease");
  expect(next.leaseId).not.toBe(leaseId);
});

it("revokes the lease when a second agent asks, counting the holder's limit until it reports", () => {
  const { clock, authority } = setUp();
  const lease = authority.ask("a", IP, false);
  // The holder may have maxPerIp requests in flight: the newcomer waits.
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("a", IP, true)).toEqual({ kind: "revoked" });
  // The holder had one request in flight: it releases the other at once, then that one.
  authority.release("a", IP, leaseReleased(lease, 1));
  const first = authority.ask("b", IP, false);
  expect(first).toMatchObject({ kind: "slot", ttlMs: 10_000 });
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  authority.release("a", IP, leaseReleased(lease, 1));
  expect(authority.ask("a", IP, false)).toMatchObject({ kind: "slot" });
  expect(authority.inFlight(IP)).toBe(2);
  clock.advance(1);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  authority.release("b", IP, { slotIds: [(first as { slotId: number }).slotId], leaseSlots: 0 });
  expect(authority.ask("b", IP, false).kind).toBe("slot");
});

it("waits out the lease and a slot's lifetime when the revoked holder never answers", () => {
  const { clock, authority } = setUp();
  authority.ask("a", IP, false);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs - 1);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  clock.advance(1);
  // The holder has not been heard of for longer than a lease: b is alone now.
  expect(authority.ask("b", IP, false).kind).toBe("lease");
});

it("never grants more than maxPerIp slots at once, and expires slots whose release never comes", () => {
  const { clock, authority } = setUp();
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, 2)); // returns its lease: a is still a user, so no lease for b
  const grants = ["b", "c", "b", "c", "a"].map((agent) => authority.ask(agent, IP, false).kind);
  expect(grants).toEqual(["slot", "slot", "wait", "wait", "wait"]);
  clock.advance(OPTIONS.leaseTtlMs - 1);
  expect(authority.ask("b", IP, false).kind).toBe("wait"); // b and c keep their slots, a is forgotten
  clock.advance(OPTIONS.slotTtlMs - OPTIONS.leaseTtlMs + 1);
  expect(authority.inFlight(IP)).toBe(0);
  // Every slot has expired and the others are quiet: c uses the address alone.
  expect(authority.ask("c", IP, false).kind).toBe("lease");
});

it("leases again once the other users have been quiet for a lease's time and every slot is back", () => {
  const { clock, authority } = setUp();
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, 2));
  const slot = authority.ask("b", IP, false) as { slotId: number };
  authority.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  expect(authority.ask("b", IP, false).kind).toBe("slot");
  clock.advance(OPTIONS.leaseTtlMs);
  // b's last slot is still out: no lease until it comes back.
  expect(authority.ask("b", IP, false).kind).toBe("slot");
  clock.advance(OPTIONS.slotTtlMs);
  expect(authority.ask("b", IP, false).kind).toBe("lease");
});

it("blocks every agent's grants after a push-back: Retry-After as asked, else doubling to a cap", () => {
  const { clock, authority } = setUp();
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, 2));
  authority.ask("b", IP, false);
  const start = clock.now();
  expect(authority.refused("a", IP, 3_000)).toBe(start + 3_000);
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: 3_000 });
  clock.advance(3_000);
  const blocks: number[] = [];
  for (let i = 0; i < 10; i++) {
    const until = authority.refused("b", IP, undefined);
    // A second refusal during the block is the same incident.
    expect(authority.refused("a", IP, undefined)).toBe(until);
    blocks.push(until - clock.now());
    clock.advance(until - clock.now());
  }
  expect(blocks.slice(0, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
  expect(Math.max(...blocks)).toBe(IP_BACK_OFF.capMs);
  // After a quiet period the curve starts over.
  clock.advance(IP_BACK_OFF.quietMs + 1);
  expect(authority.refused("b", IP, undefined) - clock.now()).toBe(IP_BACK_OFF.baseMs);
});

it("says each block it sets after a push-back, with the agent refused and how long", async () => {
  const { logger, records } = await recordingLogger();
  const clock = new ManualClock();
  const authority = new IpAuthority(OPTIONS, {
    clock,
    owns: (ip) => ip === IP,
    isAlive: () => true,
    takeOver: async () => undefined,
    random: () => 0,
    logger,
  });
  authority.refused("a", IP, 3_000);
  clock.advance(1_000);
  authority.refused("b", IP, undefined); // the same incident: the block stands
  authority.refused("b", "127.0.0.10", undefined); // not its address: nothing set, nothing said
  expect(
    records
      .filter((r) => r.event === "ip-blocked")
      .map(({ ip, refused, blockedForMs }) => ({ ip, refused, blockedForMs })),
  ).toEqual([
    { ip: IP, refused: "a", blockedForMs: 3_000 },
    { ip: IP, refused: "b", blockedForMs: 2_000 },
  ]);
});

it("tells a lease holder of a block at its renewal", () => {
  const { clock, authority } = setUp();
  authority.ask("a", IP, false);
  authority.refused("a", IP, undefined);
  clock.advance(400);
  expect(authority.ask("a", IP, true)).toEqual({
    kind: "lease",
    leaseId: expect.any(Number),
    ttlMs: 5_000,
    blockedForMs: 600,
    delayMs: 0,
  });
});

it("jitters blocks upwards only", () => {
  const clock = new ManualClock();
  const authority = new IpAuthority(OPTIONS, {
    clock,
    owns: () => true,
    isAlive: () => true,
    takeOver: async () => undefined,
    random: () => 0.999,
  });
  const block = authority.refused("a", IP, undefined) - clock.now();
  expect(block).toBeGreaterThan(IP_BACK_OFF.baseMs);
  expect(block).toBeLessThanOrEqual(IP_BACK_OFF.baseMs * (1 + IP_BACK_OFF.jitter));
});

it("holds an address taken over from a crashed authority for the grace, and forgets those it no longer owns", () => {
  let owned = new Set([IP]);
  const { clock, authority } = setUp((ip) => owned.has(ip));
  expect(authority.ask("a", IP, false).kind).toBe("lease");
  const other = "127.0.0.10";
  expect(authority.ask("a", other, false).kind).toBe("wait"); // not the authority
  owned = new Set([other]);
  const dead = new IpAuthority(OPTIONS, {
    clock,
    owns: (ip) => owned.has(ip),
    isAlive: (id) => id !== "crashed",
    takeOver: async () => undefined,
  });
  authority.viewChanged(() => undefined);
  dead.viewChanged((ip) => (ip === other ? "crashed" : undefined));
  expect(authority.size).toBe(0);
  expect(authority.ask("a", IP, true)).toEqual({ kind: "revoked" });
  expect(dead.ask("a", other, false)).toEqual({ kind: "wait", waitMs: OPTIONS.graceMs });
  clock.advance(OPTIONS.graceMs);
  expect(dead.ask("a", other, false).kind).toBe("lease");
});

/** Two authorities, `old` and `next`, with `next` taking addresses over from `old` as the cluster does. */
function twoAuthorities(options: IpAuthorityOptions = OPTIONS) {
  const clock = new ManualClock();
  const owner = { current: "old" };
  const make = (id: "old" | "next"): IpAuthority =>
    new IpAuthority(options, {
      clock,
      owns: () => owner.current === id,
      isAlive: () => true,
      takeOver: async (_from, ip) => authorities.old.handOver(ip, id),
      authorityOf: () => owner.current,
      forwardRelease: (to, ...release) => authorities[to as "old" | "next"].forwardedRelease(id, ...release),
      random: () => 0,
    });
  const authorities = { old: make("old"), next: make("next") };
  return { clock, owner, ...authorities };
}

it("takes an address over from its live previous authority: its grants count until released", async () => {
  const { clock, owner, old, next } = twoAuthorities();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  old.release("a", IP, leaseReleased(lease, 2));
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  expect(slot.kind).toBe("slot");
  owner.current = "next";
  next.viewChanged(() => "old");
  // Asked first, the new authority waits for the hand-over.
  expect(next.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  await Promise.resolve();
  // b's slot from the old authority counts here; the old one grants nothing any more.
  expect(next.inFlight(IP)).toBe(1);
  expect(old.ask("c", IP, false).kind).toBe("wait");
  expect(next.ask("a", IP, false).kind).toBe("slot");
  expect(next.ask("a", IP, false).kind).toBe("wait");
  // b releases the old authority's slot to the new one.
  next.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  expect(next.inFlight(IP)).toBe(1);
  clock.advance(1);
  expect(next.ask("a", IP, false).kind).toBe("slot");
});

it("hands over what it granted at an address its view no longer gives it, though the new authority asked after", async () => {
  const { owner, old, next } = twoAuthorities();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  old.release("a", IP, leaseReleased(lease, 2));
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  expect(slot.kind).toBe("slot");
  owner.current = "next";
  // The old authority's view changes first; another's request there ends, released to it still.
  old.viewChanged(() => undefined);
  expect(old.ask("c", IP, false).kind).toBe("wait");
  next.viewChanged(() => "old");
  expect(next.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  await Promise.resolve();
  // b's slot is in the hand-over: it counts at the new authority until released.
  expect(next.inFlight(IP)).toBe(1);
  next.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  expect(next.inFlight(IP)).toBe(0);
});

it("asks an unanswering previous authority again while it is in the view, instead of waiting out the grace", async () => {
  const clock = new ManualClock();
  let answers = 0;
  const next = new IpAuthority(OPTIONS, {
    clock,
    owns: () => true,
    isAlive: () => true,
    // Killed and not yet suspected, or restarted where the view does not know yet: the first ask fails.
    takeOver: async () => {
      answers++;
      // Unreachable: the outbox answers undefined.
      if (answers === 1) return undefined;
      return { held: new Map([["b", 1]]), untilMs: 10_000, blockedForMs: 0, spacedForMs: 0 };
    },
    random: () => 0,
  });
  next.viewChanged(() => "old");
  expect(next.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  await flush();
  expect(next.ask("a", IP, false).kind).toBe("wait");
  clock.advance(HAND_OVER_RETRY_MS);
  await flush();
  expect(answers).toBe(2);
  // b's request from the old authority counts; the address is not held for the grace.
  expect(next.inFlight(IP)).toBe(1);
  expect(next.ask("a", IP, false).kind).toBe("slot");
});

it("takes an address over from the others' reports when its unanswering previous authority is found gone meanwhile", async () => {
  const clock = new ManualClock();
  const alive = new Set(["old", "next", "c"]);
  const next = new IpAuthority(OPTIONS, {
    clock,
    owns: () => true,
    isAlive: (id) => alive.has(id),
    takeOver: async () => {
      throw new Error("unreachable");
    },
    random: () => 0,
  });
  const start = clock.now();
  next.viewChanged(() => "old", ["old", "next", "c"], ["old", "next", "c"]);
  expect(next.ask("c", IP, false).kind).toBe("wait");
  await flush();
  // Found gone: the view changes without it, and the others report what they hold of its grants.
  alive.delete("old");
  next.viewChanged(() => undefined, ["old", "next", "c"], ["next", "c"]);
  clock.advance(HAND_OVER_RETRY_MS);
  await flush();
  next.reportedHoldings("next", "old", new Map(), ["next", "c"], true);
  next.reportedHoldings("c", "old", new Map(), ["next", "c"], true);
  // Not held for the grace: the crashed one's own requests count a lease and a slot's life, as after any crash.
  expect(next.inFlight(IP)).toBe(OPTIONS.maxPerIp);
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs);
  expect(next.ask("c", IP, false).kind).toBe("lease");
  expect(clock.now() - start).toBeLessThan(OPTIONS.graceMs);
});

it("answers a repeated hand-over ask as it answered the first, aged: an answer lost on the way is not an empty one", () => {
  const { clock, authority } = setUp(() => true);
  expect(authority.ask("a", IP, false).kind).toBe("lease");
  const first = authority.handOver(IP, "next");
  expect(first.held).toEqual(new Map([["a", 2]]));
  clock.advance(1_000);
  const again = authority.handOver(IP, "next");
  expect(again.held).toEqual(new Map([["a", 2]]));
  expect(again.untilMs).toBe(first.untilMs - 1_000);
  // Past the grace, nothing it granted may run any more.
  clock.advance(OPTIONS.graceMs);
  expect(authority.handOver(IP, "next").held.size).toBe(0);
});

it("grants nothing at an address it handed over, though its view still makes it the authority", () => {
  // The new authority asked for the address before this one's view changed.
  const { authority } = setUp(() => true);
  expect(authority.ask("a", IP, false).kind).toBe("lease");
  authority.handOver(IP, "next");
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: 250 });
  expect(authority.ask("a", IP, true)).toEqual({ kind: "revoked" });
  expect(authority.askHeld("b", IP, 1_000)).toEqual({ kind: "wait", waitMs: 250 });
});

it("takes a lease over: the holder's requests count until it returns the lease to the new authority", async () => {
  const { owner, old, next } = twoAuthorities();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  owner.current = "next";
  next.viewChanged(() => "old");
  // The holder's lease release reaches the new authority before it heard from the old one: another
  // authority's lease, taken off what was handed over of a's.
  next.release("a", IP, leaseReleased(lease, 1));
  await Promise.resolve();
  expect(next.inFlight(IP)).toBe(1);
  expect(old.ask("a", IP, true)).toEqual({ kind: "revoked" });
  expect(next.ask("b", IP, false).kind).toBe("slot");
  expect(next.ask("b", IP, false).kind).toBe("wait");
  next.release("a", IP, leaseReleased(lease, 1));
  expect(next.ask("b", IP, false).kind).toBe("slot");
});

it("sends a slot's release that reached it before its view made it the authority on to the previous one, where it ends the slot", async () => {
  const { owner, old, next } = twoAuthorities();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  old.release("a", IP, leaseReleased(lease, 2));
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  expect(slot.kind).toBe("slot");
  // b's view changed first: its slot's release goes to the new authority, whose view still names the
  // old one: sent on there, it ends the slot, which is not handed over.
  next.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  owner.current = "next";
  next.viewChanged(() => "old");
  expect(next.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  await flush();
  expect(next.inFlight(IP)).toBe(0);
});

it("ends a lease by its return sent on through another agent: the return names it", () => {
  const { old, next } = twoAuthorities();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  // a's view dropped old for a moment: a ended its lease and gave it back to next, which sends it on to
  // old. a asked old again before that came, and was answered the same lease, which it takes no more
  // (IpLeases.take): the return ends it.
  expect(old.ask("a", IP, false)).toEqual(lease);
  next.release("a", IP, leaseReleased(lease, 2));
  expect(old.inFlight(IP)).toBe(0);
  expect(old.ask("b", IP, false).kind).toBe("slot");
});

it("never takes a late return of a lease over off what a later lease of the same agent's may run", () => {
  const { clock, authority } = setUp();
  const first = authority.ask("a", IP, false);
  // a's renewals did not come: its lease lapsed, and what it may have run expired a slot's life later.
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs);
  expect(authority.inFlight(IP)).toBe(0);
  const second = authority.ask("a", IP, false);
  expect(second.kind).toBe("lease");
  // b asks: the second lease is revoked; a may run 2 under it until it reports.
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  // The first lease's return, held up on its way, comes now: it frees nothing of the second's.
  authority.release("a", IP, leaseReleased(first, 2));
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  // Still nothing once the first is long forgotten here: an unknown lease is taken off what a holds
  // counted by agent (handed over, or left by a crash), of which there is none.
  clock.advance(OPTIONS.slotTtlMs);
  authority.release("a", IP, leaseReleased(first, 2));
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  authority.release("a", IP, leaseReleased(second, 2));
  expect(authority.ask("b", IP, false).kind).toBe("slot");
});

it("ends and frees nothing by a lease part that names no lease (an agent that predates lease ids)", () => {
  const { clock, authority } = setUp();
  authority.ask("a", IP, false);
  authority.release("a", IP, { slotIds: [], leaseSlots: 2 });
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  // The lease lapses, and what it may have run a slot's life later: slower, never faster.
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs);
  expect(authority.inFlight(IP)).toBe(0);
  expect(authority.ask("b", IP, false).kind).not.toBe("wait");
});

/** The view of both agents before `old` leaves. */
const VIEW = ["old", "next"];

/** `old` leaving: `next` is the authority of its addresses without it, and `old` is gone from its view. */
function leaving(options: IpAuthorityOptions = OPTIONS) {
  const clock = new ManualClock();
  const owner = { current: "old" };
  const alive = new Set(["old", "next"]);
  const make = (id: "old" | "next"): IpAuthority =>
    new IpAuthority(options, {
      clock,
      owns: () => owner.current === id,
      isAlive: (agent) => alive.has(agent),
      // The leaver is gone once the view changed: asking it would get no answer.
      takeOver: async () => undefined,
      authorityOf: () => owner.current,
      forwardRelease: (to, ...release) => authorities[to as "old" | "next"].forwardedRelease(id, ...release),
      random: () => 0,
    });
  const authorities = { old: make("old"), next: make("next") };
  const { old, next } = authorities;
  /** `old` leaves: it hands over what `leave` returns to `next`, then the view changes without it. */
  const leave = () => {
    const byAuthority = old.leave(() => "next");
    next.leftHandingOver("old", byAuthority.get("next") ?? new Map(), true, VIEW);
    viewWithoutOld();
  };
  /** The view changes without `old`, handed over or not. */
  const viewWithoutOld = (membersBefore: readonly string[] = VIEW) => {
    owner.current = "next";
    alive.delete("old");
    next.viewChanged(() => "old", membersBefore);
  };
  return { clock, old, next, leave, viewWithoutOld };
}

it("takes over at once the addresses of an agent that left handing them over: nothing granted there, no wait", () => {
  const { old, next, leave } = leaving();
  leave();
  // An address the leaver never granted at: not waited out as after a crash.
  expect(next.ask("a", IP, false).kind).toBe("lease");
  expect(old.ask("b", "127.0.0.77", false)).toEqual({ kind: "wait", waitMs: 250 });
});

it("counts what an agent that left had granted until released or expired, and grants nothing there as it leaves", () => {
  const { clock, old, next, leave } = leaving();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  old.release("a", IP, leaseReleased(lease, 2));
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  expect(slot.kind).toBe("slot");
  clock.advance(1_000);
  leave();
  // The leaver grants nothing any more, anywhere, though its own view may still make it the authority.
  expect(old.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: 250 });
  expect(old.ask("c", "127.0.0.78", false)).toEqual({ kind: "wait", waitMs: 250 });
  clock.advance(1_000);
  // b's slot counts at the new authority: one more at most (maxPerIp 2), without waiting for a grace.
  expect(next.ask("a", IP, false).kind).toBe("slot");
  expect(next.inFlight(IP)).toBe(2);
  expect(next.ask("a", IP, false).kind).toBe("wait");
  next.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  expect(next.ask("a", IP, false).kind).toBe("slot");
});

it("takes a release that reached it before its view learnt of a leave off the hand-over: sent to the leaver and back", () => {
  const { old, next, viewWithoutOld } = leaving();
  const lease = old.ask("a", IP, false);
  expect(lease.kind).toBe("lease");
  next.leftHandingOver("old", old.leave(() => "next").get("next") ?? new Map(), true, VIEW);
  // a learnt of the leave first: its lease given back whole to the next authority, not one yet here.
  next.release("a", IP, leaseReleased(lease, 2));
  viewWithoutOld();
  expect(next.inFlight(IP)).toBe(0);
  expect(next.ask("a", IP, false).kind).toBe("lease");
});

it("counts a lease granted again after its holder gave the first back through another agent", () => {
  const { old, next, viewWithoutOld } = leaving();
  const first = old.ask("c", IP, false);
  expect(first.kind).toBe("lease");
  // c's view dropped old for a moment: its lease given back to next, and sent on to old, where it ends.
  next.release("c", IP, leaseReleased(first, 2));
  // Back in c's view, old leases it to c again (another lease), then leaves.
  const second = old.ask("c", IP, false) as { kind: string; leaseId?: number };
  expect(second.kind).toBe("lease");
  expect(second.leaseId).not.toBe((first as { leaseId?: number }).leaseId);
  next.leftHandingOver("old", old.leave(() => "next").get("next") ?? new Map(), true, VIEW);
  viewWithoutOld();
  expect(next.ask("b", IP, false).kind).toBe("wait");
  expect(next.inFlight(IP)).toBe(2);
});

/** An authority that is `old`, about to leave: the releases it forwards after, as they went. */
function forwarding() {
  const forwarded: [string, string, string, IpReleased, number][] = [];
  const old = new IpAuthority(OPTIONS, {
    clock: new ManualClock(),
    owns: () => true,
    isAlive: () => true,
    takeOver: async () => undefined,
    forwardRelease: (...args) => forwarded.push(args),
    random: () => 0,
  });
  return { old, forwarded };
}

it("counts the leaver's own requests until their releases, forwarded, come", () => {
  const { old, forwarded } = forwarding();
  // The leaver leased the address to itself; a slow fetch of its own still runs as it leaves.
  const lease = old.ask("old", IP, false);
  expect(lease.kind).toBe("lease");
  const byAuthority = old.leave(() => "next");
  const { next, viewWithoutOld } = leaving();
  next.leftHandingOver("old", byAuthority.get("next") ?? new Map(), true, VIEW);
  viewWithoutOld();
  expect(next.ask("a", IP, false).kind).toBe("wait");
  // Its lease given back: the release reaches it, left, and goes on to the next authority.
  old.release("old", IP, leaseReleased(lease, 2));
  const [to, agent, ip, released, hops] = forwarded[0] as (typeof forwarded)[number];
  expect(to).toBe("next");
  expect(hops).toBe(1);
  next.forwardedRelease("old", agent, ip, released, hops);
  expect(next.ask("a", IP, false).kind).not.toBe("wait");
});

it("waits out the grace when its view before the change is not the one the leaver handed over in", () => {
  // Another agent left at once, or the views disagree: the address may have gone to another than here.
  const { old, next, viewWithoutOld } = leaving();
  const byAuthority = old.leave(() => "next");
  next.leftHandingOver("old", byAuthority.get("next") ?? new Map(), true, ["old", "next", "third"]);
  viewWithoutOld();
  expect(next.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: OPTIONS.graceMs });
});

it("answers a take-over asked after it left with a hold for the grace: what it granted went elsewhere", () => {
  const { old } = leaving();
  old.ask("a", IP, false);
  old.leave(() => "next");
  expect(old.handOver(IP, "joiner").holdForMs).toBe(OPTIONS.graceMs);
});

it("hands over an address whose own take-over it still awaited with a hold, not as free", () => {
  const clock = new ManualClock();
  const old = new IpAuthority(OPTIONS, {
    clock,
    owns: () => true,
    isAlive: () => true,
    // The previous authority's answer never comes.
    takeOver: () => new Promise(() => {}),
    random: () => 0,
  });
  old.viewChanged(() => "before", ["before", "old"]);
  expect(old.ask("a", IP, false).kind).toBe("wait");
  const handOff = old
    .leave(() => "next")
    .get("next")
    ?.get(IP);
  expect(handOff?.holdForMs).toBe(OPTIONS.graceMs);
});

it("forwards a release it gets after leaving to the address's next authority, which frees the slot at once", () => {
  const { old, forwarded } = forwarding();
  const lease = old.ask("a", IP, false);
  old.release("a", IP, leaseReleased(lease, 2));
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  const byAuthority = old.leave(() => "next");
  // b's release reaches the leaver, b's view not knowing of the leave yet.
  old.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  expect(forwarded).toEqual([["next", "b", IP, { slotIds: [slot.slotId], leaseSlots: 0 }, 1]]);

  // At the next authority: forwarded before its view changed, then after.
  const { next, viewWithoutOld } = leaving();
  next.leftHandingOver("old", byAuthority.get("next") ?? new Map(), true, VIEW);
  next.forwardedRelease("old", "b", IP, { slotIds: [slot.slotId], leaseSlots: 0 }, 1);
  viewWithoutOld();
  expect(next.ask("c", IP, false).kind).toBe("lease");
});

it("takes a forwarded release off the held requests when the address is kept here already", () => {
  const { old, next, viewWithoutOld } = leaving();
  const lease = old.ask("a", IP, false);
  old.release("a", IP, leaseReleased(lease, 2));
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  next.leftHandingOver("old", old.leave(() => "next").get("next") ?? new Map(), true, VIEW);
  viewWithoutOld();
  // b's slot counts here: one more at most (maxPerIp 2).
  expect(next.ask("c", IP, false).kind).toBe("slot");
  expect(next.ask("c", IP, false).kind).toBe("wait");
  next.forwardedRelease("old", "b", IP, { slotIds: [slot.slotId], leaseSlots: 0 }, 1);
  expect(next.inFlight(IP)).toBe(1);
  expect(next.ask("c", IP, false).kind).toBe("slot");
});

it("forgets a hand-over left unfinished once its agent is gone, and waits out the grace there", () => {
  const { old, next, viewWithoutOld } = leaving();
  old.ask("a", IP, false);
  const byAuthority = old.leave(() => "next");
  next.leftHandingOver("old", byAuthority.get("next") ?? new Map(), false, VIEW);
  viewWithoutOld();
  next.agentGone("old");
  // Its last request, come late, is not taken for the whole hand-over.
  next.leftHandingOver("old", new Map(), true, VIEW);
  expect(next.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: OPTIONS.graceMs });
});

it("still waits out the grace for an agent that left without handing its addresses over", () => {
  const { next, viewWithoutOld } = leaving();
  viewWithoutOld();
  expect(next.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: OPTIONS.graceMs });
});

it("waits out the grace when the leave's last message never came, though some addresses were handed over", () => {
  const { old, next, viewWithoutOld } = leaving();
  expect(old.ask("a", IP, false).kind).toBe("lease");
  const byAuthority = old.leave(() => "next");
  next.leftHandingOver("old", byAuthority.get("next") ?? new Map(), false, VIEW);
  viewWithoutOld();
  expect(next.ask("b", "127.0.0.79", false)).toEqual({ kind: "wait", waitMs: OPTIONS.graceMs });
  expect(next.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: OPTIONS.graceMs });
});

it("forgets addresses with nothing left to remember, keeping those in use and those backing off", () => {
  const { clock, authority } = setUp();
  const use = (ip: string) => {
    const lease = authority.ask("a", ip, false);
    authority.release("a", ip, leaseReleased(lease, 2)); // returned at once: its remainder is released too
  };
  const address = (i: number) => `127.2.${Math.floor(i / 250)}.${1 + (i % 250)}`;
  for (let i = 0; i < 1_100; i++) use(address(i));
  authority.ask("b", "127.3.0.1", false); // in use: leased
  authority.refused("b", "127.3.0.2", 600_000); // blocked
  expect(authority.size).toBe(1_102);
  // The first 1,100 are old news a lease's time later: the next sweep (at twice what the last kept)
  // drops them.
  clock.advance(OPTIONS.leaseTtlMs);
  authority.ask("b", "127.3.0.1", true);
  for (let i = 1_100; i < 2_100; i++) use(address(i));
  expect(authority.size).toBeLessThan(1_100);
  expect(authority.ask("c", "127.3.0.2", false).kind).toBe("wait");
  expect(authority.inFlight("127.3.0.1")).toBe(OPTIONS.maxPerIp);
});

it("forgets a gone agent's lease and slots a lease's time after it is gone, not a fetch's time", () => {
  const { clock, authority } = setUp();
  authority.ask("a", IP, false); // leased to a
  const other = "127.0.0.12";
  const lease = authority.ask("a", other, false);
  authority.release("a", other, leaseReleased(lease, 2));
  const slot = authority.ask("b", other, false);
  expect(slot.kind).toBe("slot");
  authority.agentGone("a");
  authority.agentGone("b");
  // Their requests count a lease's time more, then nothing holds the addresses.
  expect(authority.ask("c", IP, false).kind).toBe("wait");
  expect(authority.inFlight(other)).toBe(1);
  clock.advance(OPTIONS.leaseTtlMs);
  expect(authority.ask("c", IP, false).kind).toBe("lease");
  expect(authority.ask("c", other, false).kind).toBe("lease");
});

it("counts a gone agent's former grants no more once it is back as a new incarnation, its last start still spacing", () => {
  const { clock, authority } = setUp(() => true, { ...OPTIONS, ipDelayMs: 1_000 });
  authority.ask("a", IP, false); // leased to a
  authority.agentGone("a");
  expect(authority.ask("c", IP, false).kind).toBe("wait");
  clock.advance(100);
  authority.restarted("a");
  expect(authority.inFlight(IP)).toBe(0);
  // Its predecessor may have started a request until now: the next start is an IP delay away.
  expect(authority.ask("c", IP, false)).toEqual({
    kind: "lease",
    leaseId: expect.any(Number),
    ttlMs: 5_000,
    blockedForMs: 1_000,
    delayMs: 1_000,
  });
});

it("spaces the slots it grants by the IP delay and the start slack", () => {
  const { clock, authority } = setUp(() => true, { ...OPTIONS, ipDelayMs: 1_000 });
  // Two users: slots, not a lease. The returned lease may have started a request until its return.
  const lease = authority.ask("a", IP, false);
  authority.release("a", IP, leaseReleased(lease, 2));
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: 1_000 });
  clock.advance(1_000);
  const first = authority.ask("b", IP, false);
  expect(first.kind).toBe("slot");
  // The second slot is free by count, but the first may start up to the slack after its grant.
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: 1_000 + IP_START_SLACK_MS });
  clock.advance(1_000 + IP_START_SLACK_MS - 1);
  expect(authority.ask("a", IP, false).kind).toBe("wait");
  clock.advance(1);
  expect(authority.ask("a", IP, false).kind).toBe("slot");
});

it("counts a revoked lease's starts until its end, or until its holder releases it", () => {
  const { clock, authority } = setUp(() => true, { ...OPTIONS, ipDelayMs: 1_000 });
  const lease = authority.ask("a", IP, false);
  clock.advance(1_000);
  // b asks: the lease is revoked; its holder may start requests until it learns so.
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  clock.advance(500);
  expect(authority.ask("a", IP, true)).toEqual({ kind: "revoked" });
  clock.advance(100);
  // The holder gives back both requests it may have had: it ended its lease before, so the delay counts from now.
  authority.release("a", IP, leaseReleased(lease, 2));
  const releasedAt = clock.now();
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: 1_000 });
  clock.advance(releasedAt + 1_000 - clock.now());
  expect(authority.ask("b", IP, false).kind).toBe("slot");
});

it("hands its spacing over with the address: the new authority grants nothing before it", async () => {
  const { clock, owner, old, next } = twoAuthorities({ ...OPTIONS, ipDelayMs: 1_000 });
  const lease = old.ask("a", IP, false);
  old.release("a", IP, leaseReleased(lease, 2));
  clock.advance(1_000);
  const slot = old.ask("b", IP, false) as { kind: string; slotId: number };
  expect(slot.kind).toBe("slot");
  old.release("b", IP, { slotIds: [slot.slotId], leaseSlots: 0 });
  owner.current = "next";
  next.viewChanged(() => "old");
  next.ask("a", IP, false);
  await Promise.resolve();
  // Nothing in flight any more, but the old authority's last grant started at its release (here at
  // once; unreleased, a slack after the grant): the lease a, now alone, starts nothing before the delay since.
  expect(next.inFlight(IP)).toBe(0);
  expect(next.ask("a", IP, false)).toEqual({
    kind: "lease",
    leaseId: expect.any(Number),
    ttlMs: OPTIONS.leaseTtlMs,
    blockedForMs: 1_000,
    delayMs: 1_000,
  });
});

it("spaces every agent's starts by a Crawl-delay reported for the address, for a while after the last report", () => {
  const { clock, authority } = setUp(() => true, { ...OPTIONS, ipDelayMs: 100 });
  authority.crawlDelay("a", IP, 2_000);
  // A lease says how far apart its holder starts its requests.
  const lease = authority.ask("a", IP, false);
  expect(lease).toMatchObject({ kind: "lease", delayMs: 2_000 });
  authority.release("a", IP, leaseReleased(lease, 2));
  clock.advance(2_000);
  // Shared: the slots are granted the Crawl-delay (and the start slack) apart.
  expect(authority.ask("b", IP, false).kind).toBe("slot");
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: 2_000 + IP_START_SLACK_MS });
  // A shorter report does not shorten it; unreported for the memory's time, the IP delay is back.
  authority.crawlDelay("b", IP, 500);
  clock.advance(IP_CRAWL_DELAY_MEMORY_MS);
  expect(authority.ask("a", IP, false)).toMatchObject({ kind: "lease", delayMs: 100 });
});
