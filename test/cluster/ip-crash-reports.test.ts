import { expect, it } from "vitest";
import {
  IP_POLL_MS,
  IpAuthority,
  type IpAuthorityOptions,
  type IpHandOver,
} from "../../src/cluster/ip-authority.js";
import { IpCrashReports } from "../../src/cluster/ip-crash-reports.js";
import { IpLeases } from "../../src/cluster/ip-leases.js";
import { ManualClock } from "../support/manual-clock.js";
import { IP, leaseReleased, OPTIONS } from "./ip-authority-fixtures.js";

const BEFORE = ["a", "b", "c"];
const AFTER = ["b", "c"];
/** The id of a lease the crashed authority `a` granted (unknown to the others). */
const GONE_LEASE = 41;

/**
 * What agent `agent` says it holds at `IP`: `count` requests, lasting a slot's time (`leased`: a running
 * lease of the crashed authority's).
 */
function holding(agent: string, count: number, options: { blockedForMs?: number; leased?: boolean } = {}) {
  const state: IpHandOver = {
    held: new Map([[agent, count]]),
    untilMs: OPTIONS.slotTtlMs,
    startsFor: new Map([[agent, 0]]),
    blockedForMs: options.blockedForMs ?? 0,
    spacedForMs: 0,
  };
  return new Map([[IP, { state, leasedByGone: options.leased ?? false }]]);
}

/**
 * `b`, the authority of `IP` once `a` (its authority before) crashed, in a view of a, b and c; `crash()`
 * changes b's view to b and c.
 */
function afterCrash(options: IpAuthorityOptions = OPTIONS) {
  const clock = new ManualClock();
  const alive = new Set(BEFORE);
  const state = { owner: "a" };
  const authority = new IpAuthority(options, {
    clock,
    owns: () => state.owner === "b",
    isAlive: (id) => alive.has(id),
    takeOver: async () => undefined,
    random: () => 0,
  });
  const crash = (after: readonly string[] = AFTER) => {
    alive.delete("a");
    state.owner = "b";
    authority.viewChanged(() => "a", BEFORE, after);
  };
  return { clock, alive, authority, crash };
}

it("goes on at once where a live agent held the crashed authority's lease: nothing else ran there", () => {
  const { authority, crash } = afterCrash();
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  // Until c says what it holds, nothing is granted.
  expect(authority.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  authority.reportedHoldings("c", "a", holding("c", 2, { leased: true }), AFTER, true);
  // c's lease counts as the whole limit until c gives back what did not start (one request runs).
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  authority.release("c", IP, { slotIds: [], leaseSlots: 1, leaseId: GONE_LEASE });
  expect(authority.ask("c", IP, false).kind).toBe("slot");
  expect(authority.inFlight(IP)).toBe(2);
});

it("counts the crashed agent's own requests as the whole limit for a lease and a slot's life where nobody held its lease, on top of the others'", () => {
  const { clock, authority, crash } = afterCrash();
  const start = clock.now();
  crash();
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  authority.reportedHoldings("c", "a", holding("c", 1), AFTER, true);
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  expect(authority.inFlight(IP)).toBe(3);
  expect(authority.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
  // A gone agent only stalled may start requests there until its view learns it is gone.
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs - 1);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  clock.advance(1);
  expect(authority.ask("b", IP, false).kind).not.toBe("wait");
  // Before the grace's end (20 s here; ~67 s at the defaults, where the suspicion adds to it too).
  expect(clock.now() - start).toBeLessThan(OPTIONS.graceMs);
});

it("counts what a live agent holds of the grants of the address's authority before the crashed one", () => {
  // b handed the address to a (a joined), then a crashed: c's slot, granted by b, is still running.
  const clock = new ManualClock();
  const alive = new Set(BEFORE);
  const state = { owner: "b" };
  const b = new IpAuthority(OPTIONS, {
    clock,
    owns: () => state.owner === "b",
    isAlive: (id) => alive.has(id),
    takeOver: async () => undefined,
    random: () => 0,
  });
  const lease = b.ask("c", IP, false);
  b.ask("b", IP, false); // two users: slots from now on
  b.release("c", IP, leaseReleased(lease, 2));
  expect(b.ask("c", IP, false).kind).toBe("slot");
  state.owner = "a";
  b.viewChanged(() => undefined, AFTER, BEFORE);
  b.handOver(IP, "a");
  clock.advance(1_000);
  alive.delete("a");
  state.owner = "b";
  b.viewChanged(() => "a", BEFORE, AFTER);
  b.reportedHoldings("b", "a", new Map(), AFTER, true);
  b.reportedHoldings("c", "a", holding("c", 1), AFTER, true);
  expect(b.ask("b", IP, false).kind).toBe("wait");
  // c's slot, granted by b before the hand-over, counts: a's own and c's.
  expect(b.inFlight(IP)).toBe(3);
});

it("holds for the whole limit a lease and a slot's life where nobody reported anything: the crashed agent may have used it alone", () => {
  const { clock, authority, crash } = afterCrash();
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  authority.reportedHoldings("c", "a", new Map(), AFTER, true);
  expect(authority.ask("c", IP, false).kind).toBe("wait");
  expect(authority.inFlight(IP)).toBe(2);
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs - 1);
  expect(authority.ask("c", IP, false).kind).toBe("wait");
  clock.advance(1);
  expect(authority.ask("c", IP, false).kind).toBe("lease");
});

