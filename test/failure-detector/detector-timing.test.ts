import { describe, expect, it } from "vitest";
import type { Clock, TimerHandle } from "../../src/clock.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import {
  FailureDetector,
  type FailureDetectorOptions,
  type GossipEntry,
  type HeartbeatTarget,
  type RemoteHeartbeat,
} from "../../src/failure-detector/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * The timing rules of the FailureDetector, one at a time, on a manual clock: which member of a pair
 * asks, what a request says about the last one, when a late round skips its sweep, and whom a leave
 * tells again until when. Interval 1000 ms, suspicion after 5000 ms unless a test says otherwise.
 */

/**
 * Timers of a {@link ManualClock}, and a time that can jump ahead without them (`pause`): the process
 * stalled, so the round due next runs late by the pause.
 */
class StallingClock implements Clock {
  readonly timers = new ManualClock();
  private stalledMs = 0;

  now(): number {
    return this.timers.now() + this.stalledMs;
  }
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return this.timers.setTimeout(callback, delayMs);
  }
  clearTimeout(handle: TimerHandle): void {
    this.timers.clearTimeout(handle);
  }
  /** The process stalls for `ms`: time moves on, and the timers due meanwhile run late. */
  pause(ms: number): void {
    this.stalledMs += ms;
  }
}

/** How a peer treats a heartbeat: answers at once, refuses, answers after some ms, or never. */
type Behaviour = "answer" | "fail" | "never" | { readonly afterMs: number };

const SELF = { id: "m", address: "127.0.0.1:1" };
const entry = (id: string): GossipEntry => ({
  id,
  address: `127.0.0.1:${1000 + id.charCodeAt(0)}`,
  capacity: 1,
  incarnation: 7,
  status: "alive",
});

/** Lets every promise continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(options: Partial<FailureDetectorOptions> = {}) {
  const clock = new StallingClock();
  const behaviour = new Map<string, Behaviour>();
  /** Requests sent, in order: when (detector time), to whom, what they said. */
  const sent: { at: number; to: string; unanswered: boolean | undefined; leaving: boolean }[] = [];
  /** The abort signal of each request, in the order of `sent`. */
  const signals: AbortSignal[] = [];
  const send = (target: HeartbeatTarget, request: RemoteHeartbeat, signal: AbortSignal) => {
    const to = target.id ?? target.address;
    signals.push(signal);
    sent.push({
      at: clock.now(),
      to,
      unanswered: request.unanswered,
      leaving: request.from.status === "left",
    });
    const answer: RemoteHeartbeat = {
      from: target.id === undefined ? entry("s") : entry(target.id),
      entries: [],
    };
    const how = behaviour.get(to) ?? "answer";
    if (how === "answer") return Promise.resolve(answer);
    if (how === "fail") return Promise.reject(new UbiError(ErrorCode.PeerUnreachable, `${to} down`));
    return new Promise<RemoteHeartbeat>((resolve, reject) => {
      if (how === "never") {
        signal.addEventListener("abort", () => reject(signal.reason));
        return;
      }
      // A slow peer that ignores the abort and answers anyway.
      clock.setTimeout(() => resolve(answer), how.afterMs);
    });
  };
  const fd = new FailureDetector(
    { self: SELF, heartbeatIntervalMs: 1000, suspectAfterMs: 5000, ...options },
    { clock, sendHeartbeat: send },
  );
  /** Moves the timers on by `ms`, one due time after another, letting promises settle in between. */
  const advance = async (ms: number) => {
    const end = clock.timers.now() + ms;
    await settle();
    for (;;) {
      const next = clock.timers.pendingDelays[0];
      const left = end - clock.timers.now();
      if (next === undefined || next > left) {
        clock.timers.advance(left);
        await settle();
        return;
      }
      clock.timers.advance(next);
      await settle();
    }
  };
  const t0 = clock.now();
  /** Requests sent in [fromMs, toMs) after t0, as "ms:to". */
  const sentBetween = (fromMs: number, toMs: number) =>
    sent.filter((s) => s.at >= t0 + fromMs && s.at < t0 + toMs).map((s) => `${s.at - t0}:${s.to}`);
  const statusOf = (id: string) => fd.members().find((m) => m.id === id)?.status;
  return { fd, clock, behaviour, sent, signals, advance, t0, sentBetween, statusOf };
}

