import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { type DigestPeers, DigestRegistry, DuplicateDetector } from "../../src/dedup/index.js";
import type { PayloadOriginal } from "../../src/storage/index.js";

const digest = (c: string) => `sha1:${c.repeat(32)}`;
const original = (url: string): PayloadOriginal => ({
  url,
  date: "2026-11-27T10:00:00.000Z",
  recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
});

/**
 * Two agents, `a` and `b`, each with its registry and detector; digests whose 6th character is before
 * "N" belong to a, the others to b. Peer calls go straight to the other registry, counted.
 */
function pair(options: { failCalls?: boolean; claimLeaseMs?: number; answerDelayMs?: number } = {}) {
  const registries = new Map<string, DigestRegistry>();
  /** Agents whose peers' calls to them fail, for as long as they are in the set. */
  const down = new Set<string>();
  /** Copies each agent's registry counted. */
  const copies = new Map<string, number>();
  const calls: { from: string; to: string; kind: "check" | "settle"; size: number; riding?: number }[] = [];
  const detectors = new Map<string, DuplicateDetector>();
  for (const id of ["a", "b"]) {
    const registry = new DigestRegistry(
      {},
      {
        clock: systemClock,
        lookup: async (d) => d.map(() => undefined),
        save: () => {},
        onCopy: () => copies.set(id, (copies.get(id) ?? 0) + 1),
      },
    );
    registries.set(id, registry);
    const peers: DigestPeers = {
      ownerOf: (d) => ((d[5] as string) < "N" ? "a" : "b"),
      check: async (peer, questions, settlements) => {
        calls.push({
          from: id,
          to: peer,
          kind: "check",
          size: questions.length,
          ...(settlements.length > 0 ? { riding: settlements.length } : {}),
        });
        if (options.failCalls || down.has(peer)) throw new Error("unreachable");
        if (options.answerDelayMs) await new Promise((resolve) => setTimeout(resolve, options.answerDelayMs));
        (registries.get(peer) as DigestRegistry).settle(id, settlements);
        return (registries.get(peer) as DigestRegistry).check(questions);
      },
      settle: async (peer, settlements) => {
        calls.push({ from: id, to: peer, kind: "settle", size: settlements.length });
        if (down.has(peer)) throw new Error("unreachable");
        (registries.get(peer) as DigestRegistry).settle(id, settlements);
      },
    };
    detectors.set(
      id,
      new DuplicateDetector(
        { batchMs: 5, claimLeaseMs: options.claimLeaseMs ?? 30_000 },
        { selfId: id, clock: systemClock, registry, peers },
      ),
    );
  }
  return {
    a: detectors.get("a") as DuplicateDetector,
    b: detectors.get("b") as DuplicateDetector,
    calls,
    down,
    copies,
  };
}

