import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  type AgentSpec,
  Assignment,
  DEFAULT_REPLICAS_PER_UNIT,
  type Hasher64,
  loadHasher64,
} from "../../src/hashing/index.js";

let hasher: Hasher64;
beforeAll(async () => {
  hasher = await loadHasher64();
});

const hostKey = (i: number) => `h${String(i).padStart(4, "0")}.ubi.test:8080`;
const hosts = (count: number) => Array.from({ length: count }, (_, i) => hostKey(i));
const uniform = (...ids: string[]): AgentSpec[] => ids.map((id) => ({ id, capacity: 1 }));
// Fewer replicas keep the many builds of the property tests fast; the properties do not depend on it.
const SMALL = { replicasPerUnit: 64 };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isUbiError(error) ? error.code : "not a UbiError";
  }
  return undefined;
}

describe("Assignment: identical everywhere", () => {
  it("gives a rare key (a digest, a URL) the same owner whether looked up memoized or not", () => {
    const assignment = Assignment.build(uniform("agent-a", "agent-b", "agent-c"), {}, hasher);
    const keys = [
      ...hosts(100),
      ...Array.from({ length: 5000 }, (_, i) => `sha1:${i.toString(32).padStart(32, "A")}`),
    ];
    const rare = keys.map((key) => assignment.ownerOfRareKey(key));
    expect(keys.map((key) => assignment.ownerOf(key))).toEqual(rare);
    expect(keys.map((key) => assignment.ownerOfRareKey(key))).toEqual(rare);
    expect(new Set(rare).size).toBe(3);
  });

  // Pinned once: any change to the seeding, the replica draws or the host hash breaks these.
  it("gives the same owners and successors as when they were recorded", () => {
    const assignment = Assignment.build(uniform("agent-a", "agent-b", "agent-c", "agent-d"), {}, hasher);
    const owners = Object.fromEntries(hosts(10).map((host) => [host, assignment.ownerOf(host)]));
    expect(owners).toEqual({
      "h0000.ubi.test:8080": "agent-c",
      "h0001.ubi.test:8080": "agent-a",
      "h0002.ubi.test:8080": "agent-d",
      "h0003.ubi.test:8080": "agent-a",
      "h0004.ubi.test:8080": "agent-d",
      "h0005.ubi.test:8080": "agent-d",
      "h0006.ubi.test:8080": "agent-c",
      "h0007.ubi.test:8080": "agent-c",
      "h0008.ubi.test:8080": "agent-b",
      "h0009.ubi.test:8080": "agent-b",
    });
    expect(assignment.successors("h0000.ubi.test:8080", 3)).toEqual(["agent-d", "agent-b", "agent-a"]);
    expect(assignment.successors("h0003.ubi.test:8080", 3)).toEqual(["agent-b", "agent-c", "agent-d"]);
  });

  it("computes the same owners in a separate node process (from the dist build)", () => {
    const distIndex = fileURLToPath(new URL("../../dist/hashing/index.js", import.meta.url));
    const script = `
      const { Assignment } = await import(${JSON.stringify(distIndex)});
      const a = await Assignment.load([{ id: "p", capacity: 1 }, { id: "q", capacity: 2 }, { id: "r" }]);
      const owners = [];
      for (let i = 0; i < 1000; i++) owners.push(a.ownerOf("h" + String(i).padStart(4, "0") + ".ubi.test:8080"));
      process.stdout.write(JSON.stringify(owners));`;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    const here = Assignment.build(
      [{ id: "p", capacity: 1 }, { id: "q", capacity: 2 }, { id: "r" }],
      {},
      hasher,
    );
    expect(JSON.parse(output)).toEqual(hosts(1000).map((host) => here.ownerOf(host)));
  });

  it("does not depend on the order agents are listed in", () => {
    const forward = Assignment.build(uniform("a1", "a2", "a3", "a4", "a5"), SMALL, hasher);
    const backward = Assignment.build(uniform("a5", "a4", "a3", "a2", "a1"), SMALL, hasher);
    for (const host of hosts(2000)) expect(backward.ownerOf(host)).toBe(forward.ownerOf(host));
  });
});