describe("FailureDetector: which member of a pair asks", () => {
  it("does not ask a smaller id whose last request is at most 1.5 intervals old, and asks it after", async () => {
    const { fd, advance, sentBetween } = setup();
    fd.onHeartbeat({ from: entry("a"), entries: [] }); // a < m: a asks
    fd.onHeartbeat({ from: entry("z"), entries: [] }); // z > m: it should not, but it asks too
    fd.start();
    await advance(500);
    fd.onHeartbeat({ from: entry("a"), entries: [] }); // at 500
    await advance(2_600);
    // Rounds at 0, 1000, 2000 (a asked 1500 ago: still recent), 3000 (2500 ago: asked).
    expect(sentBetween(0, 3_100)).toEqual(["0:z", "1000:z", "2000:z", "3000:a", "3000:z"]);
    fd.stop();
  });

  it("asks a smaller id whose last request is 1.5 intervals and 1 ms old", async () => {
    const { fd, advance, sentBetween } = setup();
    fd.heardFrom(entry("a"));
    await advance(499);
    fd.onHeartbeat({ from: entry("a"), entries: [] }); // at 499
    await advance(501);
    fd.start(); // rounds at 1000, 2000, …
    await advance(1_100);
    expect(sentBetween(0, 2_100)).toEqual(["2000:a"]); // 1501 ms after a's request
    fd.stop();
  });

  it("asks a smaller id at once when its request says our answers do not reach it", async () => {
    const { fd, advance, sentBetween } = setup();
    fd.onHeartbeat({ from: entry("a"), entries: [] });
    fd.start();
    await advance(900);
    fd.onHeartbeat({ from: entry("a"), entries: [], unanswered: true });
    await advance(1_000);
    expect(sentBetween(0, 1_900)).toEqual(["1000:a"]);
    // A request that got its answer: a asks again, and is not asked back.
    fd.onHeartbeat({ from: entry("a"), entries: [] });
    await advance(1_000);
    expect(sentBetween(1_900, 2_900)).toEqual([]);
    fd.stop();
  });
});

