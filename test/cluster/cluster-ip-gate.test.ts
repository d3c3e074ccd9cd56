import { expect, it } from "vitest";
import { sleep, systemClock } from "../../src/clock.js";
import { ClusterIpGate } from "../../src/cluster/cluster-ip-gate.js";
import { IpAuthority } from "../../src/cluster/ip-authority.js";
import { IP_START_SLACK_MS } from "../../src/cluster/ip-grant.js";
import { answerIpRequest } from "../../src/cluster/ip-wire.js";
import type { IpRequest } from "../../src/transport/index.js";

const IP = "127.0.0.9";
const MAX = 2;

/**
 * Agents `ids`, each with its gate and its authority, on the real clock; `authorityOf` says which one
 * is the authority of every address. Messages go in-process (the transport has its own tests) and are
 * counted; requests are timed and the peak at once at the address is kept, as a server would. With
 * `tryFirst`, a request takes its slot at once when it can (`tryAcquire`, as an agent's requests do),
 * and waits for it otherwise.
 */
function cluster(
  ids: readonly string[],
  authorityOf: string,
  ipDelayMs = 0,
  tryFirst = false,
  latencyMs = 0,
) {
  const authorities = new Map<string, IpAuthority>();
  const sent: IpRequest[] = [];
  const gates = new Map<string, ClusterIpGate>();
  for (const id of ids) {
    authorities.set(
      id,
      new IpAuthority(
        { maxPerIp: MAX, ipDelayMs, leaseTtlMs: 1_000, slotTtlMs: 5_000, graceMs: 10_000 },
        {
          clock: systemClock,
          owns: () => id === authorityOf,
          isAlive: () => true,
          takeOver: async () => undefined,
        },
      ),
    );
    gates.set(
      id,
      new ClusterIpGate(
        id,
        { maxPerIp: MAX, ipDelayMs },
        {
          clock: systemClock,
          authorityOf: () => authorityOf,
          send: async (to, request) => {
            if (to !== id) sent.push(request);
            // Another agent's authority is `latencyMs` away: the answer comes back a round trip later.
            if (to !== id && latencyMs > 0) await sleep(systemClock, latencyMs);
            return answerIpRequest(authorities.get(to) as IpAuthority, request);
          },
        },
      ),
    );
  }
  let inFlight = 0;
  let peak = 0;
  const starts: { id: string; atMs: number }[] = [];
  const request = async (id: string, ms: number) => {
    const gate = gates.get(id) as ClusterIpGate;
    const release = (tryFirst ? gate.tryAcquire(IP) : undefined) ?? (await gate.acquire(IP));
    inFlight++;
    peak = Math.max(peak, inFlight);
    starts.push({ id, atMs: Date.now() });
    release.sent(); // written at once
    await sleep(systemClock, ms);
    inFlight--;
    release();
  };
  const close = () => {
    for (const gate of gates.values()) gate.close();
  };
  return { gates, sent, request, starts, peak: () => peak, close };
}

it("an address used by one agent costs one message however many requests it gets", async () => {
  const { sent, request, peak, close } = cluster(["a", "b"], "b");
  await Promise.all(Array.from({ length: 30 }, () => request("a", 5)));
  close();
  expect(peak()).toBe(MAX);
  // The first requests (one per local slot) ask together, in one message.
  expect(sent).toHaveLength(1);
  expect(sent[0]?.asks).toHaveLength(MAX);
});

it("agents sharing an address never have more than --max-per-ip requests at once there, together", async () => {
  const { request, peak, sent, starts, close } = cluster(["a", "b", "c"], "a");
  await Promise.all(["a", "b", "c"].flatMap((id) => Array.from({ length: 8 }, () => request(id, 15))));
  close();
  expect(starts).toHaveLength(24);
  expect(peak()).toBeLessThanOrEqual(MAX);
  expect(new Set(starts.map((s) => s.id)).size).toBe(3);
  // Shared, each request asks (in batches): more messages than addresses, fewer than requests twice over.
  expect(sent.length).toBeGreaterThan(1);
});

it("takes a slot at once only under a lease it holds, and then no more than --max-per-ip and the delay allow", async () => {
  const DELAY = 30;
  const { gates, sent, request, starts, peak, close } = cluster(["a", "b"], "b", DELAY, true);
  const gate = gates.get("a") as ClusterIpGate;
  // No lease yet: nothing taken, the request must ask.
  expect(gate.tryAcquire(IP)).toBeUndefined();
  await Promise.all(Array.from({ length: 12 }, () => request("a", 5)));
  expect(gate.leased).toBe(1);
  expect(sent).toHaveLength(1);
  // Under the lease, a request spaced past the delay is taken at once, and one within it is not.
  await sleep(systemClock, DELAY + 5);
  const now = gate.tryAcquire(IP);
  expect(now).toBeDefined();
  now?.sent();
  expect(gate.tryAcquire(IP)).toBeUndefined();
  now?.();
  close();
  expect(peak()).toBeLessThanOrEqual(MAX);
  const times = starts.map((start) => start.atMs);
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DELAY);
});

