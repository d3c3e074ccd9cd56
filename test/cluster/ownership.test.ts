import { beforeAll, describe, expect, it } from "vitest";
import { Ownership } from "../../src/cluster/index.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { type Hasher64, loadHasher64 } from "../../src/hashing/index.js";

/** Few replicas: fast builds, still a real circle. */
const REPLICAS = 64;
const HOSTS = Array.from({ length: 400 }, (_, i) => `h${i}.example:80`);

let hasher: Hasher64;

beforeAll(async () => {
  hasher = await loadHasher64();
});

function ownership(selfId: string, alive: readonly string[] = [selfId]): Ownership {
  const result = new Ownership(selfId, 1, REPLICAS, hasher);
  result.update(alive.map((id) => ({ id, capacity: 1 })));
  return result;
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return isUbiError(error) ? error.code : "not a UbiError";
  }
}

describe("Ownership", () => {
  it("by host, a URL belongs to its host's owner; by URL, the URLs of one host are spread", () => {
    const alive = ["a", "b", "c"].map((id) => ({ id, capacity: 1 }));
    const byHost = new Ownership("a", 1, REPLICAS, hasher);
    const byUrl = new Ownership("a", 1, REPLICAS, hasher, "url");
    // Unless told otherwise, an agent partitions by host (the crawler's design).
    expect(byHost.partitioning).toBe("host");
    byHost.update(alive);
    byUrl.update(alive);
    const host = "h1.example:80";
    const urls = Array.from({ length: 60 }, (_, i) => `http://h1.example/p${i}`);
    expect(new Set(urls.map((url) => byHost.ownerOfUrl(url, host)))).toEqual(new Set([byHost.ownerOf(host)]));
    // Each URL's owner is the owner of its own hash, the same as a host's of that name would be.
    for (const url of urls) expect(byUrl.ownerOfUrl(url, host)).toBe(byUrl.ownerOf(url));
    expect(new Set(urls.map((url) => byUrl.ownerOfUrl(url, host)))).toEqual(new Set(["a", "b", "c"]));
    // By URL every agent may hold every host; by host only its own.
    const notOwn = HOSTS.filter((h) => byHost.ownerOf(h) !== "a");
    expect(notOwn.length).toBeGreaterThan(0);
    for (const h of notOwn) expect(byHost.holdsHost(h)).toBe(false);
    for (const h of notOwn) expect(byUrl.holdsHost(h)).toBe(true);
    for (const h of HOSTS.filter((h) => byHost.ownerOf(h) === "a")) expect(byHost.holdsHost(h)).toBe(true);
    // Once it has left its own view (a graceful leave), it holds no host by URL either: its queues go.
    byUrl.update(alive.filter(({ id }) => id !== "a"));
    expect(HOSTS.some((h) => byUrl.holdsHost(h))).toBe(false);
    expect(new Set(urls.map((url) => byUrl.ownerOfUrl(url, host)))).toEqual(new Set(["b", "c"]));
  });

  it("alone, owns every host; update returns false for the same set in any order", () => {
    const own = new Ownership("a", 1, REPLICAS, hasher);
    for (const host of HOSTS.slice(0, 20)) expect(own.ownerOf(host)).toBe("a");
    expect(own.share).toBe(1);
    expect(own.replicas).toBe(REPLICAS);
    expect(own.update([{ id: "a", capacity: 1 }])).toBe(false);
    expect(own.update([{ id: "a" }])).toBe(false); // capacity defaults to 1
    expect(own.update([{ id: "b" }, { id: "a" }])).toBe(true);
    expect(own.update([{ id: "a" }, { id: "b" }])).toBe(false);
    expect(own.update([{ id: "a" }, { id: "b", capacity: 2 }])).toBe(true);
  });

  it("splits hosts between the alive agents, proportionally to capacity", () => {
    const own = new Ownership("a", 1, REPLICAS, hasher);
    own.update([
      { id: "a", capacity: 1 },
      { id: "b", capacity: 3 },
    ]);
    const owners = new Set(HOSTS.map((host) => own.ownerOf(host)));
    expect(owners).toEqual(new Set(["a", "b"]));
    expect(own.replicas).toBe(REPLICAS);
    expect(own.share).toBeGreaterThan(0.1);
    expect(own.share).toBeLessThan(0.4);
    // The other agent's view of the same set agrees on every host, and the shares sum to 1.
    const other = new Ownership("b", 3, REPLICAS, hasher);
    other.update([
      { id: "a", capacity: 1 },
      { id: "b", capacity: 3 },
    ]);
    expect(other.replicas).toBe(3 * REPLICAS);
    for (const host of HOSTS) expect(other.ownerOf(host)).toBe(own.ownerOf(host));
    expect(own.share + other.share).toBeCloseTo(1, 9);
  });

  it("ownerOnceGone names who owns a host once this agent is gone, and nobody when it is alone", () => {
    const own = ownership("a", ["a", "b", "c"]);
    expect(HOSTS.some((host) => own.ownerOf(host) === "a")).toBe(true);
    expect(HOSTS.some((host) => own.ownerOf(host) !== "a")).toBe(true);
    for (const host of HOSTS) expect(own.ownerOnceGone(host), host).toBe(ownerIn(["b", "c"], host));
    expect(ownership("a", ["a"]).ownerOnceGone(HOSTS[0] as string)).toBeUndefined();
  });

  it("keeperFor names who owns a host once this agent and its holder are gone, and nobody without a third agent", () => {
    const own = ownership("a", ["a", "b", "c", "d"]);
    for (const host of HOSTS) {
      const holder = ownerIn(["b", "c", "d"], host);
      const rest = ["b", "c", "d"].filter((id) => id !== holder);
      expect(own.keeperFor(host, holder), host).toBe(ownerIn(rest, host));
    }
    // The same once this agent has left the view.
    const after = ownership("a", ["b", "c", "d"]);
    for (const host of HOSTS) {
      const holder = after.ownerOf(host);
      expect(after.keeperFor(host, holder), host).toBe(own.keeperFor(host, holder));
    }
    expect(ownership("a", ["a", "b"]).keeperFor(HOSTS[0] as string, "b")).toBeUndefined();
  });

  it("checkNewcomer accepts a fresh id and a member's own id, and refuses a replica collision", async () => {
    // A hasher under which "twin" seeds exactly the replicas of "b": every replica collides.
    const twinHasher: Hasher64 = {
      hashString: (text, seed) => hasher.hashString(text === "twin" ? "b" : text, seed),
      hashBytes: (bytes, seed) => hasher.hashBytes(bytes, seed),
    };
    const own = new Ownership("a", 1, REPLICAS, twinHasher);
    own.update([{ id: "a" }, { id: "b" }]);
    expect(codeOf(() => own.checkNewcomer({ id: "c", capacity: 1 }))).toBeUndefined();
    // An id already in the set is that member again (an address conflict is the detector's to refuse).
    expect(codeOf(() => own.checkNewcomer({ id: "b", capacity: 1 }))).toBeUndefined();
    expect(codeOf(() => own.checkNewcomer({ id: "twin", capacity: 1 }))).toBe(ErrorCode.IdConflict);
    // Gossip may still bring the colliding agent into the alive set: it is left out of the assignment.
    const before = HOSTS.map((host) => own.ownerOf(host));
    own.update([{ id: "a" }, { id: "b" }, { id: "twin" }]);
    expect(own.assignment.has("twin")).toBe(false);
    expect(HOSTS.map((host) => own.ownerOf(host))).toEqual(before);
  });

  it("keeps itself in the assignment when a colliding agent is left out, even after it had left its view", () => {
    const twinHasher: Hasher64 = {
      hashString: (text, seed) => hasher.hashString(text === "twin" ? "b" : text, seed),
      hashBytes: (bytes, seed) => hasher.hashBytes(bytes, seed),
    };
    const own = new Ownership("a", 1, REPLICAS, twinHasher);
    own.update([{ id: "b" }]); // a graceful leave: this agent is out of its own view
    expect(own.update([{ id: "a" }, { id: "b" }, { id: "twin" }])).toBe(true);
    expect(own.assignment.agents.map((agent) => agent.id)).toEqual(["a", "b"]);
  });

  it("lets an unexpected failure to build the assignment out, rather than leaving an agent out", () => {
    const failing: Hasher64 = {
      hashString: (text, seed) => {
        if (text === "broken") throw new TypeError("hasher failed");
        return hasher.hashString(text, seed);
      },
      hashBytes: (bytes, seed) => hasher.hashBytes(bytes, seed),
    };
    const own = new Ownership("a", 1, REPLICAS, failing);
    own.update([{ id: "a" }, { id: "b" }]);
    expect(codeOf(() => own.update([{ id: "a" }, { id: "b" }, { id: "broken" }]))).toBe("not a UbiError");
    expect(own.assignment.agents.map((agent) => agent.id)).toEqual(["a", "b"]);
  });

  it("tells apart alive sets whose ids and capacities read alike run together", () => {
    // "0" of capacity 12 with "b", and "0" of capacity 1 with "2b": both "0", "12", "b", "1" in a row.
    const own = new Ownership("0", 12, REPLICAS, hasher);
    own.update([
      { id: "0", capacity: 12 },
      { id: "b", capacity: 1 },
    ]);
    expect(
      own.update([
        { id: "0", capacity: 1 },
        { id: "2b", capacity: 1 },
      ]),
    ).toBe(true);
    expect(own.assignment.agents).toEqual([
      { id: "0", capacity: 1 },
      { id: "2b", capacity: 1 },
    ]);
    expect(new Set(HOSTS.map((host) => own.ownerOf(host)))).toEqual(new Set(["0", "2b"]));
  });
});

const probes = new Map<string, Ownership>();

/** The owner of `host` among `ids` (all of capacity 1), as any agent computes it. */
function ownerIn(ids: readonly string[], host: string): string {
  const key = ids.join(",");
  let probe = probes.get(key);
  if (!probe) {
    probe = ownership(ids[0] as string, ids);
    probes.set(key, probe);
  }
  return probe.ownerOf(host);
}
