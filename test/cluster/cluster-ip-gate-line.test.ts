import { expect, it } from "vitest";
import { sleep, systemClock } from "../../src/clock.js";
import { ClusterIpGate } from "../../src/cluster/cluster-ip-gate.js";
import { IpAuthority } from "../../src/cluster/ip-authority.js";
import { answerIpRequest } from "../../src/cluster/ip-wire.js";
import type { IpRequest } from "../../src/transport/index.js";

/**
 * Agents' gates waiting in an address's line at its authority (real parts, in-process messages, the
 * real clock): a waiting agent asks once more, held, instead of every IP_POLL_MS, and gets the slot
 * freed for it in its turn.
 */

const IP = "127.0.0.9";
const MAX = 2;

/** The authority "auth" (not crawling) and the gates of `ids`, every message to it recorded. */
function setUp(ids: readonly string[]) {
  const authority = new IpAuthority(
    { maxPerIp: MAX, ipDelayMs: 0, leaseTtlMs: 5_000, slotTtlMs: 10_000, graceMs: 10_000 },
    { clock: systemClock, owns: () => true, isAlive: () => true, takeOver: async () => undefined },
  );
  // Another agent used the address alone and gave its lease back: it is shared from now on.
  const lease = authority.ask("x", IP, false) as { leaseId?: number };
  authority.release("x", IP, { slotIds: [], leaseSlots: MAX, leaseId: lease.leaseId });
  const sent: IpRequest[] = [];
  const gates = new Map(
    ids.map((id) => [
      id,
      new ClusterIpGate(
        id,
        { maxPerIp: MAX, ipDelayMs: 0 },
        {
          clock: systemClock,
          authorityOf: () => "auth",
          send: async (_to, request) => {
            sent.push(request);
            return answerIpRequest(authority, request);
          },
        },
      ),
    ]),
  );
  const gate = (id: string) => gates.get(id) as ClusterIpGate;
  const close = () => {
    for (const g of gates.values()) g.close();
    authority.close();
  };
  return { authority, sent, gate, close };
}

it("a waiting agent asks once more, held, and gets a freed slot in its turn: first come first served", async () => {
  const { authority, sent, gate, close } = setUp(["b", "c", "d"]);
  const b1 = await gate("b").acquire(IP);
  const b2 = await gate("b").acquire(IP);
  const order: string[] = [];
  const c = gate("c")
    .acquire(IP)
    .then((release) => {
      order.push("c");
      return release;
    });
  await sleep(systemClock, 20);
  const d = gate("d")
    .acquire(IP)
    .then((release) => {
      order.push("d");
      return release;
    });
  await sleep(systemClock, 280); // nearly three polls' time
  expect(authority.held).toBe(2);
  const fromC = () => sent.filter((r) => r.fromId === "c");
  // c asked, was told to wait, and asked once more, held: no poll meanwhile.
  expect(fromC().map((r) => r.asks.map((ask) => ask.holdMs))).toEqual([[0], [1_000]]);
  b1();
  const releaseC = await c;
  expect(order).toEqual(["c"]);
  expect(authority.inFlight(IP)).toBe(MAX);
  b2();
  const releaseD = await d;
  expect(order).toEqual(["c", "d"]);
  releaseC();
  releaseD();
  close();
});

it("an agent that stops waiting gives back the slot granted to its held ask, which goes to the next", async () => {
  const { authority, gate, close } = setUp(["b", "c", "d"]);
  const b1 = await gate("b").acquire(IP);
  const b2 = await gate("b").acquire(IP);
  const stop = new AbortController();
  const c = gate("c").acquire(IP, stop.signal);
  await sleep(systemClock, 20);
  expect(authority.held).toBe(1);
  stop.abort(new Error("stopped"));
  await expect(c).rejects.toThrow("stopped");
  const d = gate("d").acquire(IP);
  await sleep(systemClock, 20);
  // c's held ask is still first in the line: the slot b frees is granted to it, and c gives it back.
  b1();
  const releaseD = await d;
  expect(authority.inFlight(IP)).toBe(MAX);
  b2();
  releaseD();
  close();
});

it("an authority that stops answers the asks held there, so no acquire hangs on it", async () => {
  const { authority, gate, close } = setUp(["b", "c"]);
  const b1 = await gate("b").acquire(IP);
  const b2 = await gate("b").acquire(IP);
  const stop = new AbortController();
  const c = gate("c")
    .acquire(IP, stop.signal)
    .catch(() => "stopped");
  await sleep(systemClock, 20);
  expect(authority.held).toBe(1);
  authority.close();
  expect(authority.held).toBe(0);
  stop.abort();
  expect(await c).toBe("stopped");
  b1();
  b2();
  close();
});