it("agents sharing an address and taking slots at once when they can stay within --max-per-ip and the delay, together", async () => {
  const DELAY = 30;
  const { request, peak, starts, close } = cluster(["a", "b", "c"], "a", DELAY, true);
  await Promise.all(["a", "b", "c"].flatMap((id) => Array.from({ length: 5 }, () => request(id, 10))));
  close();
  expect(starts).toHaveLength(15);
  expect(peak()).toBeLessThanOrEqual(MAX);
  const times = starts.map((start) => start.atMs).sort((x, y) => x - y);
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DELAY);
});

it("a server's push-back to one agent holds the other agents' requests to the address", async () => {
  const { gates, request, starts, close } = cluster(["a", "b"], "a");
  // Both agents use the address, so it is shared.
  await Promise.all([request("a", 5), request("b", 5)]);
  const refusedAtMs = Date.now();
  (gates.get("b") as ClusterIpGate).refused(IP, 600);
  await sleep(systemClock, 20); // the report reaches the authority
  await request("a", 1);
  close();
  const last = starts.at(-1) as { id: string; atMs: number };
  expect(last.id).toBe("a");
  expect(last.atMs - refusedAtMs).toBeGreaterThanOrEqual(590);
});

it("agents sharing an address start their requests there the IP delay apart, together", async () => {
  const DELAY = 40;
  const { request, starts, close } = cluster(["a", "b", "c"], "a", DELAY);
  await Promise.all(["a", "b", "c"].flatMap((id) => Array.from({ length: 4 }, () => request(id, 5))));
  close();
  expect(starts).toHaveLength(12);
  expect(new Set(starts.map((s) => s.id)).size).toBe(3);
  const times = starts.map((s) => s.atMs).sort((x, y) => x - y);
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DELAY);
});

it("a lease holder spaces its next start from when its request was written, not from its grant", async () => {
  const DELAY = 40;
  const { gates, close } = cluster(["a"], "a", DELAY);
  const gate = gates.get("a") as ClusterIpGate;
  const first = await gate.acquire(IP);
  let secondAtMs: number | undefined;
  const second = gate.acquire(IP).then((release) => {
    secondAtMs = Date.now();
    return release;
  });
  // The first request's connection takes 60 ms to open (a loaded machine): written then.
  await sleep(systemClock, 60);
  expect(secondAtMs).toBeUndefined();
  const sentAtMs = Date.now();
  first.sent();
  (await second).sent();
  first();
  (await second)();
  close();
  expect(gate.leased).toBe(1);
  expect((secondAtMs as number) - sentAtMs).toBeGreaterThanOrEqual(DELAY);
});

it.each([
  [40, "an IP delay: the authority spaced the next slot from this one's slack"],
  [0, "no IP delay: a server's push-back may have blocked the address since"],
])(
  "a slot's request not written within the authority's slack of its ask is not sent: given back, asked again (delay %i ms, %s)",
  async (delayMs) => {
    const { gates, request, close } = cluster(["a", "b"], "a", delayMs);
    // Both agents use the address, so it is shared: each request asks for a slot.
    await Promise.all([request("a", 5), request("b", 5)]);
    const gate = gates.get("b") as ClusterIpGate;
    const late = await gate.acquire(IP);
    // Its connection took longer than the slack to open (a stalled event loop): the authority may have
    // granted the next slot by now, counting this one started.
    await sleep(systemClock, IP_START_SLACK_MS + 20);
    expect(late.sent()).toBe(false);
    late();
    const next = await gate.acquire(IP);
    expect(next.sent()).toBe(true);
    next();
    close();
    expect(gate.leased).toBe(0);
  },
);

it("an agent whose round trip to the authority is over the slack still gets slots: its asks say a longer slack", async () => {
  const LATENCY = 150;
  const { request, sent, starts, close } = cluster(["a", "b"], "a", 40, false, LATENCY);
  // Both agents use the address, so it is shared: each of b's requests asks a for a slot, which comes
  // 150 ms after the ask, past the default slack (before, every one was given back: b never started).
  const timeout = sleep(systemClock, 10_000).then(() => "timed out");
  const done = Promise.all([request("a", 5), request("b", 5), request("b", 5), request("b", 5)]);
  expect(await Promise.race([done.then(() => "done"), timeout])).toBe("done");
  close();
  expect(starts.filter((start) => start.id === "b")).toHaveLength(3);
  const slacks = sent.flatMap((message) => message.asks.map((ask) => ask.startSlackMs));
  // The first ask knew no round trip yet; once one came back, the slack covers two of them. A timer
  // may fire up to 1 ms early by the wall clock (libuv rounds its loop time), so a trip measures 149.
  expect(slacks[0]).toBe(IP_START_SLACK_MS);
  expect(Math.max(...slacks)).toBeGreaterThanOrEqual(IP_START_SLACK_MS + 2 * (LATENCY - 1));
});

