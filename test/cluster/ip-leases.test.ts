import { expect, it } from "vitest";
import { IpLeases } from "../../src/cluster/ip-leases.js";
import { ManualClock } from "../support/manual-clock.js";
import { IP } from "./ip-authority-fixtures.js";

/** Leases of 2 requests at once, their authority `a` unless `authority.current` says otherwise. */
function setUp() {
  const clock = new ManualClock();
  const authority = { current: "a" };
  const released: { slots: number; grantor: string; leaseId: number | undefined }[] = [];
  const leases = new IpLeases(2, {
    clock,
    authorityOf: () => authority.current,
    spacing: { raise: () => undefined },
    renew: async () => ({ kind: "revoked" }),
    release: (_ip, slots, grantor, leaseId) => released.push({ slots, grantor, leaseId }),
  });
  return { clock, authority, released, leases };
}

const GRANT = { kind: "lease", leaseId: 7, ttlMs: 5_000, blockedForMs: 0, delayMs: 0 } as const;

it("names its lease in each release of it: what never started at its end, then each request as it ends", () => {
  const { clock, released, leases } = setUp();
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(true);
  const running = leases.started(IP, leases.usable(IP, "a") as never);
  // Its authority is another now: the lease ends, the request not started is given back.
  expect(leases.usable(IP, "b")).toBeUndefined();
  expect(released).toEqual([{ slots: 1, grantor: "a", leaseId: 7 }]);
  running();
  expect(released).toEqual([
    { slots: 1, grantor: "a", leaseId: 7 },
    { slots: 1, grantor: "a", leaseId: 7 },
  ]);
});

it("never takes again a lease it ended: its authority, asked before the return came, answers it still", () => {
  const { clock, released, leases } = setUp();
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(true);
  // Renewed: the same lease, taken.
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(true);
  expect(leases.usable(IP, "b")).toBeUndefined();
  expect(released).toEqual([{ slots: 2, grantor: "a", leaseId: 7 }]);
  // The answer names the lease ended: its return, once there, ends it, so nothing starts under it.
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(false);
  expect(leases.usable(IP, "a")).toBeUndefined();
  // Another lease is taken.
  expect(leases.take(IP, "a", clock.now(), { ...GRANT, leaseId: 8 })).toBe(true);
  expect(leases.usable(IP, "a")).toBeDefined();
  leases.close();
});

it("remembers each lease it ended, though another authority's lease at the address ended since", () => {
  const { clock, leases } = setUp();
  leases.take(IP, "a", clock.now(), GRANT);
  // The address's authority is b for a moment: a's lease ends, b's is taken and ended in turn.
  expect(leases.usable(IP, "b")).toBeUndefined();
  expect(leases.take(IP, "b", clock.now(), { ...GRANT, leaseId: 3 })).toBe(true);
  expect(leases.usable(IP, "a")).toBeUndefined();
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(false);
  expect(leases.take(IP, "b", clock.now(), { ...GRANT, leaseId: 3 })).toBe(false);
  leases.close();
});

it("remembers a lease its authority was found gone with: back as the same life, it may answer it still", () => {
  const { clock, leases } = setUp();
  leases.take(IP, "a", clock.now(), GRANT);
  expect(leases.endGrantedBy("a")).toEqual(new Map([[IP, clock.now()]]));
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(false);
  leases.close();
});

it("forgets a lease it ended once its authority has heard of the return or let it lapse", () => {
  const { clock, leases } = setUp();
  leases.take(IP, "a", clock.now(), GRANT);
  expect(leases.usable(IP, "b")).toBeUndefined();
  clock.advance(2 * GRANT.ttlMs);
  // A lease's time after its end its authority ended it or let it lapse: nothing is kept of it here.
  expect(leases.take(IP, "a", clock.now(), GRANT)).toBe(true);
  leases.close();
});
