import { describe, expect, it } from "vitest";
import { CrawlTenure } from "../../src/cluster/crawl-tenure.js";
import { HostClaims } from "../../src/cluster/host-claims.js";
import type { Ownership } from "../../src/cluster/ownership.js";
import type {
  ClaimReply,
  ClaimRequest,
  HandOverStatus,
  HostHandOver,
  Member,
} from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * The claim walk of HostClaims rule by rule, on a manual clock: agent "me" claims hosts it owns from
 * the agents along the circle (b, c, d unless a test says otherwise), whose answers the test writes.
 */

const member = (id: string): Member => ({
  id,
  address: `addr-${id}`,
  capacity: 1,
  incarnation: 1,
  status: "ALIVE",
  lastHeardMsAgo: 0,
});

/** One host's answer; `fingerprints` done fingerprints (8 bytes each). */
function answer(
  host: string,
  status: HandOverStatus,
  over: { holder?: string; more?: boolean; fingerprints?: number } = {},
): HostHandOver {
  return {
    host,
    status,
    holder: over.holder === undefined ? null : member(over.holder),
    done: new Uint8Array(8 * (over.fingerprints ?? 0)),
    more: over.more ?? false,
    pagesFetched: 0,
    abandoned: "",
  };
}

/** A claim sent, waiting for the test's answer. */
interface Asked {
  readonly peer: string;
  readonly request: ClaimRequest;
  reply(hosts: readonly HostHandOver[]): void;
  fail(): void;
}

/** Lets every promise continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(options: { maxAsked?: number; unheardWaitMs?: number } = {}) {
  const clock = new ManualClock();
  const tenure = new CrawlTenure();
  const alive = new Set(["me", "b", "c", "d"]);
  /** Agents that told this one they left. */
  const left = new Set<string>();
  /** host -> the other agents along the circle from it (b, c, d by default). */
  const circle = new Map<string, string[]>();
  /** host -> its owner ("me" by default). */
  const owner = new Map<string, string>();
  const ownership = {
    ownerOf: (host: string) => owner.get(host) ?? "me",
    assignment: {
      agents: ["b", "c", "d", "me"].map((id) => ({ id, capacity: 1 })),
      successors: (host: string, count: number) => (circle.get(host) ?? ["b", "c", "d"]).slice(0, count),
    },
  } as unknown as Pick<Ownership, "ownerOf" | "assignment">;
  const asked: Asked[] = [];
  const learned: string[] = [];
  const adopted: HostHandOver[] = [];
  const commits: { done: () => void; fail: () => void }[] = [];
  /** Commits wait for the test when true; else they resolve at once. */
  const holdCommits = { on: false };
  const claims = new HostClaims(options, {
    selfId: "me",
    clock,
    tenure,
    ownership,
    isAlive: (id) => alive.has(id),
    hasLeft: (m) => left.has(m.id),
    self: () => member("me"),
    claim: (peer, request, signal) =>
      new Promise<ClaimReply>((resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        asked.push({
          peer,
          request,
          reply: (hosts) => resolve({ hosts: [...hosts] }),
          fail: () => reject(new Error(`${peer} did not answer`)),
        });
      }),
    learnOf: (m) => learned.push(m.id),
    desk: {
      adopt: async (handOvers) => {
        adopted.push(...handOvers);
      },
    },
    agent: {
      commit: () =>
        holdCommits.on
          ? new Promise<void>((resolve, reject) => {
              commits.push({ done: resolve, fail: () => reject(new Error("disk full")) });
            })
          : Promise.resolve(),
    },
  });
  /** Settled results by host: 0, or the time to claim again relative to the start. */
  const results = new Map<string, number>();
  const t0 = clock.now();
  const admit = (host: string) => {
    const result = claims.admit(host);
    if (typeof result === "number") results.set(host, result === 0 ? 0 : result - t0);
    else void result.then((at) => results.set(host, at === 0 ? 0 : at - t0));
    return result;
  };
  /** The last claim, answered with one status (and options) for each of its hosts. */
  const answerLast = async (
    status: HandOverStatus,
    over: { holder?: string; more?: boolean; fingerprints?: number } = {},
  ) => {
    const last = asked.at(-1);
    if (last === undefined) throw new Error("nothing asked");
    last.reply(last.request.hosts.map(({ host }) => answer(host, status, over)));
    await settle();
  };
  /** The claims sent, as "peer:host/skip,…". */
  const log = () =>
    asked.map((a) => `${a.peer}:${a.request.hosts.map((h) => `${h.host}/${h.skip}`).join(",")}`);
  return {
    claims,
    clock,
    tenure,
    alive,
    left,
    circle,
    owner,
    asked,
    learned,
    adopted,
    commits,
    holdCommits,
    results,
    admit,
    answerLast,
    log,
  };
}

