import { expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { validateIpReply, validateIpRequest } from "../../src/transport/validate.js";
import { FakeHandlers, failure, startServer } from "./helpers.js";

const REQUEST = {
  fromId: "agent-a",
  releases: [
    { ip: "127.0.0.9", slotIds: [3, 4], leaseSlots: 0 },
    { ip: "127.0.0.9", slotIds: [], leaseSlots: 2, leaseId: 9 },
  ],
  refusals: [{ ip: "::1", retryAfterMs: 2_000, hasRetryAfter: true }],
  asks: [
    { ip: "127.0.0.9", renew: false, holdMs: 1_000, startSlackMs: 250 },
    { ip: "127.0.0.10", renew: true, holdMs: 0, startSlackMs: 0 },
  ],
  takeOver: ["127.0.0.11"],
  crawlDelays: [{ ip: "127.0.0.9", delayMs: 10_000 }],
  handedOff: [
    {
      ip: "127.0.0.12",
      state: {
        held: [{ agentId: "agent-c", count: 2, startsForMs: 1_500, hasStartsFor: true }],
        untilMs: 8_000,
        blockedForMs: 0,
        spacedForMs: 20,
        holdForMs: 0,
      },
    },
  ],
  leaving: true,
  view: ["agent-a", "agent-c"],
  handedBack: [
    {
      ip: "127.0.0.13",
      state: {
        held: [{ agentId: "agent-d", count: 1, startsForMs: 0, hasStartsFor: false }],
        untilMs: 9_000,
        blockedForMs: 2_000,
        spacedForMs: 0,
        holdForMs: 0,
      },
    },
  ],
};

/** What an agent holds at the addresses of an agent gone from its view. */
const REPORT = {
  fromId: "agent-b",
  releases: [],
  refusals: [],
  asks: [],
  takeOver: [],
  crawlDelays: [],
  handedOff: [],
  handedBack: [],
  leaving: false,
  view: ["agent-b", "agent-c"],
  goneAuthority: "agent-a",
  holdings: [
    {
      ip: "127.0.0.13",
      state: {
        held: [{ agentId: "agent-b", count: 2, startsForMs: 0, hasStartsFor: true }],
        untilMs: 62_000,
        blockedForMs: 1_000,
        spacedForMs: 0,
        holdForMs: 0,
      },
      leasedByGone: true,
    },
  ],
  holdingsLast: true,
};

function badMessage(check: () => unknown): boolean {
  try {
    check();
  } catch (error) {
    return isUbiError(error, ErrorCode.BadMessage);
  }
  return false;
}

it("carries releases, refusals and asks to the authority over gRPC, and its grants back", async () => {
  const handlers = new FakeHandlers();
  const { client } = await startServer(handlers);
  const reply = await client.ipGrants(REQUEST);
  expect(handlers.calls.ipGrants).toEqual([REQUEST]);
  expect(reply.grants.map((grant) => [grant.kind, grant.slotId])).toEqual([
    ["IP_GRANT_SLOT", 1],
    ["IP_GRANT_SLOT", 2],
  ]);
});

it("carries what an agent holds at a gone agent's addresses over gRPC", async () => {
  const handlers = new FakeHandlers();
  const { client } = await startServer(handlers);
  await client.ipGrants(REPORT);
  expect(handlers.calls.ipGrants).toEqual([REPORT]);
});

it("refuses a malformed request as BadMessage before the handler sees it", async () => {
  const handlers = new FakeHandlers();
  const { client } = await startServer(handlers);
  const bad = { ...REQUEST, asks: [{ ip: "127.0.0.1\r\nx", renew: false, holdMs: 0, startSlackMs: 0 }] };
  expect((await failure(client.ipGrants(bad))).code).toBe(ErrorCode.BadMessage);
  expect(handlers.calls.ipGrants).toHaveLength(0);
});

it("validates addresses, counts and grant kinds", () => {
  expect(validateIpRequest(REQUEST)).toEqual(REQUEST);
  const many = Array.from({ length: 1_001 }, () => ({ ip: "127.0.0.9", renew: false }));
  for (const bad of [
    { ...REQUEST, fromId: "a b" },
    { ...REQUEST, asks: many },
    { ...REQUEST, asks: [{ ip: "host.test", renew: false }] },
    { ...REQUEST, asks: [{ ip: "1".repeat(46), renew: false }] },
    { ...REQUEST, asks: [{ ip: "127.0.0.9", renew: false, holdMs: -1 }] },
    { ...REQUEST, asks: [{ ip: "127.0.0.9", renew: false, holdMs: 0, startSlackMs: 1.5 }] },
    { ...REQUEST, releases: [{ ip: "127.0.0.9", slotIds: [-1], leaseSlots: 0 }] },
    { ...REQUEST, releases: [{ ip: "127.0.0.9", slotIds: [1], leaseSlots: 0, agentId: "a b" }] },
    { ...REQUEST, releases: [{ ip: "127.0.0.9", slotIds: [], leaseSlots: 2, leaseId: 1.5 }] },
    { ...REQUEST, handedBack: [{ ip: "host.test", state: REQUEST.handedBack[0]?.state }] },
    { ...REQUEST, refusals: [{ ip: "127.0.0.9", retryAfterMs: 1, hasRetryAfter: "yes" }] },
  ]) {
    expect(badMessage(() => validateIpRequest(bad))).toBe(true);
  }
  const grant = {
    kind: "IP_GRANT_LEASE",
    slotId: 0,
    ttlMs: 5_000,
    waitMs: 0,
    blockedForMs: 0,
    delayMs: 3_000,
    heldMs: 0,
    startSlackMs: 0,
    leaseId: 7,
  };
  expect(validateIpReply({ grants: [grant] })).toEqual({ grants: [grant], handedOver: [] });
  // An authority that predates lease ids names none: read as 0.
  const { leaseId: _named, ...unnamed } = grant;
  expect(validateIpReply({ grants: [unnamed] }).grants[0]?.leaseId).toBe(0);
  expect(badMessage(() => validateIpReply({ grants: [{ ...grant, leaseId: -1 }] }))).toBe(true);
  // An authority that predates the start slack says none: read as 0 (the default).
  const { startSlackMs: _said, ...older } = grant;
  expect(validateIpReply({ grants: [older] }).grants[0]?.startSlackMs).toBe(0);
  expect(badMessage(() => validateIpReply({ grants: [{ ...grant, startSlackMs: -1 }] }))).toBe(true);
  const handOver = {
    held: [{ agentId: "agent-b", count: 2, startsForMs: 0, hasStartsFor: false }],
    untilMs: 4_000,
    blockedForMs: 0,
    spacedForMs: 300,
    holdForMs: 0,
  };
  expect(validateIpReply({ grants: [], handedOver: [handOver] })).toEqual({
    grants: [],
    handedOver: [handOver],
  });
  expect(
    badMessage(() =>
      validateIpReply({ grants: [], handedOver: [{ ...handOver, held: [{ agentId: "a b", count: 1 }] }] }),
    ),
  ).toBe(true);
  expect(
    badMessage(() => validateIpReply({ grants: [], handedOver: [{ ...handOver, spacedForMs: -1 }] })),
  ).toBe(true);
  expect(badMessage(() => validateIpRequest({ ...REQUEST, takeOver: ["not an address"] }))).toBe(true);
  const handOff = REQUEST.handedOff[0] as (typeof REQUEST.handedOff)[number];
  for (const bad of [
    [{ ...handOff, ip: "host.test" }],
    [{ ...handOff, state: { ...handOff.state, untilMs: -1 } }],
    [{ ...handOff, state: { ...handOff.state, held: [{ agentId: "agent-c", count: 1, startsForMs: -5 }] } }],
    Array.from({ length: 1_001 }, () => handOff),
  ]) {
    expect(badMessage(() => validateIpRequest({ ...REQUEST, handedOff: bad }))).toBe(true);
  }
  expect(badMessage(() => validateIpRequest({ ...REQUEST, leaving: "yes" }))).toBe(true);
  expect(badMessage(() => validateIpRequest({ ...REPORT, goneAuthority: "a b" }))).toBe(true);
  expect(badMessage(() => validateIpRequest({ ...REPORT, holdingsLast: 1 }))).toBe(true);
  const holding = REPORT.holdings[0] as (typeof REPORT.holdings)[number];
  for (const bad of [[{ ...holding, ip: "" }], Array.from({ length: 1_001 }, () => holding)]) {
    expect(badMessage(() => validateIpRequest({ ...REPORT, holdings: bad }))).toBe(true);
  }
  expect(badMessage(() => validateIpRequest({ ...REQUEST, view: ["a b"] }))).toBe(true);
  expect(
    badMessage(() => validateIpRequest({ ...REQUEST, crawlDelays: [{ ip: "127.0.0.9", delayMs: -1 }] })),
  ).toBe(true);
  expect(
    badMessage(() => validateIpReply({ grants: [{ ...grant, kind: "IP_GRANT_KIND_UNSPECIFIED" }] })),
  ).toBe(true);
});