it("waits out the grace when a report is missing, made in another view, or its reporter is gone", () => {
  for (const variant of ["missing", "other view", "reporter gone"] as const) {
    const { clock, alive, authority, crash } = afterCrash();
    crash();
    authority.reportedHoldings("b", "a", new Map(), AFTER, true);
    if (variant === "other view") authority.reportedHoldings("c", "a", new Map(), ["c"], true);
    if (variant === "reporter gone") {
      authority.reportedHoldings("c", "a", new Map(), AFTER, true);
      alive.delete("c");
      // Its report came before it went: still not enough (what it held may run, and it cannot say).
      authority.reportedHoldings("b", "a", new Map(), AFTER, true);
    }
    if (variant !== "reporter gone") expect(authority.ask("c", IP, false).kind, variant).toBe("wait");
    clock.advance(OPTIONS.graceMs - 1);
    expect(authority.ask("b", IP, false).kind, variant).toBe("wait");
    clock.advance(1);
    expect(authority.ask("b", IP, false).kind, variant).toBe("lease");
  }
});

it("waits out the grace when an agent it does not know yet reports the crash: one that joined through the crashed agent may hold its grants", () => {
  const { clock, alive, authority, crash } = afterCrash();
  crash();
  // d joined through a, which granted it requests at IP; b has not heard of d's join yet.
  authority.reportedHoldings("d", "a", holding("d", 2), ["b", "c", "d"], true);
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  authority.reportedHoldings("c", "a", new Map(), AFTER, true);
  // Past the crashed agent's own requests' time (a lease and a slot's life), d's may still run.
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs);
  expect(authority.ask("c", IP, false).kind).toBe("wait");
  // Once d is in b's view, it is still no reporter b knew to wait for: the grace holds.
  alive.add("d");
  expect(authority.ask("c", IP, false).kind).toBe("wait");
  clock.advance(OPTIONS.graceMs - OPTIONS.leaseTtlMs - OPTIONS.slotTtlMs);
  expect(authority.ask("c", IP, false).kind).toBe("lease");
});

it("never mixes two reports of one reporter made in two views, sent at once", () => {
  const { authority, crash } = afterCrash();
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  // c's report in the view after the crash comes in two messages; one made in another view (c's view
  // changed again meanwhile) comes between them.
  authority.reportedHoldings("c", "a", holding("c", 2, { leased: true }), AFTER, false);
  authority.reportedHoldings("c", "a", holding("c", 1, { leased: true }), ["b", "c", "d"], true);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  authority.reportedHoldings("c", "a", new Map(), AFTER, true);
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
});

it("takes the reports that came before its own view changed, and the releases sent to it before it was the authority", () => {
  const { authority, crash } = afterCrash();
  // c's view changed first: its report, then its lease's unstarted request given back, reach b early.
  authority.reportedHoldings("c", "a", holding("c", 2, { leased: true }), AFTER, true);
  authority.release("c", IP, { slotIds: [], leaseSlots: 1, leaseId: GONE_LEASE });
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  expect(authority.ask("b", IP, false)).toMatchObject({ kind: "slot" });
  expect(authority.inFlight(IP)).toBe(2);
  expect(authority.ask("c", IP, false).kind).toBe("wait");
});

it("does not take a release that came before its sender's report off it: of requests the report does not count", () => {
  const { authority, crash } = afterCrash();
  authority.release("c", IP, { slotIds: [], leaseSlots: 1, leaseId: GONE_LEASE });
  authority.reportedHoldings("c", "a", holding("c", 2, { leased: true }), AFTER, true);
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  expect(authority.inFlight(IP)).toBe(2);
});

it("takes a release off a report only if it came after that report: a newer report counts what was granted since", () => {
  const { clock, authority, crash } = afterCrash();
  // c reported a gone, then gave its lease back early; a's crash was a suspicion, refuted, and a leased
  // the address to c again; a then crashed, and c reported again in the same view.
  authority.reportedHoldings("c", "a", holding("c", 2, { leased: true }), AFTER, true);
  authority.release("c", IP, { slotIds: [], leaseSlots: 2, leaseId: GONE_LEASE });
  clock.advance(100);
  authority.reportedHoldings("c", "a", holding("c", 2, { leased: true }), AFTER, true);
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  expect(authority.ask("b", IP, false).kind).toBe("wait");
  expect(authority.inFlight(IP)).toBe(2);
});