describe("HostClaims: when no claim is needed", () => {
  it("admits a host it holds at once", () => {
    const { tenure, admit, asked } = setup();
    tenure.take("h");
    expect(admit("h")).toBe(0);
    expect(asked).toEqual([]);
  });

  it("takes a host at once when no other agent is alive, or when it may ask none", async () => {
    const alone = setup();
    alone.alive.clear();
    alone.alive.add("me");
    expect(alone.admit("h")).toBe(0);
    expect(alone.tenure.holds("h")).toBe(true);

    const asksNone = setup({ maxAsked: 0 });
    expect(asksNone.admit("h")).toBe(0);
    expect(asksNone.tenure.holds("h")).toBe(true);
    asksNone.clock.advance(100);
    await settle();
    expect([...alone.asked, ...asksNone.asked]).toEqual([]);
  });
});

describe("HostClaims: batching", () => {
  it("sends the hosts woken together in one claim after 5 ms, the same wait for a host admitted twice", async () => {
    const { admit, clock, asked, log } = setup();
    const first = admit("h1");
    admit("h2");
    expect(admit("h1")).toBe(first);
    expect(clock.pending).toBe(1);
    clock.advance(4);
    await settle();
    expect(asked).toEqual([]);
    clock.advance(1);
    await settle();
    expect(log()).toEqual(["b:h1/0,h2/0"]);
    expect(asked[0]?.request.claimant).toEqual(member("me"));
    expect(clock.pending).toBe(0);
  });

  it("sends 256 hosts at once, without waiting", async () => {
    const { admit, asked, clock } = setup();
    for (let i = 0; i < 255; i++) admit(`h${i}`);
    await settle();
    expect(asked).toEqual([]);
    admit("h255");
    await settle();
    expect(asked.map((a) => a.request.hosts.length)).toEqual([256]);
    expect(clock.pending).toBe(0);
    clock.advance(5);
    await settle();
    expect(asked).toHaveLength(1);
    // The next claim carries only the hosts admitted since.
    admit("h256");
    clock.advance(5);
    await settle();
    expect(asked.map((a) => a.request.hosts.map((h) => h.host).join())).toEqual([
      asked[0]?.request.hosts.map((h) => h.host).join(),
      "h256",
    ]);
  });
});