it("a Crawl-delay one agent reports for an address spaces the other agents' starts there", async () => {
  const CRAWL_DELAY = 150;
  const { gates, request, starts, close } = cluster(["a", "b"], "a");
  // Both agents use the address, so it is shared.
  await Promise.all([request("a", 5), request("b", 5)]);
  (gates.get("b") as ClusterIpGate).crawlDelay(IP, CRAWL_DELAY);
  await sleep(systemClock, 20); // the report reaches the authority
  const from = starts.length;
  await Promise.all([request("a", 1), request("a", 1), request("b", 1)]);
  close();
  const times = starts.slice(from).map((s) => s.atMs);
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
  expect(gaps).toHaveLength(2);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(CRAWL_DELAY);
});

it("reports what it holds at each address when an agent leaves its view, whoever granted it", async () => {
  const { gates, sent } = cluster(["a", "b"], "a");
  const gate = gates.get("b") as ClusterIpGate;
  const other = gates.get("a") as ClusterIpGate;
  // a uses the address too: b's requests go by slots, granted by a.
  const releaseOther = await other.acquire(IP);
  const release = await gate.acquire(IP);
  const holdings = gate.holdings("c", 5_000);
  expect(holdings.get(IP)?.state.held).toEqual(new Map([["b", 1]]));
  expect(holdings.get(IP)?.leasedByGone).toBe(false);
  release();
  releaseOther();
  expect(gate.holdings("c", 5_000).size).toBe(0);
  // Alone, b holds a's lease: another agent found gone, it is reported as the whole limit.
  const alone = await gate.acquire("127.0.0.10");
  expect(gate.holdings("c", 5_000).get("127.0.0.10")).toMatchObject({
    leasedByGone: false,
    state: { held: new Map([["b", MAX]]) },
  });
  // a found gone: its lease ends, reported as the one request running under it, and a lease of a's.
  const leaseSlotsSent = () =>
    sent.flatMap((request) => request.releases).reduce((sum, release) => sum + release.leaseSlots, 0);
  const before = leaseSlotsSent();
  expect(gate.holdings("a", 5_000).get("127.0.0.10")).toMatchObject({
    leasedByGone: true,
    state: { held: new Map([["b", 1]]) },
  });
  expect(gate.leased).toBe(0);
  alone();
  await sleep(systemClock, 100); // releases wait 50 ms for company
  // Only the request's own slot went back: the lease's unstarted part, which the report left out, did not.
  expect(leaseSlotsSent() - before).toBe(1);
  // Nothing runs there now, and the report still says a had nothing there.
  const lease = await gate.acquire("127.0.0.11");
  lease();
  expect(gate.holdings("a", 5_000).get("127.0.0.11")).toMatchObject({
    leasedByGone: true,
    state: { held: new Map([["b", 0]]) },
  });
  gate.close();
  other.close();
});

it("gives an ended lease back to the authority that granted it while that one is in the view, not to the new one", async () => {
  let authorityOf = "b";
  const releasedTo: string[] = [];
  const authority = new IpAuthority(
    { maxPerIp: MAX, ipDelayMs: 0, leaseTtlMs: 1_000, slotTtlMs: 5_000, graceMs: 10_000 },
    { clock: systemClock, owns: () => true, isAlive: () => true, takeOver: async () => undefined },
  );
  const gate = new ClusterIpGate(
    "a",
    { maxPerIp: MAX, ipDelayMs: 0 },
    {
      clock: systemClock,
      authorityOf: () => authorityOf,
      isMember: () => true,
      send: async (to, request) => {
        if (request.releases.some((release) => release.leaseSlots > 0)) releasedTo.push(to);
        return answerIpRequest(authority, request);
      },
    },
  );
  const first = await gate.acquire(IP);
  first.sent();
  first();
  expect(gate.leased).toBe(1);
  // The view changes: c is the address's authority now. The lease from b ends with the next request.
  authorityOf = "c";
  const second = await gate.acquire(IP);
  second.sent();
  second();
  await sleep(systemClock, 200);
  gate.close();
  // Its return went to b, after a's asks there, in order (c's own lease comes back to c later).
  expect(releasedTo[0]).toBe("b");
});
