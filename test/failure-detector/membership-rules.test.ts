import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { type GossipEntry, MembershipView } from "../../src/failure-detector/index.js";
import { checkGossipEntry } from "../../src/failure-detector/member.js";

const entry = (id: string, over: Partial<GossipEntry> = {}): GossipEntry => ({
  id,
  address: `127.0.0.1:${9000 + id.charCodeAt(0)}`,
  capacity: 1,
  incarnation: 100,
  status: "alive",
  ...over,
});

/** `run`'s error as "CODE: message", or "ok". */
function outcome(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return isUbiError(error) ? `${error.code}: ${error.message}` : `not a UbiError: ${String(error)}`;
  }
  return "ok";
}

const newView = () => new MembershipView({ id: "me", address: "127.0.0.1:1", incarnation: 50 });
const ME = { id: "me", address: "127.0.0.1:1" };

describe("checkGossipEntry", () => {
  it("says which field of a gossip entry is wrong", () => {
    const bad = (over: Record<string, unknown>) =>
      outcome(() => checkGossipEntry({ ...entry("a"), ...over }));
    const prefix = `${ErrorCode.BadMessage}: gossip entry "a": `;
    expect(bad({})).toBe("ok");
    expect(outcome(() => checkGossipEntry(null))).toBe(
      `${ErrorCode.BadMessage}: gossip entry undefined: id must be a non-empty string`,
    );
    for (const id of ["", 5]) {
      expect(bad({ id })).toBe(
        `${ErrorCode.BadMessage}: gossip entry ${JSON.stringify(id)}: id must be a non-empty string`,
      );
    }
    for (const address of ["", 5])
      expect(bad({ address })).toBe(`${prefix}address must be a non-empty string`);
    for (const capacity of [0, 1.5, "1", 2 ** 53]) {
      expect(bad({ capacity }), String(capacity)).toBe(`${prefix}capacity must be a positive integer`);
    }
    for (const incarnation of [-1, 0.5, "0", 2 ** 53]) {
      expect(bad({ incarnation }), String(incarnation)).toBe(
        `${prefix}incarnation must be a non-negative integer`,
      );
    }
    expect(bad({ incarnation: 0 })).toBe("ok");
    expect(bad({ status: "zombie" })).toBe(`${prefix}unknown status "zombie"`);
    expect(bad({ status: 1 })).toBe(`${prefix}unknown status 1`);
  });

  it("returns a clean copy", () => {
    const copy = checkGossipEntry({ ...entry("a"), extra: true });
    expect(copy).toStrictEqual(entry("a"));
  });
});