describe("Assignment: contravariance", () => {
  const ids = ["a0", "a1", "a2", "a3", "a4", "a5", "a6"];
  const sample = hosts(20_000);

  it("moves hosts only to an added agent", () => {
    const before = Assignment.build(uniform(...ids), SMALL, hasher);
    const after = Assignment.build(uniform(...ids, "newcomer"), SMALL, hasher);
    let moved = 0;
    for (const host of sample) {
      const owner = after.ownerOf(host);
      if (owner !== before.ownerOf(host)) {
        expect(owner).toBe("newcomer");
        moved++;
      }
    }
    // The newcomer takes roughly its 1/8 share, not nothing and not everything.
    expect(moved).toBeGreaterThan(sample.length / 16);
    expect(moved).toBeLessThan(sample.length / 4);
  });

  it("moves only the hosts of a removed agent, each to its first successor", () => {
    const before = Assignment.build(uniform(...ids), SMALL, hasher);
    const after = Assignment.build(uniform(...ids.filter((id) => id !== "a3")), SMALL, hasher);
    let orphans = 0;
    for (const host of sample) {
      const owner = before.ownerOf(host);
      if (owner === "a3") {
        orphans++;
        expect(after.ownerOf(host)).toBe(before.successors(host, 1)[0]);
      } else {
        expect(after.ownerOf(host)).toBe(owner);
      }
    }
    expect(orphans).toBeGreaterThan(0);
  });
});

describe("Assignment: successors", () => {
  it("lists the owners after removing the owner, then the next one, and so on", () => {
    const ids = ["s0", "s1", "s2", "s3", "s4", "s5"];
    const full = Assignment.build(uniform(...ids), SMALL, hasher);
    const bySubset = new Map<string, Assignment>();
    const without = (remaining: string[]) => {
      const key = remaining.join();
      const cached = bySubset.get(key);
      if (cached !== undefined) return cached;
      const built = Assignment.build(uniform(...remaining), SMALL, hasher);
      bySubset.set(key, built);
      return built;
    };
    for (const host of hosts(300)) {
      const chain = full.successors(host, 3);
      expect(chain).toHaveLength(3);
      expect(new Set([full.ownerOf(host), ...chain]).size).toBe(4);
      let remaining = ids.filter((id) => id !== full.ownerOf(host));
      for (const expected of chain) {
        expect(without(remaining).ownerOf(host)).toBe(expected);
        remaining = remaining.filter((id) => id !== expected);
      }
    }
  });

  it("returns at most the other agents, and none for k = 0 or a single agent", () => {
    const three = Assignment.build(uniform("x", "y", "z"), SMALL, hasher);
    const chain = three.successors("h0001.ubi.test:8080", 10);
    expect(chain.sort()).toEqual(["x", "y", "z"].filter((id) => id !== three.ownerOf("h0001.ubi.test:8080")));
    expect(three.successors("h0001.ubi.test:8080", 0)).toEqual([]);
    expect(Assignment.build(uniform("alone"), SMALL, hasher).successors("h0001.ubi.test:8080", 2)).toEqual(
      [],
    );
    expect(codeOf(() => three.successors("h0001.ubi.test:8080", -1))).toBe(ErrorCode.InvalidArgument);
  });
});

describe("Assignment: balance and capacity", () => {
  it("keeps every agent within 10% of its share over 100,000 hosts with 8 agents at the default", () => {
    const agents = Array.from({ length: 8 }, (_, i) => ({ id: `agent-${i}`, capacity: 1 }));
    const assignment = Assignment.build(agents, {}, hasher);
    const counts = new Map<string, number>();
    for (const host of hosts(100_000)) {
      const owner = assignment.ownerOf(host);
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const agent of agents) {
      expect(Math.abs((counts.get(agent.id) ?? 0) - 12_500) / 12_500).toBeLessThan(0.1);
    }
  });

  it("gives replicas and circle share in proportion to capacity", () => {
    const assignment = Assignment.build(
      [
        { id: "one", capacity: 1 },
        { id: "two", capacity: 2 },
        { id: "four", capacity: 4 },
        { id: "default" },
      ],
      {},
      hasher,
    );
    expect(assignment.replicaCount("one")).toBe(DEFAULT_REPLICAS_PER_UNIT);
    expect(assignment.replicaCount("four")).toBe(4 * DEFAULT_REPLICAS_PER_UNIT);
    expect(assignment.replicaCount("default")).toBe(DEFAULT_REPLICAS_PER_UNIT);
    expect(assignment.replicaCount("absent")).toBe(0);
    const shares = ["one", "two", "four", "default"].map((id) => assignment.share(id));
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(Math.abs(assignment.share("four") / (4 / 8) - 1)).toBeLessThan(0.1);
    expect(Math.abs(assignment.share("one") / (1 / 8) - 1)).toBeLessThan(0.1);
    expect(assignment.share("absent")).toBe(0);
    expect(Assignment.build(uniform("solo"), { replicasPerUnit: 1 }, hasher).share("solo")).toBe(1);
  });

  it("reports membership and the normalized agents", () => {
    const assignment = Assignment.build([{ id: "b" }, { id: "a", capacity: 3 }], SMALL, hasher);
    expect(assignment.agents).toEqual([
      { id: "a", capacity: 3 },
      { id: "b", capacity: 1 },
    ]);
    expect(assignment.has("a")).toBe(true);
    const shuffled = Assignment.build(uniform("c", "a", "e", "b", "d"), SMALL, hasher);
    expect(shuffled.agents.map((agent) => agent.id)).toEqual(["a", "b", "c", "d", "e"]);
    expect(assignment.has("c")).toBe(false);
  });
});

