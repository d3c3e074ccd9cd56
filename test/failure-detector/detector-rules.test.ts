import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError, UbiError } from "../../src/errors.js";
import {
  FailureDetector,
  type FailureDetectorOptions,
  type HeartbeatTarget,
  type MemberEntry,
  type RemoteHeartbeat,
} from "../../src/failure-detector/index.js";
import { ManualClock } from "../support/manual-clock.js";

const SELF = { id: "m", address: "127.0.0.1:1" };

/** A detector whose heartbeats `answer` handles; every request is recorded. */
function detector(
  answer: (target: HeartbeatTarget, request: RemoteHeartbeat) => Promise<RemoteHeartbeat>,
  options: Partial<FailureDetectorOptions> = {},
) {
  const clock = new ManualClock();
  const sent: { target: HeartbeatTarget; request: RemoteHeartbeat }[] = [];
  const fd = new FailureDetector(
    { self: SELF, heartbeatIntervalMs: 1000, suspectAfterMs: 5000, ...options },
    {
      clock,
      sendHeartbeat: (target, request) => {
        sent.push({ target, request });
        return answer(target, request);
      },
    },
  );
  return { fd, clock, sent };
}

const peer = (id: string, port: number) => ({
  id,
  address: `127.0.0.1:${port}`,
  capacity: 1,
  incarnation: 7,
  status: "alive" as const,
});

function outcome(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return isUbiError(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return "ok";
}

const unreachable = () => Promise.reject(new UbiError(ErrorCode.PeerUnreachable, "down"));

describe("FailureDetector rules", () => {
  it("checks its timing options, naming the bad one, with suspicion strictly after a round", () => {
    const make = (options: Partial<FailureDetectorOptions>) => outcome(() => detector(unreachable, options));
    const invalid = `${ErrorCode.InvalidArgument}: `;
    expect(make({ heartbeatIntervalMs: 0 })).toBe(
      `${invalid}heartbeatIntervalMs must be a positive number of ms, got 0`,
    );
    expect(make({ suspectAfterMs: Number.NaN })).toBe(
      `${invalid}suspectAfterMs must be a positive number of ms, got NaN`,
    );
    expect(make({ forgetAfterMs: -1 })).toBe(
      `${invalid}forgetAfterMs must be a positive number of ms, got -1`,
    );
    expect(make({ suspectAfterMs: 1000 })).toBe(
      `${invalid}suspectAfterMs (1000) must exceed heartbeatIntervalMs (1000)`,
    );
    expect(make({ suspectAfterMs: 1001, forgetAfterMs: 1001 })).toBe("ok");
    expect(make({ forgetAfterMs: 4999 })).toBe(
      `${invalid}forgetAfterMs (4999) must be at least suspectAfterMs (5000)`,
    );
  });

  it("starts one round however often it is started, and stops its timer", () => {
    const { fd, clock, sent } = detector(unreachable);
    fd.learnOf(peer("z", 2));
    fd.start();
    fd.start();
    expect(sent).toHaveLength(1);
    expect(clock.pending).toBe(2); // the next round and the heartbeat's timeout
    fd.stop();
    expect(clock.pending).toBe(1);
  });

  it("stops calling a listener once it unsubscribed", () => {
    const { fd } = detector(unreachable);
    const calls: (readonly MemberEntry[])[] = [];
    const unsubscribe = fd.onChange((alive) => calls.push(alive));
    fd.heardFrom(peer("a", 2));
    expect(calls.map((alive) => alive.map((m) => m.id))).toEqual([["a", "m"]]);
    unsubscribe();
    fd.heardFrom(peer("b", 3));
    expect(calls).toHaveLength(1);
  });

  it("takes a member that called directly as alive, and one named by others as suspected", () => {
    const { fd } = detector(unreachable);
    const calls: string[][] = [];
    fd.onChange((alive) => calls.push(alive.map((m) => m.id)));
    fd.learnOf(peer("b", 3));
    expect(fd.members().find((m) => m.id === "b")?.status).toBe("suspected");
    expect(calls).toEqual([]);
    fd.heardFrom(peer("a", 2));
    expect(fd.alive().map((m) => m.id)).toEqual(["a", "m"]);
    // Named as gone in a newer life: the alive set changes, and listeners hear of it.
    fd.learnOf({ ...peer("a", 2), incarnation: 8, status: "left" });
    expect(calls).toEqual([["a", "m"], ["m"]]);
  });

  it("joins through no seed but itself without asking anyone", async () => {
    const { fd, sent } = detector(unreachable);
    await fd.join([SELF.address]);
    expect(sent).toEqual([]);
  });

  it("names every seed when none answered, with the first failure as cause", async () => {
    const { fd, sent } = detector(unreachable);
    let error: unknown;
    await fd.join(["127.0.0.1:2", SELF.address, "127.0.0.1:3"]).catch((caught: unknown) => {
      error = caught;
    });
    expect(sent.map((s) => s.target.address)).toEqual(["127.0.0.1:2", "127.0.0.1:3"]);
    expect(isUbiError(error, ErrorCode.PeerUnreachable)).toBe(true);
    expect((error as Error).message).toBe("no seed answered: 127.0.0.1:2, 127.0.0.1:3");
    expect(((error as Error).cause as Error).message).toBe("down");
  });

  it("fails a join with a seed's refusal of what it sent, even when another seed let it in", async () => {
    const refused = new UbiError(ErrorCode.BadMessage, "partitioning: url here, host there");
    const { fd } = detector((target) =>
      target.address === "127.0.0.1:2"
        ? Promise.resolve({ from: peer("a", 2), entries: [] })
        : Promise.reject(refused),
    );
    await expect(fd.join(["127.0.0.1:2", "127.0.0.1:3"])).rejects.toBe(refused);
    await expect(fd.join(["127.0.0.1:3"])).rejects.toBe(refused);
  });

  it("refuses a heartbeat without a sender, and one whose answer comes from someone else", async () => {
    const { fd } = detector(() => Promise.resolve({ from: peer("impostor", 9), entries: [] }));
    expect(outcome(() => fd.onHeartbeat({ entries: [] } as never))).toBe(
      `${ErrorCode.BadMessage}: heartbeat without a sender`,
    );
    expect(outcome(() => fd.onHeartbeat(undefined as never))).toBe(
      `${ErrorCode.BadMessage}: heartbeat without a sender`,
    );
    fd.learnOf(peer("b", 3));
    fd.start();
    await Promise.resolve();
    await Promise.resolve();
    // The impostor's answer is not taken in: b stays suspected and the impostor unknown.
    expect(fd.members().map((m) => `${m.id}:${m.status}`)).toEqual(["b:suspected", "m:alive"]);
    fd.stop();
  });

  it("takes the sender's own entry over what its table says about it", () => {
    const { fd } = detector(unreachable);
    fd.onHeartbeat({ from: peer("a", 2), entries: [{ ...peer("a", 2), status: "left" }, peer("c", 4)] });
    expect(fd.members().map((m) => `${m.id}:${m.status}`)).toEqual(["a:alive", "c:suspected", "m:alive"]);
  });
});