describe("HostClaims: the walk along the circle", () => {
  it("asks the agents along the circle from the host, alive ones only, and takes it when none holds it", async () => {
    const { admit, clock, circle, alive, answerLast, log, tenure, results } = setup();
    circle.set("h", ["d", "c", "b"]);
    alive.delete("c");
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD");
    await answerLast("NOT_HELD");
    expect(log()).toEqual(["d:h/0", "b:h/0"]);
    expect(tenure.holds("h")).toBe(true);
    expect(results.get("h")).toBe(0);
  });

  it("asks at most maxAsked agents", async () => {
    const { admit, clock, answerLast, log, tenure, results } = setup({ maxAsked: 2 });
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD");
    await answerLast("NOT_HELD");
    expect(log()).toEqual(["b:h/0", "c:h/0"]);
    expect(tenure.holds("h")).toBe(true);
    expect(results.get("h")).toBe(0);
  });

  it("does not take a host no one holds once another agent owns it, and says to go on at once", async () => {
    const { admit, clock, answerLast, owner, tenure, results } = setup({ maxAsked: 1 });
    admit("h");
    clock.advance(5);
    await settle();
    owner.set("h", "c"); // the view changed meanwhile
    await answerLast("NOT_HELD");
    expect(tenure.holds("h")).toBe(false);
    expect(results.get("h")).toBe(0);
  });

  it("takes a host granted, even once another agent owns it, and asks no one more", async () => {
    const { admit, clock, answerLast, owner, tenure, results, log } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    owner.set("h", "c");
    await answerLast("GRANTED");
    expect(tenure.holds("h")).toBe(true);
    expect(results.get("h")).toBe(0);
    expect(log()).toEqual(["b:h/0"]);
  });

  it("claims again in 500 ms when told LATER, taking nothing", async () => {
    const { admit, clock, answerLast, tenure, results, log } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    clock.advance(10);
    await answerLast("LATER");
    expect(results.get("h")).toBe(515);
    expect(tenure.holds("h")).toBe(false);
    expect(log()).toEqual(["b:h/0"]);
  });

  it("settles each host of one claim by its own answer", async () => {
    const { admit, clock, asked, tenure, results } = setup({ maxAsked: 1 });
    admit("h1");
    admit("h2");
    clock.advance(5);
    await settle();
    asked[0]?.reply([answer("h1", "LATER"), answer("h2", "GRANTED")]);
    await settle();
    expect(results).toEqual(
      new Map([
        ["h1", 505],
        ["h2", 0],
      ]),
    );
    expect(tenure.heldHosts()).toEqual(["h2"]);
  });

  it("learns of the owner named by NOT_YOURS and claims again in 500 ms", async () => {
    const { admit, clock, answerLast, tenure, results, learned } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_YOURS", { holder: "x" });
    expect(learned).toEqual(["x"]);
    expect(results.get("h")).toBe(505);
    expect(tenure.holds("h")).toBe(false);
  });

  it("follows PASSED to the holder named, out of circle order, then goes on along the circle", async () => {
    const { admit, clock, answerLast, tenure, log, learned } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("PASSED", { holder: "d" });
    await answerLast("NOT_HELD"); // d passed it on meanwhile, to no one
    await answerLast("NOT_HELD");
    expect(log()).toEqual(["b:h/0", "d:h/0", "c:h/0"]);
    expect(tenure.holds("h")).toBe(true);
    expect(learned).toEqual([]); // d is alive here: nothing to learn
  });

  it("goes on along the circle when PASSED names an agent asked already, or itself", async () => {
    const { admit, clock, answerLast, log, learned } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("PASSED", { holder: "c" });
    await answerLast("PASSED", { holder: "b" }); // b was asked: it does not hold it
    await answerLast("PASSED", { holder: "me" });
    expect(log()).toEqual(["b:h/0", "c:h/0", "d:h/0"]);
    expect(learned).toEqual([]); // all alive here: nothing to learn
  });

  it("learns of a holder named that is not alive here, takes nothing, and claims again in 500 ms", async () => {
    const { admit, clock, answerLast, log, learned, tenure, results } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("PASSED", { holder: "x" });
    expect(learned).toEqual(["x"]);
    expect(log()).toEqual(["b:h/0"]);
    expect(tenure.holds("h")).toBe(false);
    expect(results.get("h")).toBe(505);
  });

  it("asks next the agent a NOT_HELD answer names as the host's owner before this one", async () => {
    const { admit, clock, answerLast, log, tenure, learned } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD", { holder: "d" });
    await answerLast("NOT_HELD", { holder: "b" }); // asked already: on along the circle
    await answerLast("NOT_HELD", { holder: "me" });
    expect(log()).toEqual(["b:h/0", "d:h/0", "c:h/0"]);
    expect(tenure.holds("h")).toBe(true);
    expect(learned).toEqual([]);
  });

  it("does not take a host whose owner before it, named by a NOT_HELD answer, it has not heard from yet", async () => {
    // A newcomer whose view has not filled in yet: agent x held the host, and only b knows of x.
    const { admit, clock, answerLast, log, tenure, learned, results, alive } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD", { holder: "x" });
    expect(learned).toEqual(["x"]);
    expect(log()).toEqual(["b:h/0"]);
    expect(tenure.holds("h")).toBe(false);
    expect(results.get("h")).toBe(505);
    // Once x answered heartbeats (alive here), the next claim asks it after b, and x grants the host.
    alive.add("x");
    clock.advance(500);
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD", { holder: "x" });
    await answerLast("GRANTED", { fingerprints: 3 });
    expect(log()).toEqual(["b:h/0", "b:h/0", "x:h/0"]);
    expect(tenure.holds("h")).toBe(true);
  });

  it("waits for an agent it has not heard from at most unheardWaitMs, then goes on along the circle", async () => {
    // One it cannot reach while b can: named by b at every claim, it would hold the host forever.
    const { admit, clock, answerLast, log, tenure, results } = setup({ unheardWaitMs: 2000 });
    for (let round = 0; round < 4; round++) {
      admit("h");
      clock.advance(5);
      await settle();
      await answerLast("NOT_HELD", { holder: "x" });
      expect(tenure.holds("h"), `round ${round}`).toBe(false);
      clock.advance(500);
    }
    // 2,020 ms after the first wait: the walk goes on without x, and nobody asked holds the host.
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD", { holder: "x" });
    await answerLast("NOT_HELD");
    await answerLast("NOT_HELD");
    expect(log().slice(-3)).toEqual(["b:h/0", "c:h/0", "d:h/0"]);
    expect(tenure.holds("h")).toBe(true);
    expect(results.get("h")).toBe(0);
  });

  it("does not wait for an agent named as the host's owner before it that told it it left: its hosts were handed over", async () => {
    const { admit, clock, answerLast, log, tenure, learned, results, left } = setup();
    left.add("x");
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD", { holder: "x" });
    await answerLast("NOT_HELD");
    await answerLast("NOT_HELD");
    expect(log()).toEqual(["b:h/0", "c:h/0", "d:h/0"]);
    expect(learned).toEqual([]);
    expect(tenure.holds("h")).toBe(true);
    expect(results.get("h")).toBe(0);
  });

  it("asks the same agent again for the rest of the done URLs, skipping those received", async () => {
    const { admit, clock, answerLast, log, adopted } = setup();
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("NOT_HELD", { more: true, fingerprints: 2 });
    await answerLast("NOT_HELD", { more: true, fingerprints: 3 });
    await answerLast("NOT_HELD", { fingerprints: 1 });
    expect(log()).toEqual(["b:h/0", "b:h/2", "b:h/5", "c:h/0"]);
    expect(adopted.map((a) => a.done.length / 8)).toEqual([2, 3, 1]);
  });

  it("claims again in 500 ms when an alive agent does not answer; skips one gone from the view", async () => {
    const live = setup();
    live.admit("h");
    live.clock.advance(5);
    await settle();
    live.clock.advance(20);
    live.asked.at(-1)?.fail();
    await settle();
    expect(live.results.get("h")).toBe(525);
    expect(live.tenure.holds("h")).toBe(false);
    expect(live.log()).toEqual(["b:h/0"]);

    const gone = setup();
    gone.admit("h");
    gone.clock.advance(5);
    await settle();
    await gone.answerLast("NOT_HELD", { more: true, fingerprints: 4 });
    gone.alive.delete("b");
    gone.asked.at(-1)?.fail();
    await settle();
    expect(gone.log()).toEqual(["b:h/0", "b:h/4", "c:h/0"]);
  });

  it("stops waiting for an agent that leaves the view mid-claim (a lost answer) and goes on without it", async () => {
    const { admit, clock, alive, claims, log, answerLast, results, tenure } = setup();
    admit("h1");
    admit("h2");
    clock.advance(5);
    await settle();
    expect(log()).toEqual(["b:h1/0,h2/0"]);
    // No answer from b, whose deadline is far: it is declared dead meanwhile.
    alive.delete("b");
    claims.peerGone("c");
    await settle();
    expect(log()).toHaveLength(1);
    claims.peerGone("b");
    await settle();
    expect(log()).toEqual(["b:h1/0,h2/0", "c:h1/0,h2/0"]);
    await answerLast("NOT_HELD");
    await answerLast("NOT_HELD");
    expect(results.get("h1")).toBe(0);
    expect(tenure.holds("h2")).toBe(true);
  });
});