describe("Assignment: validation", () => {
  it("rejects duplicate ids as an id conflict", () => {
    expect(codeOf(() => Assignment.build(uniform("dup", "other", "dup"), SMALL, hasher))).toBe(
      ErrorCode.IdConflict,
    );
  });

  it("rejects bad options and agents", () => {
    expect(codeOf(() => Assignment.build([], SMALL, hasher))).toBe(ErrorCode.InvalidArgument);
    expect(codeOf(() => Assignment.build(uniform(""), SMALL, hasher))).toBe(ErrorCode.InvalidArgument);
    expect(codeOf(() => Assignment.build([{ id: "a", capacity: 0 }], SMALL, hasher))).toBe(
      ErrorCode.InvalidArgument,
    );
    expect(codeOf(() => Assignment.build([{ id: "a", capacity: 1.5 }], SMALL, hasher))).toBe(
      ErrorCode.InvalidArgument,
    );
    expect(codeOf(() => Assignment.build(uniform("a"), { replicasPerUnit: 0 }, hasher))).toBe(
      ErrorCode.InvalidArgument,
    );
    expect(codeOf(() => Assignment.build(uniform("a"), { replicasPerUnit: 1e9 }, hasher))).toBe(
      ErrorCode.InvalidArgument,
    );
  });

  it("names what is wrong in its messages", () => {
    const messageOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    };
    expect(messageOf(() => Assignment.build([], SMALL, hasher))).toMatch(/at least one agent/);
    expect(messageOf(() => Assignment.build(uniform(""), SMALL, hasher))).toMatch(/ids must be non-empty/);
    expect(messageOf(() => Assignment.build([{ id: 5 as never }], SMALL, hasher))).toMatch(
      /ids must be non-empty/,
    );
    expect(messageOf(() => Assignment.build([{ id: "a", capacity: 0 }], SMALL, hasher))).toMatch(
      /capacity of agent "a" .*got 0/,
    );
    expect(messageOf(() => Assignment.build(uniform("a"), { replicasPerUnit: 0 }, hasher))).toMatch(
      /replicasPerUnit .*got 0/,
    );
    expect(messageOf(() => Assignment.build(uniform("a"), { replicasPerUnit: 1e9 }, hasher))).toMatch(
      /1000000000 replicas exceed the limit of 33554432/,
    );
    // The limit itself is allowed, one more is not.
    const limited = { replicasPerUnit: 8, maxTotalReplicas: 24 };
    const atLimit = Assignment.build([{ id: "a", capacity: 2 }, { id: "b" }], limited, hasher);
    expect(atLimit.agents.map(({ id }) => id)).toEqual(["a", "b"]);
    expect(
      messageOf(() =>
        Assignment.build(
          [
            { id: "a", capacity: 2 },
            { id: "b", capacity: 2 },
          ],
          limited,
          hasher,
        ),
      ),
    ).toMatch(/32 replicas exceed the limit of 24/);
    expect(
      Assignment.build(uniform("a"), { replicasPerUnit: 1, maxTotalReplicas: 1 }, hasher).agents,
    ).toHaveLength(1);
    for (const bad of [0, Number.NaN, 2.5]) {
      expect(messageOf(() => Assignment.build(uniform("a"), { maxTotalReplicas: bad }, hasher))).toBe(
        `maxTotalReplicas must be a positive integer, got ${bad}`,
      );
    }
    // A duplicate id is named as one, not reported as two agents colliding on the circle.
    expect(messageOf(() => Assignment.build(uniform("dup", "dup"), SMALL, hasher))).toMatch(
      /duplicate agent id "dup"/,
    );
    const assignment = Assignment.build(uniform("a", "b"), SMALL, hasher);
    expect(messageOf(() => assignment.successors("h", -1))).toMatch(/k must be .*got -1/);
  });

  it("loads the hasher itself in the async factory", async () => {
    const loaded = await Assignment.load(uniform("agent-a", "agent-b", "agent-c", "agent-d"));
    expect(loaded.ownerOf("h0008.ubi.test:8080")).toBe("agent-b");
  });
});