describe("FailureDetector: what a request says about the last one", () => {
  it("says unanswered after a heartbeat that failed, and no more once one is answered", async () => {
    const { fd, advance, behaviour, sent } = setup();
    fd.heardFrom(entry("z"));
    behaviour.set("z", "fail");
    fd.start(); // 0: fails
    await advance(1_000); // 1000: fails
    behaviour.set("z", "answer");
    await advance(1_000); // 2000: answered
    await advance(1_000); // 3000
    expect(sent.map((s) => s.unanswered)).toEqual([false, true, true, false]);
    fd.stop();
  });

  it("says unanswered after an answer later than one interval, which is not heard either", async () => {
    const { fd, advance, behaviour, sentBetween, sent, statusOf } = setup();
    fd.learnOf(entry("z")); // suspected until it answers
    behaviour.set("z", { afterMs: 1_001 });
    fd.start(); // 0: answered at 1001, after its timeout (the round at 1000 skips z: still outstanding)
    await advance(1_500);
    expect(statusOf("z")).toBe("suspected");
    behaviour.set("z", { afterMs: 999 });
    await advance(1_600); // 2000: answered at 2999, in time; 3000
    expect(statusOf("z")).toBe("alive");
    expect(sentBetween(0, 3_100)).toEqual(["0:z", "2000:z", "3000:z"]);
    expect(sent.map((s) => s.unanswered)).toEqual([false, true, false]);
    fd.stop();
  });

  it("clears the timeout of every answered heartbeat", async () => {
    const { fd, advance, clock } = setup();
    fd.heardFrom(entry("x"));
    fd.heardFrom(entry("z"));
    fd.start();
    await advance(0);
    expect(clock.timers.pendingDelays).toEqual([1_000]); // the next round only
    fd.stop();
  });

  it("does not note as unanswered a heartbeat that failed while stopped", async () => {
    const { fd, advance, behaviour, sent } = setup();
    fd.heardFrom(entry("z"));
    behaviour.set("z", "fail");
    await fd.leave(); // not started: told once, failed
    await advance(0);
    fd.start();
    await advance(0);
    expect(sent.map((s) => `${s.unanswered}:${s.leaving}`)).toEqual(["false:true", "false:true"]);
    fd.stop();
  });

  it("forgets that a member left a heartbeat unanswered once it forgets the member", async () => {
    const { fd, advance, behaviour, sent, statusOf } = setup({ forgetAfterMs: 5_000 });
    fd.heardFrom(entry("z"));
    behaviour.set("z", "fail");
    fd.start();
    await advance(5_000);
    expect(statusOf("z")).toBe("suspected");
    await advance(1_000); // 6000: forgotten
    expect(statusOf("z")).toBeUndefined();
    behaviour.set("z", "answer");
    fd.heardFrom(entry("z")); // back, in a new conversation
    await advance(1_000);
    expect(sent.at(-1)).toMatchObject({ to: "z", unanswered: false });
    expect(sent.slice(0, -1).every((s) => s.unanswered === (s !== sent[0]))).toBe(true);
    fd.stop();
  });

  it("forgets when a member last asked once it forgets the member, so it is asked once named again", async () => {
    const { fd, advance, behaviour, sentBetween, statusOf } = setup({ forgetAfterMs: 5_000 });
    const current = { ...entry("a"), incarnation: 8 };
    fd.heardFrom(current);
    behaviour.set("a", "fail"); // this life crashed
    fd.start();
    await advance(5_900); // suspected at 5000
    // An older life, still running elsewhere, asks: taken as a request, though it teaches nothing.
    fd.onHeartbeat({ from: { ...entry("a"), address: "127.0.0.1:2222" }, entries: [] });
    await advance(100); // 6000: forgotten
    expect(statusOf("a")).toBeUndefined();
    await advance(500);
    fd.learnOf({ ...current, status: "suspected" }); // named again by another member
    await advance(600);
    expect(sentBetween(6_100, 7_100)).toEqual(["7000:a"]);
    fd.stop();
  });

  it("gives a seed the announce timeout (3 s), not one round's", async () => {
    const { fd, advance, behaviour, statusOf } = setup();
    behaviour.set("127.0.0.1:9", { afterMs: 2_999 });
    const joined = fd.join(["127.0.0.1:9"]);
    await advance(3_000);
    await expect(joined).resolves.toBeUndefined();
    expect(statusOf("s")).toBe("alive");

    const late = setup();
    late.behaviour.set("127.0.0.1:9", { afterMs: 3_001 });
    const failed = late.fd.join(["127.0.0.1:9"]).catch((error: unknown) => error);
    await late.advance(3_100);
    const error = (await failed) as UbiError;
    expect(error).toMatchObject({ code: ErrorCode.PeerUnreachable });
    expect((error.cause as Error).message).toBe("heartbeat to 127.0.0.1:9 timed out");
    expect(late.statusOf("s")).toBeUndefined();
  });
});