describe("MembershipView rules", () => {
  it("says which part of its own identity is wrong", () => {
    const make = (over: Record<string, unknown>) =>
      outcome(() => new MembershipView({ id: "me", address: "x:1", incarnation: 0, ...over } as never));
    expect(make({})).toBe("ok");
    expect(make({ id: 5 })).toBe(`${ErrorCode.InvalidArgument}: self.id must be non-empty`);
    expect(make({ address: "" })).toBe(`${ErrorCode.InvalidArgument}: self.address must be non-empty`);
    expect(make({ address: 5 })).toBe(`${ErrorCode.InvalidArgument}: self.address must be non-empty`);
    expect(make({ capacity: 0 })).toBe(
      `${ErrorCode.InvalidArgument}: self.capacity must be a positive integer`,
    );
    for (const incarnation of [-1, 0.5]) {
      expect(make({ incarnation })).toBe(
        `${ErrorCode.InvalidArgument}: self.incarnation must be a non-negative integer`,
      );
    }
    expect(new MembershipView({ id: "me", address: "x:1", incarnation: 0 }).self.capacity).toBe(1);
  });

  it("names the missing sender and the conflicting claim", () => {
    const view = newView();
    expect(outcome(() => view.merge([entry("a")], "b", 0))).toBe(
      `${ErrorCode.BadMessage}: heartbeat lacks its sender "b"`,
    );
    view.merge([entry("a")], "a", 0);
    expect(outcome(() => view.merge([entry("a", { address: "10.0.0.9:9" })], "a", 1))).toBe(
      `${ErrorCode.IdConflict}: id "a" is already used by a live agent at ${entry("a").address} (claimed from 10.0.0.9:9)`,
    );
  });

  it("learns nothing from its own heartbeat, even one that suspects it", () => {
    const view = newView();
    const result = view.merge([{ ...ME, capacity: 1, incarnation: 50, status: "suspected" }], "me", 10);
    expect(result).toEqual({ aliveChanged: false, conflicts: [], risen: [], previousLifeSeen: false });
    expect(view.self.incarnation).toBe(50);
  });

  it("takes nothing from a heartbeat of its own id and address, not even a newer life that left", () => {
    const view = newView();
    const result = view.merge([{ ...ME, capacity: 3, incarnation: 51, status: "left" }], "me", 10);
    expect(result).toEqual({ aliveChanged: false, conflicts: [], risen: [], previousLifeSeen: false });
    expect(view.self).toMatchObject({ capacity: 1, incarnation: 50, status: "alive" });
  });

  it("keeps a member first heard directly as left, and one first heard as suspected as alive", () => {
    const view = newView();
    view.merge([entry("a", { status: "left" })], "a", 10);
    view.merge([entry("b", { status: "suspected" })], "b", 10);
    expect(view.get("a")?.status).toBe("left");
    expect(view.get("b")?.status).toBe("alive");
  });

  it("takes a new life of a departed member heard directly", () => {
    const view = newView();
    view.merge([entry("a", { status: "left" })], "a", 10);
    view.merge([entry("a", { incarnation: 101 })], "a", 20);
    expect(view.get("a")).toMatchObject({ status: "alive", incarnation: 101, lastHeardMs: 20 });
  });

  it("introduces gossip as suspected, never itself, and tells when the alive set changed", () => {
    const view = newView();
    expect(view.introduce(entry("a"), 10)).toBe(false);
    expect(view.get("a")).toMatchObject({ status: "suspected", lastHeardMs: 10 });
    expect(view.introduce(entry("b", { status: "left" }), 10)).toBe(false);
    expect(view.get("b")?.status).toBe("left");
    expect(view.introduce({ ...ME, capacity: 1, incarnation: 99, status: "left" }, 10)).toBe(false);
    expect(view.self).toMatchObject({ status: "alive", incarnation: 50 });
    view.merge([entry("a")], "a", 20);
    expect(view.introduce(entry("a", { incarnation: 101, status: "left" }), 30)).toBe(true);
    expect(view.get("a")?.status).toBe("left");
    expect(outcome(() => view.introduce(entry("c", { capacity: 0 }), 30))).toMatch(/^UBI_ERR_BAD_MESSAGE/);
  });

  it("applies gossip of a newer life to a suspected member at a new address, reporting no conflict", () => {
    const view = newView();
    view.merge([entry("b"), entry("a", { status: "suspected" })], "b", 0);
    const result = view.merge([entry("b"), entry("a", { incarnation: 101, address: "10.0.0.2:1" })], "b", 5);
    expect(result.conflicts).toEqual([]);
    expect(view.get("a")).toMatchObject({ address: "10.0.0.2:1", incarnation: 101, status: "suspected" });
    // Gossip about a known alive member at its own address is no conflict either.
    view.merge([entry("a", { incarnation: 101, address: "10.0.0.2:1" })], "a", 6);
    expect(view.merge([entry("b"), entry("a", { incarnation: 102, address: "10.0.0.2:1" })], "b", 7)).toEqual(
      {
        aliveChanged: false,
        conflicts: [],
        // Alive here, it is heard at a greater incarnation.
        risen: [{ id: "a", before: 101, after: 102 }],
        previousLifeSeen: false,
      },
    );
  });

  it("tells when a sender holds a previous life of its own id, alive or suspected, not one that left nor this life", () => {
    const view = newView();
    const seen = (status: "alive" | "suspected" | "left", incarnation: number) =>
      view.merge([entry("b"), { ...ME, capacity: 1, incarnation, status }], "b", 10).previousLifeSeen;
    expect(seen("alive", 40)).toBe(true);
    expect(seen("suspected", 49)).toBe(true);
    expect(seen("left", 40)).toBe(false);
    // This life suspected: refuted (51), and still this life's, as is its refutation.
    expect(seen("suspected", 50)).toBe(false);
    expect(view.self.incarnation).toBe(51);
    expect(seen("alive", 51)).toBe(false);
  });

  it("tells the older life of a member a heartbeat replaces, alive or suspected, not one that left", () => {
    const view = newView();
    view.merge([entry("a"), entry("b", { status: "suspected" })], "a", 0);
    view.merge([entry("c", { status: "left" })], "c", 0);
    expect(view.olderLife("a", 5_000)).toBe(100);
    expect(view.olderLife("b", 5_000)).toBe(100);
    expect(view.olderLife("a", 100)).toBeUndefined();
    expect(view.olderLife("c", 5_000)).toBeUndefined();
    expect(view.olderLife("z", 5_000)).toBeUndefined();
    expect(view.olderLife("me", 5_000)).toBeUndefined();
  });

  it("takes a leave only from gossip of the same or a newer life, and keeps when it was last heard", () => {
    const view = newView();
    view.merge([entry("b"), entry("a")], "b", 0);
    view.merge([entry("a")], "a", 0);
    view.merge([entry("b"), entry("a", { incarnation: 99, status: "left" })], "b", 1);
    expect(view.get("a")?.status).toBe("alive");
    view.merge([entry("b"), entry("a", { incarnation: 101, status: "left" })], "b", 2);
    expect(view.get("a")).toMatchObject({ status: "left", incarnation: 101, lastHeardMs: 2 });
    view.merge([entry("b"), entry("a", { incarnation: 101, status: "left" })], "b", 50);
    expect(view.get("a")?.lastHeardMs).toBe(2);
  });

  it("refutes only a suspicion of its current life while it is alive", () => {
    const about = (over: Partial<GossipEntry>) => ({
      ...ME,
      capacity: 1,
      incarnation: 50,
      status: "alive",
      ...over,
    });
    const gossip = (view: MembershipView, me: GossipEntry) => view.merge([entry("a"), me], "a", 0);
    const alive = newView();
    gossip(alive, about({}) as GossipEntry);
    expect(alive.self.incarnation).toBe(50);
    const stale = newView();
    gossip(stale, about({ status: "suspected", incarnation: 40 }) as GossipEntry);
    expect(stale.self.incarnation).toBe(50);
    const newer = newView();
    gossip(newer, about({ status: "left", incarnation: 70 }) as GossipEntry);
    expect(newer.self.incarnation).toBe(71);
    const left = newView();
    left.leave();
    gossip(left, about({ status: "suspected" }) as GossipEntry);
    expect(left.self.incarnation).toBe(50);
  });

  it("counts a member's new address or capacity as an alive-set change", () => {
    const view = newView();
    view.merge([entry("a")], "a", 0);
    expect(view.merge([entry("a", { incarnation: 101, capacity: 3 })], "a", 1).aliveChanged).toBe(true);
    expect(view.merge([entry("a", { incarnation: 101, capacity: 3 })], "a", 2).aliveChanged).toBe(false);
  });

  it("counts an alive-set change even when one member's capacity and the next one's id run together", () => {
    const view = newView();
    const shared = "127.0.0.1:7000";
    view.merge([entry(".a")], ".a", 0);
    view.merge([entry("5a", { address: shared })], "5a", 0);
    // In one heartbeat from a (new): .a's capacity goes from 1 to 15, and 5a leaves.
    const result = view.merge(
      [
        entry("a", { address: shared }),
        entry(".a", { incarnation: 101, capacity: 15 }),
        entry("5a", { address: shared, status: "left" }),
      ],
      "a",
      1,
    );
    expect(view.alive().map((m) => `${m.id}*${m.capacity}`)).toEqual([".a*15", "a*1", "me*1"]);
    expect(result.aliveChanged).toBe(true);
  });

  it("lists members sorted by id whatever the order they came in", () => {
    const view = newView();
    for (const id of ["z", "b", "y", "a", "x"]) view.merge([entry(id)], id, 0);
    expect(view.entries().map((m) => m.id)).toEqual(["a", "b", "me", "x", "y", "z"]);
  });
});
