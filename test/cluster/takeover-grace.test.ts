import { beforeAll, expect, it } from "vitest";
import { Ownership, TakeoverGrace } from "../../src/cluster/index.js";
import { Assignment, type Hasher64, loadHasher64 } from "../../src/hashing/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** Few replicas: fast builds, still a real circle. */
const REPLICAS = 64;
const HOSTS = Array.from({ length: 400 }, (_, i) => `h${i}.example:80`);
const DELAY_MS = 10_000;

let hasher: Hasher64;

beforeAll(async () => {
  hasher = await loadHasher64();
});

/** Agent "a" in a cluster of a, b, c, with the grace wired as the cluster node wires it. */
function setUp(delayMs = DELAY_MS) {
  const clock = new ManualClock();
  const ownership = new Ownership("a", 1, REPLICAS, hasher);
  ownership.update(["a", "b", "c"].map((id) => ({ id, capacity: 1 })));
  const before = ownership.assignment;
  const ended: string[] = [];
  const grace = new TakeoverGrace(delayMs, {
    clock,
    current: () => ownership.assignment,
    build: (agents) => Assignment.build(agents, { replicasPerUnit: REPLICAS }, hasher),
    onEnded: (id) => ended.push(id),
  });
  return { clock, ownership, before, grace, ended };
}

it("holds exactly the hosts this agent inherits from a crashed agent, until the delay has passed", () => {
  const { clock, ownership, before, grace, ended } = setUp();
  ownership.update(["a", "c"].map((id) => ({ id, capacity: 1 })));
  grace.noteCrashed({ id: "b", capacity: 1 });
  const inherited = HOSTS.filter((host) => before.ownerOf(host) === "b" && ownership.ownerOf(host) === "a");
  const ownAlready = HOSTS.filter((host) => before.ownerOf(host) === "a");
  expect(inherited.length).toBeGreaterThan(10);
  expect(ownAlready.length).toBeGreaterThan(10);
  const deadline = clock.now() + DELAY_MS;
  for (const host of inherited) expect(grace.heldUntilMs(host), host).toBe(deadline);
  for (const host of ownAlready) expect(grace.heldUntilMs(host), host).toBe(0);
  expect(grace.heldFor).toEqual(["b"]);

  clock.advance(DELAY_MS - 1);
  expect(grace.heldUntilMs(inherited[0] as string)).toBe(deadline);
  expect(ended).toEqual([]);
  clock.advance(1);
  for (const host of inherited) expect(grace.heldUntilMs(host)).toBe(0);
  expect(grace.heldFor).toEqual([]);
  // The end is told once, for the operator's log.
  expect(ended).toEqual(["b"]);
});

it("releases the hold when the crashed agent comes back, and holds nothing with a delay of 0", () => {
  const { ownership, before, grace } = setUp();
  ownership.update(["a", "c"].map((id) => ({ id, capacity: 1 })));
  grace.noteCrashed({ id: "b", capacity: 1 });
  const inherited = HOSTS.find((host) => before.ownerOf(host) === "b" && ownership.ownerOf(host) === "a");
  expect(grace.heldUntilMs(inherited as string)).toBeGreaterThan(0);
  grace.forget("b");
  expect(grace.heldUntilMs(inherited as string)).toBe(0);

  const immediate = setUp(0);
  immediate.ownership.update(["a", "c"].map((id) => ({ id, capacity: 1 })));
  immediate.grace.noteCrashed({ id: "b", capacity: 1 });
  for (const host of HOSTS) expect(immediate.grace.heldUntilMs(host)).toBe(0);
});

it("follows later view changes: after a second crash, a host waits for whichever crashed agent would own it", () => {
  const { clock, ownership, before, grace } = setUp();
  ownership.update(["a", "c"].map((id) => ({ id, capacity: 1 })));
  const afterFirst = ownership.assignment;
  grace.noteCrashed({ id: "b", capacity: 1 });
  clock.advance(4_000);
  ownership.update([{ id: "a", capacity: 1 }]);
  grace.noteCrashed({ id: "c", capacity: 1 });
  const bBack = clock.now() + 6_000;
  const cBack = clock.now() + DELAY_MS;
  let waitingForB = 0;
  for (const host of HOSTS) {
    // b's hosts that went to c wait for c too (c would own them if it alone came back).
    const expected = before.ownerOf(host) === "a" ? 0 : afterFirst.ownerOf(host) === "c" ? cBack : bBack;
    if (expected === bBack) waitingForB++;
    expect(grace.heldUntilMs(host), host).toBe(expected);
  }
  expect(waitingForB).toBeGreaterThan(10);
  clock.advance(6_000);
  expect(grace.heldFor).toEqual(["c"]);
});

it("holds nothing with no delay: a crash is not even recorded, and nothing ends later", () => {
  const { clock, ownership, grace, ended } = setUp(0);
  ownership.update(["a", "c"].map((id) => ({ id, capacity: 1 })));
  grace.noteCrashed({ id: "b", capacity: 1 });
  expect(grace.heldFor).toEqual([]);
  clock.advance(1);
  expect(grace.heldFor).toEqual([]);
  expect(ended).toEqual([]);
});

it("works without an onEnded listener", () => {
  const clock = new ManualClock();
  const ownership = new Ownership("a", 1, REPLICAS, hasher);
  ownership.update(["a", "c"].map((id) => ({ id, capacity: 1 })));
  const grace = new TakeoverGrace(DELAY_MS, {
    clock,
    current: () => ownership.assignment,
    build: (agents) => Assignment.build(agents, { replicasPerUnit: REPLICAS }, hasher),
  });
  grace.noteCrashed({ id: "b", capacity: 1 });
  clock.advance(DELAY_MS);
  expect(grace.heldFor).toEqual([]);
});

it("holds a crashed agent's own hosts while it is still in the view (not adding it a second time)", () => {
  const { clock, before, grace } = setUp();
  grace.noteCrashed({ id: "b", capacity: 1 });
  const deadline = clock.now() + DELAY_MS;
  for (const host of HOSTS) {
    expect(grace.heldUntilMs(host), host).toBe(before.ownerOf(host) === "b" ? deadline : 0);
  }
});