it("keeps the block a reporter knows of", () => {
  const { clock, authority, crash } = afterCrash();
  crash();
  authority.reportedHoldings("b", "a", new Map(), AFTER, true);
  authority.reportedHoldings("c", "a", holding("c", 0, { blockedForMs: 3_000 }), AFTER, true);
  clock.advance(OPTIONS.leaseTtlMs + OPTIONS.slotTtlMs);
  expect(authority.ask("c", IP, false).kind).toBe("lease");
  const { clock: clock2, authority: blocked, crash: crash2 } = afterCrash();
  crash2();
  blocked.reportedHoldings("b", "a", new Map(), AFTER, true);
  blocked.reportedHoldings("c", "a", holding("c", 2, { blockedForMs: 8_000, leased: true }), AFTER, true);
  blocked.release("c", IP, { slotIds: [], leaseSlots: 2, leaseId: GONE_LEASE });
  clock2.advance(OPTIONS.leaseTtlMs);
  expect(blocked.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: 3_000 });
});

it("a report counts only what its sender says of its own requests, and is forgotten when the gone agent comes back", () => {
  const alive = new Set(AFTER);
  const limits = { maxPerIp: 4, leaseTtlMs: 5_000, slotTtlMs: 10_000, ipDelayMs: 0 };
  const reports = new IpCrashReports(20_000, limits, (id) => alive.has(id));
  const lying: IpHandOver = {
    held: new Map([
      ["c", 1],
      ["b", 2],
    ]),
    untilMs: 1_000,
    blockedForMs: 0,
    spacedForMs: 0,
  };
  reports.reported("c", "a", new Map([[IP, { state: lying, leasedByGone: false }]]), AFTER, true, 0);
  reports.reported("b", "a", new Map(), AFTER, true, 0);
  const crashed = { gone: "a", atMs: 0, reporters: AFTER, view: new Set(AFTER), untilMs: 20_000 };
  const settled = reports.takeOverAt(IP, crashed, 400);
  expect(settled?.reported.held).toEqual(new Map([["c", 1]]));
  // Said 400 ms ago: 600 ms left.
  expect(settled?.reported.untilMs).toBe(600);
  expect(settled?.gone.held).toEqual(new Map([["a", 4]]));
  reports.cameBack(["a"]);
  expect(reports.takeOverAt(IP, crashed, 500)).toBeUndefined();
});

it("reports a running lease as the whole limit, and an ended one by the requests it still runs", () => {
  const clock = new ManualClock();
  const now = clock.now();
  const released: number[] = [];
  const leases = new IpLeases(2, {
    clock,
    authorityOf: () => "a",
    spacing: { raise: () => undefined },
    renew: async () => ({ kind: "revoked" }),
    release: (_ip, slots) => released.push(slots),
  });
  leases.take(IP, "a", now, {
    kind: "lease",
    leaseId: 1,
    ttlMs: 5_000,
    blockedForMs: 0,
    delayMs: 0,
  });
  leases.take("127.0.0.10", "a", now, {
    kind: "lease",
    leaseId: 2,
    ttlMs: 5_000,
    blockedForMs: 0,
    delayMs: 0,
  });
  const ended = leases.started("127.0.0.10", leases.usable("127.0.0.10", "a") as never);
  expect(leases.held()).toEqual(
    new Map([
      [IP, 2],
      ["127.0.0.10", 2],
    ]),
  );
  // The second address's authority changes: its lease ends, one request still runs.
  expect(leases.usable("127.0.0.10", "z")).toBeUndefined();
  expect(released).toEqual([1]);
  expect(leases.held()).toEqual(
    new Map([
      [IP, 2],
      ["127.0.0.10", 1],
    ]),
  );
  ended();
  expect(leases.held()).toEqual(new Map([[IP, 2]]));
  leases.close();
});

it("ends the leases of an authority found gone without giving back what did not start: the report says what runs", () => {
  const clock = new ManualClock();
  const now = clock.now();
  const released: { ip: string; slots: number; grantor: string }[] = [];
  const leases = new IpLeases(2, {
    clock,
    authorityOf: () => "b",
    spacing: { raise: () => undefined },
    renew: async () => ({ kind: "revoked" }),
    release: (ip, slots, grantor) => released.push({ ip, slots, grantor }),
  });
  const grant = {
    kind: "lease",
    leaseId: 1,
    ttlMs: 5_000,
    blockedForMs: 0,
    delayMs: 0,
  } as const;
  // The first lease's last renewal said the server pushed back: blocked 3 s more.
  leases.take(IP, "a", now, { ...grant, blockedForMs: 3_000 });
  leases.take("127.0.0.10", "a", now, grant);
  leases.take("127.0.0.11", "c", now, grant);
  const running = leases.started("127.0.0.10", leases.usable("127.0.0.10", "a") as never);
  expect(leases.endGrantedBy("a")).toEqual(
    new Map([
      [IP, now + 3_000],
      ["127.0.0.10", now],
    ]),
  );
  expect(released).toEqual([]);
  expect(leases.size).toBe(1);
  expect(leases.held()).toEqual(
    new Map([
      ["127.0.0.11", 2],
      ["127.0.0.10", 1],
    ]),
  );
  // The request under the ended lease ends: its own slot goes back (to the next authority: a is gone).
  running();
  expect(released).toEqual([{ ip: "127.0.0.10", slots: 1, grantor: "a" }]);
  expect(leases.held()).toEqual(new Map([["127.0.0.11", 2]]));
  leases.close();
});
