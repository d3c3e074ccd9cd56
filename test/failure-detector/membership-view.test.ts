import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { type GossipEntry, MembershipView } from "../../src/failure-detector/index.js";

const entry = (id: string, over: Partial<GossipEntry> = {}): GossipEntry => ({
  id,
  address: `127.0.0.1:${9000 + id.charCodeAt(0)}`,
  capacity: 1,
  incarnation: 100,
  status: "alive",
  ...over,
});

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isUbiError(error) ? error.code : "not a UbiError";
  }
  return undefined;
}

const newView = () => new MembershipView({ id: "me", address: "127.0.0.1:1", incarnation: 50 });

describe("MembershipView", () => {
  it("trusts the sender directly and learns the rest of its table as suspected until heard", () => {
    const view = newView();
    const result = view.merge([entry("a"), entry("b"), entry("c", { status: "suspected" })], "a", 1000);
    expect(result).toEqual({ aliveChanged: true, conflicts: [], risen: [], previousLifeSeen: false });
    expect(view.alive().map((m) => m.id)).toEqual(["a", "me"]);
    expect(view.get("b")).toMatchObject({ status: "suspected", lastHeardMs: 1000 });
    expect(view.get("c")?.status).toBe("suspected");
    // Hearing b directly makes it alive.
    expect(view.merge([entry("b")], "b", 1500).aliveChanged).toBe(true);
    expect(view.alive().map((m) => m.id)).toEqual(["a", "b", "me"]);
    expect(view.get("b")?.lastHeardMs).toBe(1500);
  });

  it("says when the latest suspicion standing began: a sweep's or a hearsay's, none once all are heard or left", () => {
    const view = newView();
    // Its own first view, and one that only grew: nothing suspected.
    expect(view.lastSuspicionMs()).toBe(Number.NEGATIVE_INFINITY);
    view.merge([entry("a")], "a", 1000);
    expect(view.lastSuspicionMs()).toBe(Number.NEGATIVE_INFINITY);
    // b and c known from a's table only: suspected from then until they answer.
    view.merge([entry("a"), entry("b"), entry("c")], "a", 1200);
    expect(view.lastSuspicionMs()).toBe(1200);
    view.merge([entry("b")], "b", 1300);
    expect(view.lastSuspicionMs()).toBe(1200);
    view.merge([entry("c")], "c", 1400);
    expect(view.lastSuspicionMs()).toBe(Number.NEGATIVE_INFINITY);
    // a falls silent: suspected at the sweep that finds it so; c later.
    view.merge([entry("b")], "b", 5000);
    view.merge([entry("c")], "c", 5500);
    view.sweep(6000, 4000, 60_000);
    expect(view.get("a")?.status).toBe("suspected");
    expect(view.lastSuspicionMs()).toBe(6000);
    view.merge([entry("b")], "b", 9000);
    view.sweep(9600, 4000, 60_000);
    expect(view.get("c")?.status).toBe("suspected");
    expect(view.lastSuspicionMs()).toBe(9600);
    // c leaves: its suspicion ends; a answers again: none stands.
    view.merge([entry("c", { status: "left" })], "c", 9700);
    expect(view.lastSuspicionMs()).toBe(6000);
    view.merge([entry("a", { incarnation: 101 })], "a", 9800);
    expect(view.lastSuspicionMs()).toBe(Number.NEGATIVE_INFINITY);
    // A suspected member's new life, known by gossip: suspected afresh until heard.
    view.sweep(16_000, 4000, 60_000);
    expect(view.get("a")?.status).toBe("suspected");
    expect(view.lastSuspicionMs()).toBe(16_000);
    view.merge([entry("b"), entry("a", { incarnation: 300 })], "b", 20_000);
    expect(view.get("a")).toMatchObject({ status: "suspected", incarnation: 300 });
    expect(view.lastSuspicionMs()).toBe(20_000);
    view.merge([entry("a", { incarnation: 300 })], "a", 20_100);
    expect(view.lastSuspicionMs()).toBe(Number.NEGATIVE_INFINITY);
    // A left member restarting, known by gossip: suspected until heard; forgotten, it counts no more.
    view.merge([entry("b"), entry("c", { incarnation: 200 })], "b", 21_000);
    expect(view.get("c")?.status).toBe("suspected");
    expect(view.lastSuspicionMs()).toBe(21_000);
    view.merge([entry("a", { incarnation: 300 })], "a", 82_000);
    view.merge([entry("b")], "b", 82_000);
    view.sweep(82_000, 4000, 60_000);
    expect(view.get("c")).toBeUndefined();
    expect(view.lastSuspicionMs()).toBe(Number.NEGATIVE_INFINITY);
  });

  it("refuses a sender claiming an alive id from another address, merging nothing", () => {
    const view = newView();
    view.merge([entry("a")], "a", 0);
    const impostor = entry("a", { address: "127.0.0.1:7777", incarnation: 999 });
    expect(codeOf(() => view.merge([impostor, entry("z")], "a", 10))).toBe(ErrorCode.IdConflict);
    expect(view.get("a")?.address).toBe(entry("a").address);
    expect(view.get("z")).toBeUndefined();
    // A heartbeat claiming to be this agent from elsewhere is a conflict too.
    expect(codeOf(() => view.merge([entry("me", { address: "10.0.0.1:1" })], "me", 10))).toBe(
      ErrorCode.IdConflict,
    );
  });

  it("reports gossip entries that contradict an alive member's address without applying them", () => {
    const view = newView();
    view.merge([entry("a")], "a", 0);
    const result = view.merge(
      [entry("b"), entry("a", { address: "127.0.0.1:7777", incarnation: 200 })],
      "b",
      5,
    );
    expect(result.conflicts).toEqual(["a"]);
    expect(view.get("a")).toMatchObject({ address: entry("a").address, incarnation: 100 });
  });

  it("accepts a restart (higher incarnation) and ignores the older life", () => {
    const view = newView();
    view.merge([entry("a")], "a", 0);
    view.merge([entry("a", { incarnation: 300 })], "a", 10);
    expect(view.get("a")).toMatchObject({ incarnation: 300, status: "alive", lastHeardMs: 10 });
    view.merge([entry("a", { incarnation: 100 })], "a", 20);
    expect(view.get("a")?.lastHeardMs).toBe(10);
    // After suspicion, a restart may come from a new address.
    view.sweep(10_000, 5000, 60_000);
    expect(view.get("a")?.status).toBe("suspected");
    view.merge([entry("a", { incarnation: 400, address: "127.0.0.1:5555" })], "a", 10_001);
    expect(view.get("a")).toMatchObject({ status: "alive", address: "127.0.0.1:5555", incarnation: 400 });
  });

  it("lets a leave override alive at the same incarnation and never resurrects it with stale gossip", () => {
    const view = newView();
    view.merge([entry("a"), entry("b")], "a", 0);
    view.merge([entry("b")], "b", 0);
    expect(view.merge([entry("b"), entry("a", { status: "left" })], "b", 1).aliveChanged).toBe(true);
    expect(view.get("a")?.status).toBe("left");
    // Stale gossip and a delayed direct heartbeat of the same life change nothing.
    expect(view.merge([entry("b"), entry("a")], "b", 2).aliveChanged).toBe(false);
    expect(view.merge([entry("a")], "a", 3).aliveChanged).toBe(false);
    expect(view.get("a")?.status).toBe("left");
    // A new life learned by gossip must still be heard directly before it is alive.
    view.merge([entry("b"), entry("a", { incarnation: 101 })], "b", 4);
    expect(view.get("a")).toMatchObject({ status: "suspected", incarnation: 101 });
    view.merge([entry("a", { incarnation: 101 })], "a", 5);
    expect(view.get("a")?.status).toBe("alive");
  });

  it("suspects silent members, then forgets them, never touching self", () => {
    const view = newView();
    view.merge([entry("a"), entry("b")], "a", 0);
    view.merge([entry("b")], "b", 3000);
    expect(view.sweep(4999, 5000, 60_000)).toBe(false);
    expect(view.sweep(5000, 5000, 60_000)).toBe(true);
    expect(view.get("a")?.status).toBe("suspected");
    expect(view.get("b")?.status).toBe("alive");
    view.sweep(60_000, 5000, 60_000);
    expect(view.get("a")).toBeUndefined();
    expect(view.get("b")?.status).toBe("suspected");
    expect(view.self.status).toBe("alive");
  });

  it("forgets only members already suspected or gone, and never suspects itself, whatever the timeouts", () => {
    const view = newView();
    view.merge([entry("a")], "a", 0);
    // A forget timeout shorter than suspicion does not skip the suspicion of an alive member.
    expect(view.sweep(10, 100, 5)).toBe(false);
    expect(view.get("a")?.status).toBe("alive");
    // Suspicion at once: every other member is suspected, self never.
    expect(view.sweep(20, 0, 1000)).toBe(true);
    expect(view.get("a")?.status).toBe("suspected");
    expect(view.self.status).toBe("alive");
  });

  it("refutes gossip that suspects it by bumping its incarnation", () => {
    const view = newView();
    view.merge(
      [entry("a"), entry("me", { address: "127.0.0.1:1", incarnation: 50, status: "suspected" })],
      "a",
      0,
    );
    expect(view.self.incarnation).toBe(51);
    expect(view.gossip().find((e) => e.id === "me")).toMatchObject({ incarnation: 51, status: "alive" });
  });

  it("marks self left once", () => {
    const view = newView();
    expect(view.leave()).toBe(true);
    expect(view.leave()).toBe(false);
    expect(view.alive()).toEqual([]);
    expect(view.self.status).toBe("left");
  });

  it("rejects malformed entries and a missing sender as bad messages", () => {
    const view = newView();
    expect(codeOf(() => view.merge([entry("a")], "b", 0))).toBe(ErrorCode.BadMessage);
    expect(codeOf(() => view.merge([entry("a", { capacity: 0 })], "a", 0))).toBe(ErrorCode.BadMessage);
    expect(codeOf(() => view.merge([entry("a", { status: "zombie" as "alive" })], "a", 0))).toBe(
      ErrorCode.BadMessage,
    );
    expect(codeOf(() => view.merge([entry("a", { incarnation: -1 })], "a", 0))).toBe(ErrorCode.BadMessage);
    expect(view.get("a")).toBeUndefined();
  });

  it("validates its own identity", () => {
    expect(codeOf(() => new MembershipView({ id: "", address: "x:1", incarnation: 1 }))).toBe(
      ErrorCode.InvalidArgument,
    );
    expect(codeOf(() => new MembershipView({ id: "a", address: "x:1", incarnation: 1, capacity: 0 }))).toBe(
      ErrorCode.InvalidArgument,
    );
  });
});
