import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/clock.js";
import { ErrorCode, isUbiError, UbiError } from "../../src/errors.js";
import {
  FailureDetector,
  type FailureDetectorOptions,
  type HeartbeatTarget,
  type MemberEntry,
  type RemoteHeartbeat,
} from "../../src/failure-detector/index.js";

const INTERVAL_MS = 1000;
const SUSPECT_AFTER_MS = 5000;

/** Detectors wired by address through memory; a "crashed" address drops everything to and from it. */
class FakeNetwork {
  readonly nodes = new Map<string, FailureDetector>();
  readonly down = new Set<string>();
  /** Addresses that take this long (ms) to handle a heartbeat. */
  readonly slow = new Map<string, number>();
  /** Heartbeats attempted per `from->to` address pair. */
  readonly sent = new Map<string, number>();
  /** `from->to` pairs whose requests are delivered but whose answers are lost on the way back. */
  readonly answersLost = new Set<string>();

  add(id: string, port: number, extra: Partial<FailureDetectorOptions> = {}): FailureDetector {
    const address = `127.0.0.1:${port}`;
    const detector = new FailureDetector(
      { self: { id, address }, heartbeatIntervalMs: INTERVAL_MS, suspectAfterMs: SUSPECT_AFTER_MS, ...extra },
      { clock: systemClock, sendHeartbeat: (target, heartbeat) => this.deliver(address, target, heartbeat) },
    );
    this.nodes.set(address, detector);
    return detector;
  }

  private async deliver(from: string, target: HeartbeatTarget, heartbeat: RemoteHeartbeat) {
    const pair = `${from}->${target.address}`;
    this.sent.set(pair, (this.sent.get(pair) ?? 0) + 1);
    await Promise.resolve(); // answers arrive asynchronously, as over a socket
    const delayMs = this.slow.get(target.address);
    if (delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const peer = this.nodes.get(target.address);
    if (peer === undefined || this.down.has(from) || this.down.has(target.address)) {
      throw new UbiError(ErrorCode.PeerUnreachable, `${target.address} unreachable`);
    }
    const answer = peer.onHeartbeat(heartbeat);
    if (this.answersLost.has(pair))
      throw new UbiError(ErrorCode.PeerUnreachable, `answer from ${target.address} lost`);
    return answer;
  }
}

const aliveIds = (detector: FailureDetector) => detector.alive().map((member) => member.id);
const statusOf = (detector: FailureDetector, id: string) =>
  detector.members().find((m) => m.id === id)?.status;

let network: FakeNetwork;
const started: FailureDetector[] = [];

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  network = new FakeNetwork();
});

afterEach(() => {
  for (const detector of started.splice(0)) detector.stop();
  vi.useRealTimers();
});

/** Starts `count` agents a0… that all join through a0, and lets gossip settle. */
async function cluster(count: number): Promise<FailureDetector[]> {
  const detectors = Array.from({ length: count }, (_, i) => network.add(`a${i}`, 9000 + i));
  for (const detector of detectors) {
    detector.start();
    started.push(detector);
  }
  for (const detector of detectors.slice(1)) await detector.join([detectors[0].self.address]);
  await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
  return detectors;
}