describe("DuplicateDetector", () => {
  it("asks the digest's owner (the first question at once, those asked while it is in flight in one message), and only about digests others own", async () => {
    const { a, calls } = pair();
    const remote = ["P", "Q", "R", "S"].map(digest);
    const verdicts = await Promise.all([...remote, digest("C")].map((d) => a.check(d)));
    expect(verdicts).toEqual([
      ...remote.map(() => ({ kind: "claimed", owner: "b" })),
      { kind: "claimed", owner: "a" },
    ]);
    expect(calls).toEqual([
      { from: "a", to: "b", kind: "check", size: 1 },
      { from: "a", to: "b", kind: "check", size: 3 },
    ]);
  });

  it("makes a copy fetched by another agent a revisit of the first, once the claimant settles", async () => {
    const { a, b, calls } = pair();
    const d = digest("Z");
    expect(await a.check(d)).toEqual({ kind: "claimed", owner: "b" });
    // b fetched the same bytes meanwhile: it waits for a's claim to settle…
    const waiting = b.check(d);
    await new Promise((resolve) => setTimeout(resolve, 120));
    await a.settle("b", d, original("http://mirror-a.test/"));
    expect(await waiting).toEqual({ kind: "seen", original: original("http://mirror-a.test/") });
    expect(calls.filter((call) => call.kind === "settle")).toEqual([
      { from: "a", to: "b", kind: "settle", size: 1 },
    ]);
  });

  it("sends settlements along with the next questions to the same owner, not in messages of their own", async () => {
    const { a, calls } = pair();
    expect(await a.check(digest("P"))).toEqual({ kind: "claimed", owner: "b" });
    const settled = a.settle("b", digest("P"), original("http://a.test/"));
    expect(await a.check(digest("Q"))).toEqual({ kind: "claimed", owner: "b" });
    await settled;
    expect(calls).toEqual([
      { from: "a", to: "b", kind: "check", size: 1 },
      { from: "a", to: "b", kind: "check", size: 1, riding: 1 },
    ]);
    // Settled at b: another copy of P is a revisit.
    expect(await a.check(digest("P"))).toEqual({ kind: "seen", original: original("http://a.test/") });
  });

  it("lets the next agent claim at once when the claimant could not store the payload", async () => {
    const { a, b } = pair();
    const d = digest("E");
    expect(await b.check(d)).toEqual({ kind: "claimed", owner: "a" });
    const waiting = a.check(d);
    await b.settle("a", d, undefined);
    expect(await waiting).toEqual({ kind: "claimed", owner: "a" });
  });

  it("stores the payload whole (unchecked) when the owner cannot be asked", async () => {
    const { a, calls } = pair({ failCalls: true });
    expect(await a.check(digest("X"))).toEqual({ kind: "unchecked", owner: "b" });
    expect(calls).toHaveLength(1);
  });

  it("gives up waiting once the other claimant's lease is long over, and stores the payload itself", async () => {
    const { a, b } = pair({ claimLeaseMs: 100 });
    const d = digest("F");
    expect(await a.check(d)).toEqual({ kind: "claimed", owner: "a" });
    // The registry's own lease is the default 30 s: b keeps hearing pending until its patience (lease +
    // 2 s) ends.
    const startedAt = Date.now();
    expect(await b.check(d)).toEqual({ kind: "unchecked", owner: "a" });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2100);
  }, 10_000);

  it("stops asking an owner whose answers are slow (or missing): its payloads are stored whole", async () => {
    const { a, calls } = pair({ answerDelayMs: 600 });
    expect(await a.check(digest("P"))).toEqual({ kind: "claimed", owner: "b" });
    const startedAt = Date.now();
    expect(await a.check(digest("Q"))).toEqual({ kind: "unchecked", owner: "b" });
    expect(Date.now() - startedAt).toBeLessThan(100);
    expect(await a.check(digest("C"))).toEqual({ kind: "claimed", owner: "a" });
    expect(calls).toHaveLength(1);

    const failing = pair({ failCalls: true });
    expect(await failing.a.check(digest("X"))).toEqual({ kind: "unchecked", owner: "b" });
    expect(await failing.a.check(digest("Y"))).toEqual({ kind: "unchecked", owner: "b" });
    expect(failing.calls).toHaveLength(1);
  });

  it("stores a payload raced while its owner cannot be asked at most once per agent, and the owner counts the copy", async () => {
    const { a, b, down, copies, calls } = pair();
    const d = digest("H"); // a's
    const atA = original("http://h.test/");
    expect(await a.check(d)).toEqual({ kind: "claimed", owner: "a" });
    await a.settle("a", d, atA);
    // b cannot reach a: four of its pages hold the same bytes (a page, its mirror, two URL aliases).
    down.add("a");
    const verdicts = [b.check(d), b.check(d), b.check(d), b.check(d)];
    const first = await Promise.race(verdicts);
    expect(first).toEqual({ kind: "unchecked", owner: "a" });
    // The other three wait for the one storing it here, and are revisits of it once it is stored.
    const atB = original("http://mirror-h.test/");
    down.delete("a");
    await b.settle("a", d, atB);
    const all = await Promise.all(verdicts);
    expect(all.filter((v) => v.kind === "unchecked")).toHaveLength(1);
    expect(all.filter((v) => v.kind === "seen")).toEqual(
      [1, 2, 3].map(() => ({ kind: "seen", original: atB })),
    );
    // Told of b's copy, a counted it and kept its own first original.
    expect(copies.get("a")).toBe(1);
    expect(await a.check(d)).toEqual({ kind: "seen", original: atA });
    // A later copy at b is a revisit of b's own, without a question.
    const asked = calls.length;
    expect(await b.check(d)).toEqual({ kind: "seen", original: atB });
    expect(calls).toHaveLength(asked);
  });

  it("takes a payload stored while its owner could not be asked as the original, once the owner is told", async () => {
    const { a, b, down, copies } = pair();
    const d = digest("J"); // a's
    down.add("a");
    expect(await b.check(d)).toEqual({ kind: "unchecked", owner: "a" });
    down.delete("a");
    await b.settle("a", d, original("http://j.test/"));
    // Not a copy: the first stored. a's own page of the same bytes is a revisit of b's.
    expect(copies.get("a")).toBeUndefined();
    expect(await a.check(d)).toEqual({ kind: "seen", original: original("http://j.test/") });
  });

  it("stops waiting when its signal is aborted", async () => {
    const { a, b } = pair();
    const d = digest("G");
    await a.check(d);
    const controller = new AbortController();
    const waiting = b.check(d, controller.signal);
    controller.abort(new Error("stopping"));
    await expect(waiting).rejects.toThrow("stopping");
  });
});