describe("FailureDetector: a round late by more than halfway to suspicion", () => {
  /** z heard at 0 and silent since; rounds at 0, 1000, 2000 on time. */
  async function silentPeer() {
    const run = setup();
    run.fd.heardFrom(entry("z"));
    run.behaviour.set("z", "fail");
    run.fd.start();
    await run.advance(2_500);
    return run;
  }

  it("skips the sweep of a round 3001 ms after the last one; the next round sweeps", async () => {
    const { fd, clock, advance, statusOf, sentBetween } = await silentPeer();
    clock.pause(2_001); // the round due at 3000 runs at 5001
    await advance(1_000);
    expect(statusOf("z")).toBe("alive");
    expect(sentBetween(5_001, 5_002)).toEqual(["5001:z"]); // it still heartbeats
    await advance(1_000); // 6001, on time
    expect(statusOf("z")).toBe("suspected");
    fd.stop();
  });

  it("sweeps in a round exactly 3000 ms after the last one", async () => {
    const { fd, clock, advance, statusOf } = await silentPeer();
    clock.pause(2_000); // the round due at 3000 runs at 5000: z silent for 5000
    await advance(1_000);
    expect(statusOf("z")).toBe("suspected");
    fd.stop();
  });

  it("never skips two sweeps in a row", async () => {
    const { fd, clock, advance, statusOf } = await silentPeer();
    clock.pause(2_001);
    await advance(1_000); // 5001: late, skipped
    expect(statusOf("z")).toBe("alive");
    clock.pause(5_000);
    await advance(1_000); // 11001: late again, sweeps
    expect(statusOf("z")).toBe("suspected");
    fd.stop();
  });

  it("does not take a restart after a long stop for a pause", async () => {
    const { fd, clock, advance, statusOf } = await silentPeer();
    fd.stop();
    clock.pause(10_000);
    fd.start(); // the first round after the restart sweeps
    await advance(0);
    expect(statusOf("z")).toBe("suspected");
    fd.stop();
  });
});

describe("FailureDetector: a graceful leave", () => {
  it("tells every other member not left, once each when they answer, without waiting", async () => {
    const { fd, advance, behaviour, sent } = setup();
    fd.heardFrom(entry("x"));
    fd.learnOf(entry("y")); // suspected
    fd.learnOf({ ...entry("w"), status: "left" });
    behaviour.set("y", "fail"); // stays suspected
    fd.start();
    await advance(0);
    sent.length = 0;
    const calls: string[][] = [];
    fd.onChange((alive) => calls.push(alive.map((m) => m.id)));
    let done = false;
    const leaving = fd.leave().then(() => {
      done = true;
    });
    await settle();
    expect(done).toBe(true);
    await leaving;
    expect(sent.map((s) => `${s.to}:${s.leaving}`)).toEqual(["x:true", "y:true"]);
    expect(calls).toEqual([["x"]]);
    await fd.leave(); // told again, but the alive set did not change
    expect(calls).toHaveLength(1);
    fd.stop();
  });

  it("tells a live member that did not answer again every interval until the suspicion timeout, a suspected one once", async () => {
    const { fd, advance, behaviour, sent, clock, t0 } = setup();
    fd.heardFrom(entry("z"));
    fd.learnOf(entry("y"));
    // Their round heartbeats never end (the transport ignores the abort): no round asks them again.
    behaviour.set("z", { afterMs: 1e9 });
    behaviour.set("y", { afterMs: 1e9 });
    fd.start();
    await advance(0);
    sent.length = 0;
    behaviour.set("z", "fail");
    behaviour.set("y", "fail");
    let doneAt: number | undefined;
    void fd.leave().then(() => {
      doneAt = clock.now() - t0;
    });
    await advance(10_000);
    expect(sent.map((s) => `${s.at - t0}:${s.to}`)).toEqual([
      "0:y",
      "0:z",
      "1000:z",
      "2000:z",
      "3000:z",
      "4000:z", // the next would be 5000: the suspicion timeout, when z takes this agent for crashed
    ]);
    expect(doneAt).toBe(4_000);
    fd.stop();
  });

  it("tells each member once when the detector is not running", async () => {
    const { fd, behaviour, sent } = setup();
    fd.heardFrom(entry("z"));
    behaviour.set("z", "fail");
    let done = false;
    void fd.leave().then(() => {
      done = true;
    });
    await settle();
    expect(done).toBe(true);
    expect(sent.map((s) => s.to)).toEqual(["z"]);
  });

  it("stops telling once stopped while waiting for the next try", async () => {
    const { fd, advance, behaviour, sent } = setup();
    fd.heardFrom(entry("z"));
    fd.start();
    await advance(0);
    sent.length = 0;
    behaviour.set("z", "fail");
    let done = false;
    void fd.leave().then(() => {
      done = true;
    });
    await advance(500);
    fd.stop();
    await advance(1_000);
    expect(done).toBe(true);
    expect(sent.map((s) => s.to)).toEqual(["z"]);
  });

  it("does not tell again a member forgotten while the leave waited for its answer", async () => {
    const { fd, advance, behaviour, sent, statusOf } = setup({ suspectAfterMs: 1_500, forgetAfterMs: 1_500 });
    fd.heardFrom(entry("z"));
    behaviour.set("z", "never"); // each heartbeat times out: the round's after 1 s, the leave's after 3 s
    fd.start();
    const leaving = fd.leave();
    await advance(3_000); // suspected at 2000, forgotten at 3000, as the leave's heartbeat timed out
    expect(statusOf("z")).toBeUndefined();
    await expect(leaving).resolves.toBeUndefined();
    expect(sent.filter((s) => s.at === sent[0]?.at).map((s) => s.to)).toEqual(["z", "z"]);
    fd.stop();
  });
});