describe("HostClaims: commit and stop", () => {
  it("takes and admits a host only once what the answers said is committed", async () => {
    const { admit, clock, answerLast, holdCommits, commits, tenure, results } = setup({ maxAsked: 1 });
    holdCommits.on = true;
    admit("h");
    clock.advance(5);
    await settle();
    await answerLast("GRANTED");
    expect(commits).toHaveLength(1);
    expect(tenure.holds("h")).toBe(false);
    expect(results.has("h")).toBe(false);
    commits[0]?.done();
    await settle();
    expect(tenure.holds("h")).toBe(true);
    expect(results.get("h")).toBe(0);
  });

  it("claims every host again in 500 ms when that commit fails", async () => {
    const { admit, clock, answerLast, holdCommits, commits, tenure, results } = setup({ maxAsked: 1 });
    holdCommits.on = true;
    admit("h1");
    admit("h2");
    clock.advance(5);
    await settle();
    await answerLast("GRANTED");
    clock.advance(30);
    commits[0]?.fail();
    await settle();
    expect(results).toEqual(
      new Map([
        ["h1", 535],
        ["h2", 535],
      ]),
    );
    expect(tenure.heldHosts()).toEqual([]);
  });

  it("once stopped: tells waiting visits to come back in 500 ms, sends nothing queued, takes nothing granted", async () => {
    const { claims, admit, clock, answerLast, asked, tenure, results } = setup();
    admit("h1");
    clock.advance(5);
    await settle(); // h1's claim is in progress
    admit("h2"); // queued
    clock.advance(2);
    claims.stop();
    await settle();
    expect(results).toEqual(
      new Map([
        ["h1", 507],
        ["h2", 507],
      ]),
    );
    expect(clock.pending).toBe(0);
    clock.advance(10);
    await answerLast("GRANTED");
    expect(asked).toHaveLength(1);
    expect(tenure.heldHosts()).toEqual([]);
    expect(admit("h3")).toBe(clock.now() + 500);
    tenure.take("h4");
    expect(admit("h4")).toBe(0);
  });
});