describe("FailureDetector", () => {
  it("lets a cluster formed through one seed converge to the full alive set", async () => {
    const detectors = await cluster(5);
    for (const detector of detectors) expect(aliveIds(detector)).toEqual(["a0", "a1", "a2", "a3", "a4"]);
  });

  it("has every live agent suspect a crashed one within suspectAfterMs + interval, and trust it again", async () => {
    const detectors = await cluster(4);
    const changes: string[][] = [];
    detectors[0].onChange((alive) => changes.push(alive.map((member) => member.id)));
    network.down.add(detectors[2].self.address);

    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS / 2);
    for (const detector of [detectors[0], detectors[1], detectors[3]])
      expect(aliveIds(detector)).toContain("a2");

    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS + INTERVAL_MS - SUSPECT_AFTER_MS / 2);
    for (const detector of [detectors[0], detectors[1], detectors[3]]) {
      expect(aliveIds(detector)).toEqual(["a0", "a1", "a3"]);
      expect(statusOf(detector, "a2")).toBe("suspected");
    }
    expect(changes).toEqual([["a0", "a1", "a3"]]);

    network.down.delete(detectors[2].self.address);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    for (const detector of detectors) expect(aliveIds(detector)).toEqual(["a0", "a1", "a2", "a3"]);
    expect(changes).toEqual([
      ["a0", "a1", "a3"],
      ["a0", "a1", "a2", "a3"],
    ]);
  });

  it("makes a newcomer that joined through one member known to all within a few rounds", async () => {
    const detectors = await cluster(4);
    const newcomer = network.add("late", 9100);
    newcomer.start();
    started.push(newcomer);
    await newcomer.join([detectors[3].self.address]);
    // It learned the whole set from its seed at once.
    expect(newcomer.members().map((member) => member.id)).toEqual(["a0", "a1", "a2", "a3", "late"]);

    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    for (const detector of [...detectors, newcomer]) {
      expect(aliveIds(detector)).toEqual(["a0", "a1", "a2", "a3", "late"]);
    }
  });

  it("refuses a newcomer whose id is alive at another address", async () => {
    const detectors = await cluster(3);
    const impostor = network.add("a1", 9200);
    let caught: unknown;
    try {
      await impostor.join([detectors[0].self.address]);
    } catch (error) {
      caught = error;
    }
    expect(isUbiError(caught, ErrorCode.IdConflict)).toBe(true);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    for (const detector of detectors) {
      expect(detector.members().find((member) => member.id === "a1")?.address).toBe("127.0.0.1:9001");
    }
  });

  it("rejects a join when no seed answers", async () => {
    const lonely = network.add("lonely", 9300);
    await expect(lonely.join(["127.0.0.1:9999"])).rejects.toMatchObject({ code: ErrorCode.PeerUnreachable });
  });

  it("spreads a graceful leave, and stale gossip does not resurrect the member", async () => {
    const detectors = await cluster(3);
    const before = detectors[2].heartbeat(); // a0, a1 and a2 all alive, as gossiped before the leave
    await detectors[2].leave();
    detectors[2].stop();
    network.down.add(detectors[2].self.address);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    for (const detector of detectors.slice(0, 2)) {
      expect(aliveIds(detector)).toEqual(["a0", "a1"]);
      expect(statusOf(detector, "a2")).toBe("left");
    }

    // a1 relays the stale table (a2 alive at the same incarnation) to a0: nothing changes.
    const changes: unknown[] = [];
    detectors[0].onChange((alive) => changes.push(alive));
    const a1 = detectors[1].self;
    detectors[0].onHeartbeat({
      from: a1,
      entries: [a1, ...before.entries.filter((entry) => entry.id !== "a1")],
    });
    expect(statusOf(detectors[0], "a2")).toBe("left");
    expect(changes).toEqual([]);
  });

  it("announces a leave to a peer even while a heartbeat to it is outstanding", async () => {
    const [a0, a1] = await cluster(2);
    network.slow.set(a0.self.address, INTERVAL_MS / 2);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS); // a1's round: its heartbeat to a0 is on its way
    // As an agent exits: it leaves, then stops and is gone.
    const exited = a1.leave().then(() => {
      a1.stop();
      network.down.add(a1.self.address);
    });
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    await exited;
    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS + INTERVAL_MS);
    expect(statusOf(a0, "a1")).toBe("left"); // not "suspected": a0 must not treat it as crashed
  });

  it("keeps announcing a leave to a live peer that missed it, and gives up on suspected ones", async () => {
    const [a0, a1, a2] = await cluster(3);
    network.down.add(a2.self.address); // a2 crashes: once suspected, a leave does not wait for it
    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS + INTERVAL_MS);
    network.down.add(a0.self.address); // a0 is unreachable for a moment as a1 leaves
    let exited = false;
    a1.leave().then(() => {
      a1.stop();
      network.down.add(a1.self.address);
      exited = true;
    });
    await vi.advanceTimersByTimeAsync(INTERVAL_MS / 2);
    network.down.delete(a0.self.address);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(exited).toBe(true); // told a2 once, a0 again once reachable, and went on
    expect(network.sent.get(`${a1.self.address}->${a2.self.address}`)).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS + INTERVAL_MS);
    expect(statusOf(a0, "a1")).toBe("left");
  });

  it("follows a restarted member to its new life and ignores gossip about the old one", async () => {
    const detectors = await cluster(3);
    const oldLife = detectors[2].self;
    detectors[2].stop();
    network.down.add(oldLife.address);
    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS + INTERVAL_MS);
    expect(aliveIds(detectors[0])).toEqual(["a0", "a1"]);

    const reborn = network.add("a2", 9050); // same id, new address, later incarnation (clock moved on)
    reborn.start();
    started.push(reborn);
    await reborn.join([detectors[0].self.address]);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(reborn.self.incarnation).toBeGreaterThan(oldLife.incarnation);
    for (const detector of detectors.slice(0, 2)) {
      expect(detector.members().find((member) => member.id === "a2")).toMatchObject({
        address: "127.0.0.1:9050",
        status: "alive",
        incarnation: reborn.self.incarnation,
      });
    }

    const a1 = detectors[1].self;
    detectors[0].onHeartbeat({ from: a1, entries: [a1, oldLife] });
    expect(detectors[0].members().find((member) => member.id === "a2")?.address).toBe("127.0.0.1:9050");
  });

  it("tells a life restarted before it was found gone so, before its view grows, and the others of its new life", async () => {
    const detectors = await cluster(3);
    const oldLife = detectors[2].self;
    const risen: { id: string; before: number; after: number }[] = [];
    for (const detector of detectors.slice(0, 2)) detector.onLives({ risen: (life) => risen.push(life) });
    detectors[2].stop();
    network.nodes.delete(oldLife.address);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS); // well within the suspicion: still alive to the others
    expect(aliveIds(detectors[0])).toContain("a2");

    const reborn = network.add("a2", 9002); // same id and address, a later incarnation
    const told: string[] = [];
    reborn.onChange((alive) => told.push(`view ${alive.map((member) => member.id).join(",")}`));
    reborn.onLives({ previousLife: () => told.push("previous life") });
    reborn.start();
    started.push(reborn);
    await reborn.join([detectors[0].self.address]);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(reborn.self.incarnation).toBeGreaterThan(oldLife.incarnation);
    // Told once, by its seed's answer, before the view that answer made.
    expect(told[0]).toBe("previous life");
    expect(told.filter((line) => line === "previous life")).toHaveLength(1);
    expect(told[1]).toBe("view a0,a2");
    // Each of the others heard of the new life once, from the old one's incarnation.
    const life = { id: "a2", before: oldLife.incarnation, after: reborn.self.incarnation };
    expect(risen).toEqual([life, life]);

    // A newcomer of its own (first life) is told nothing.
    const fresh = network.add("a9", 9009);
    let freshTold = false;
    fresh.onLives({ previousLife: () => (freshTold = true) });
    fresh.start();
    started.push(fresh);
    await fresh.join([detectors[0].self.address]);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(freshTold).toBe(false);
  });

  it("names a member's replaced life in its answers for a suspicion timeout, however it heard of the new one", async () => {
    const detectors = await cluster(2);
    const oldLife = detectors[1].self;
    const newLife = { ...oldLife, incarnation: oldLife.incarnation + 60_000 };
    // Heard first through another call (a hand-over, say), then its heartbeats come.
    detectors[0].heardFrom(newLife);
    const heartbeat = { from: newLife, entries: [newLife] };
    expect(detectors[0].onHeartbeat(heartbeat).previousIncarnation).toBe(oldLife.incarnation);
    // Its first answer may be lost or late: the next ones say it too, for a suspicion timeout.
    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS - INTERVAL_MS);
    expect(detectors[0].onHeartbeat(heartbeat).previousIncarnation).toBe(oldLife.incarnation);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(detectors[0].onHeartbeat(heartbeat).previousIncarnation).toBeUndefined();
  });

  it("keeps at most one heartbeat outstanding to a slow peer, and a late answer is not heard", async () => {
    const calls: AbortSignal[] = [];
    const detector = new FailureDetector(
      {
        self: { id: "me", address: "127.0.0.1:1" },
        heartbeatIntervalMs: INTERVAL_MS,
        suspectAfterMs: SUSPECT_AFTER_MS,
      },
      {
        clock: systemClock,
        sendHeartbeat: async (target, _heartbeat, signal) => {
          if (target.id === undefined) return { from: slow, entries: [slow] }; // the join answers at once
          calls.push(signal);
          // A peer that ignores the abort signal and answers after ten intervals.
          await new Promise((resolve) => setTimeout(resolve, 10 * INTERVAL_MS));
          return { from: slow, entries: [slow] };
        },
      },
    );
    const slow = {
      id: "slow",
      address: "127.0.0.1:2",
      capacity: 1,
      incarnation: 1,
      status: "alive" as const,
    };
    started.push(detector);
    await detector.join([slow.address]);
    detector.start();

    await vi.advanceTimersByTimeAsync(9 * INTERVAL_MS);
    expect(calls).toHaveLength(1);
    expect(calls[0].aborted).toBe(true); // the transport was told to give up after one interval
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    expect(calls).toHaveLength(2);
    expect(statusOf(detector, "slow")).toBe("suspected");
  });

  it("pulses every member between rounds, at most one heartbeat outstanding each, and not once stopped", async () => {
    const [a0, a1, a2] = await cluster(3);
    network.sent.clear();
    network.slow.set(a2.self.address, INTERVAL_MS / 2);
    a0.pulse();
    await vi.advanceTimersByTimeAsync(10); // a1 answered, a2 not yet
    a0.pulse(); // a2 gets no second heartbeat while the first is outstanding
    await vi.advanceTimersByTimeAsync(INTERVAL_MS / 4);
    expect(network.sent.get(`${a0.self.address}->${a1.self.address}`)).toBe(2);
    expect(network.sent.get(`${a0.self.address}->${a2.self.address}`)).toBe(1);
    a0.stop();
    network.sent.clear();
    a0.pulse();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS / 4);
    expect(network.sent.get(`${a0.self.address}->${a1.self.address}`)).toBeUndefined();
  });

  it("has one agent of each pair ask: the other answers, and asks itself once the requests stop", async () => {
    const [a0, a1, a2] = await cluster(3);
    network.sent.clear();
    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    const sent = (from: FailureDetector, to: FailureDetector) =>
      network.sent.get(`${from.self.address}->${to.self.address}`) ?? 0;
    // The smaller id asks every round; the larger one, asked, does not ask back.
    expect(sent(a0, a1)).toBeGreaterThanOrEqual(9);
    expect(sent(a0, a2)).toBeGreaterThanOrEqual(9);
    expect(sent(a1, a2)).toBeGreaterThanOrEqual(9);
    expect(sent(a1, a0)).toBe(0);
    expect(sent(a2, a0)).toBe(0);
    expect(sent(a2, a1)).toBe(0);
    for (const detector of [a0, a1, a2]) expect(aliveIds(detector)).toEqual(["a0", "a1", "a2"]);

    // a0 crashes: its requests stop, a1 and a2 ask it again and suspect it as soon as before.
    network.down.add(a0.self.address);
    network.sent.clear();
    await vi.advanceTimersByTimeAsync(SUSPECT_AFTER_MS + INTERVAL_MS);
    expect(sent(a1, a0)).toBeGreaterThan(0);
    expect(sent(a2, a0)).toBeGreaterThan(0);
    expect(statusOf(a1, "a0")).toBe("suspected");
    expect(statusOf(a2, "a0")).toBe("suspected");
    expect(aliveIds(a2)).toEqual(["a1", "a2"]);
  });

  it("has the answering agent ask too while its answers do not reach the asker", async () => {
    const [a0, a1] = await cluster(2);
    const sent = (from: FailureDetector, to: FailureDetector) =>
      network.sent.get(`${from.self.address}->${to.self.address}`) ?? 0;
    // a0's requests reach a1, but a1's answers never reach a0 (one direction of the pair is broken).
    network.answersLost.add(`${a0.self.address}->${a1.self.address}`);
    network.sent.clear();
    await vi.advanceTimersByTimeAsync(3 * SUSPECT_AFTER_MS);
    // a0's requests say so, and a1 asks a0 itself: a0 hears a1 through those and never suspects it.
    expect(sent(a1, a0)).toBeGreaterThanOrEqual(12);
    expect(statusOf(a0, "a1")).toBe("alive");
    expect(statusOf(a1, "a0")).toBe("alive");

    // Healed: a0's requests are answered again and a1 goes back to answering only.
    network.answersLost.clear();
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    network.sent.clear();
    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(sent(a0, a1)).toBeGreaterThanOrEqual(9);
    expect(sent(a1, a0)).toBe(0);
  });

  it("does not blame its peers for its own pause, yet finds a peer that crashed during it", async () => {
    const detectors = await cluster(3);
    const changes: string[][] = [];
    detectors[0].onChange((alive) => changes.push(alive.map((member) => member.id)));

    // Every process stalls for twice the suspicion timeout (time passes, no timer or socket is served).
    vi.setSystemTime(Date.now() + 2 * SUSPECT_AFTER_MS);
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    for (const detector of detectors) expect(aliveIds(detector)).toEqual(["a0", "a1", "a2"]);
    expect(changes).toEqual([]);

    // The same stall, with a2 crashed meanwhile: the round after the pause skips its sweep, the next
    // one (on time) suspects a2.
    network.down.add(detectors[2].self.address);
    vi.setSystemTime(Date.now() + 2 * SUSPECT_AFTER_MS);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(aliveIds(detectors[0])).toContain("a2");
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(aliveIds(detectors[0])).toEqual(["a0", "a1"]);
    expect(changes).toEqual([["a0", "a1"]]);
  });

  it("stops cleanly and twice, with no more heartbeats", async () => {
    const detectors = await cluster(2);
    detectors[0].stop();
    detectors[0].stop();
    const sentBefore = network.sent.get("127.0.0.1:9000->127.0.0.1:9001");
    await vi.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(network.sent.get("127.0.0.1:9000->127.0.0.1:9001")).toBe(sentBefore);
  });

  it("validates its options", () => {
    const deps = {
      clock: systemClock,
      sendHeartbeat: async (): Promise<RemoteHeartbeat> => ({ from: slowEntry(), entries: [] }),
    };
    const make = (options: Partial<FailureDetectorOptions>) => () =>
      new FailureDetector({ self: { id: "x", address: "127.0.0.1:1" }, ...options }, deps);
    for (const bad of [
      { heartbeatIntervalMs: 0 },
      { suspectAfterMs: 500, heartbeatIntervalMs: 1000 },
      { forgetAfterMs: 10, suspectAfterMs: 5000 },
      { suspectAfterMs: Number.NaN },
    ]) {
      expect(make(bad)).toThrowError(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
    }
    expect(make({}).call(undefined).self.incarnation).toBe(Date.now());
  });
});

function slowEntry(): MemberEntry {
  return { id: "s", address: "127.0.0.1:3", capacity: 1, incarnation: 1, status: "alive", lastHeardMs: 0 };
}
