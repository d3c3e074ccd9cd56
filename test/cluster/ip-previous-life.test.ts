import { expect, it } from "vitest";
import { IP_POLL_MS, IpAuthority, type IpHandOver } from "../../src/cluster/ip-authority.js";
import { ManualClock } from "../support/manual-clock.js";
import { IP, OPTIONS } from "./ip-authority-fixtures.js";

/** What the previous life granted may run this long after the restart (a lease and a slot's life). */
const PREVIOUS_LIFE_MS = OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs;
const FULL_VIEW = ["a", "b", "r"];

/** What agent `agent` says it holds at `IP`: `count` requests (`leased`: under a lease of r's previous life). */
function holding(agent: string, count: number, leased = false) {
  const state: IpHandOver = {
    held: new Map([[agent, count]]),
    untilMs: OPTIONS.slotTtlMs,
    startsFor: new Map([[agent, 0]]),
    blockedForMs: 0,
    spacedForMs: 0,
  };
  return new Map([[IP, { state, leasedByGone: leased }]]);
}

/**
 * `r`, the authority of `IP`, restarted before a and b found its previous life gone: told so by its
 * first answer, when its view holds itself alone; `grow(view)` then changes its view as it learns of
 * the others one by one.
 */
function restarted() {
  const clock = new ManualClock();
  let members = ["r"];
  const authority = new IpAuthority(OPTIONS, {
    clock,
    owns: () => true,
    isAlive: (id) => members.includes(id),
    takeOver: async () => undefined,
    random: () => 0,
  });
  authority.previousLifeMayRun("r", clock.now() + PREVIOUS_LIFE_MS);
  const grow = (view: string[]) => {
    const before = members;
    members = view;
    authority.viewChanged(() => undefined, before, view);
  };
  return { clock, authority, grow };
}

it("grants nothing at its addresses until every agent of its view said what it holds there, in that view", () => {
  const { clock, authority, grow } = restarted();
  expect(authority.ask("r", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  // b hears the new life first and reports before r's view holds it: kept, not taken for a stranger's.
  authority.reportedHoldings("b", "r", new Map(), FULL_VIEW, true);
  grow(["a", "r"]);
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  // a still runs two requests under the previous life's lease.
  authority.reportedHoldings("a", "r", holding("a", 2, true), FULL_VIEW, true);
  // Made in a view r does not have yet: not counted, so nothing goes on.
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  grow(FULL_VIEW);
  // a's two count; the previous life's own requests ended with its process and count nothing.
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  authority.release("a", IP, { slotIds: [], leaseSlots: 1, leaseId: 1 }); // the previous life's lease
  const grant = authority.ask("b", IP, false);
  expect(grant.kind).toBe("slot");
  // Its ids start past any its previous life (started earlier, at most 1,000 a ms) granted: a late
  // release of one of those ends none of this life's.
  expect(grant.kind === "slot" && grant.slotId).toBeGreaterThan(clock.now() * 1_000);
  expect(authority.inFlight(IP)).toBe(2);
});

it("goes on at once once every agent said it holds nothing there, its own previous life counted for nothing", () => {
  const { authority, grow } = restarted();
  grow(FULL_VIEW);
  authority.reportedHoldings("a", "r", new Map(), FULL_VIEW, true);
  expect(authority.ask("r", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  authority.reportedHoldings("b", "r", new Map(), FULL_VIEW, true);
  expect(authority.inFlight(IP)).toBe(0);
  expect(authority.ask("r", IP, false).kind).toBe("lease");
});

it("holds an address already in use when told of the previous life, and without reports until its grants ended", () => {
  const { clock, authority, grow } = restarted();
  grow(FULL_VIEW);
  clock.advance(PREVIOUS_LIFE_MS - 1);
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  clock.advance(1);
  expect(authority.ask("a", IP, false).kind).toBe("lease");
});

it("takes an address in use before it was told of its previous life over from the reports too", () => {
  const clock = new ManualClock();
  const authority = new IpAuthority(OPTIONS, {
    clock,
    owns: () => true,
    isAlive: (id) => FULL_VIEW.includes(id),
    takeOver: async () => undefined,
    random: () => 0,
  });
  authority.viewChanged(() => undefined, ["r"], FULL_VIEW);
  expect(authority.ask("b", IP, false).kind).toBe("lease");
  authority.previousLifeMayRun("r", clock.now() + PREVIOUS_LIFE_MS);
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  authority.reportedHoldings("a", "r", holding("a", 1), FULL_VIEW, true);
  authority.reportedHoldings("b", "r", holding("b", 2, true), FULL_VIEW, true);
  // a's one and b's two at least; the lease this life granted b counts too until b gives it back (b's
  // report ended every lease of r's it held): slower, never faster.
  expect(authority.inFlight(IP)).toBeGreaterThanOrEqual(3);
  expect(authority.ask("a", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
});