describe("FailureDetector: rounds and heartbeats", () => {
  it("does not heartbeat a member that left", async () => {
    const { fd, advance, sentBetween } = setup();
    fd.heardFrom(entry("x"));
    fd.learnOf({ ...entry("w"), status: "left" });
    fd.start();
    await advance(1_000);
    expect(sentBetween(0, 1_001)).toEqual(["0:x", "1000:x"]);
    fd.stop();
  });

  it("takes a heartbeat that carries no table, and refuses one whose table holds a null entry", () => {
    const { fd, statusOf } = setup();
    fd.onHeartbeat({ from: entry("a") } as RemoteHeartbeat);
    expect(statusOf("a")).toBe("alive");
    expect(() => fd.onHeartbeat({ from: entry("b"), entries: [null as never] })).toThrow(
      expect.objectContaining({ code: ErrorCode.BadMessage }),
    );
  });

  it("tells each member once when two leaves overlap", async () => {
    const { fd, advance, behaviour, sent } = setup();
    fd.heardFrom(entry("z"));
    behaviour.set("z", "never");
    const first = fd.leave();
    const second = fd.leave(); // z's announcement is outstanding: it counts as on its way
    await advance(0);
    await expect(second).resolves.toBeUndefined();
    expect(sent.map((s) => s.to)).toEqual(["z"]);
    await advance(3_000);
    await first;
  });

  it("aborts the heartbeats outstanding when stopped, saying so", async () => {
    const { fd, advance, behaviour, signals } = setup();
    fd.heardFrom(entry("z"));
    behaviour.set("z", "never");
    fd.start();
    await advance(100);
    fd.stop();
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toMatchObject({
      code: ErrorCode.PeerUnreachable,
      message: "failure detector stopped",
    });
  });

  it("keeps one heartbeat outstanding per member across a restart, however late the old one ends", async () => {
    const { fd, advance, behaviour, sentBetween } = setup();
    fd.heardFrom(entry("z"));
    behaviour.set("z", { afterMs: 1_500 }); // ignores the abort
    fd.start(); // 0: the first heartbeat, answered at 1500
    await advance(100);
    fd.stop();
    fd.start(); // 100: a new one, answered at 1600
    await advance(1_450); // 1100: skipped, outstanding; 1500: the first one ends
    fd.pulse(); // 1550: the second is still outstanding
    await advance(0);
    expect(sentBetween(0, 1_600)).toEqual(["0:z", "100:z"]);
    fd.stop();
  });
});
