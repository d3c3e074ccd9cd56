import { describe, expect, it, vi } from "vitest";
import { CrawlTenure } from "../../src/cluster/crawl-tenure.js";
import { HandOverDesk, packFingerprints, unpackFingerprints } from "../../src/cluster/hand-over.js";
import type { Ownership } from "../../src/cluster/ownership.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import type { MemberEntry } from "../../src/failure-detector/index.js";
import type { HandedHistories, PageHistory } from "../../src/recrawl/index.js";
import type { HandOverRequest, HostHandOver, Member } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

const member = (id: string, status: MemberEntry["status"] = "alive"): MemberEntry => ({
  id,
  address: `127.0.0.1:${7000 + id.charCodeAt(0)}`,
  capacity: 1,
  incarnation: 1,
  status,
  lastHeardMs: 1_000_000,
});
const wire = (id: string): Member => ({ ...member(id), status: "ALIVE", lastHeardMsAgo: 0 });

/**
 * A desk of agent "self" over fakes: owners by host, the owners before them (the next along the circle),
 * done sets, busy hosts, known members.
 */
function desk() {
  const owners = new Map<string, string>();
  const previousOwners = new Map<string, string>();
  const nextOwners = new Map<string, string>();
  const done = new Map<string, bigint[]>();
  const records = new Map<string, { pagesFetched: number; abandoned?: string }>();
  const busy = new Set<string>();
  const members = new Map<string, MemberEntry>([["self", member("self")]]);
  const adopted: { host: string; handOver: unknown }[] = [];
  const histories = new Map<string, PageHistory[]>();
  const adoptedHistories: HandedHistories[] = [];
  const released: string[] = [];
  const heard: string[] = [];
  const quiesced: [string, number][] = [];
  const entrusted: string[] = [];
  /** Whether the links and drained URLs of a hand-over get acknowledged in time. */
  const delivery = { ok: true };
  /** What the barrier waits on before it says whether the delivery was acknowledged. */
  const barrier: { wait: Promise<void> } = { wait: Promise.resolve() };
  let commits = 0;
  const tenure = new CrawlTenure();
  const handOvers = new HandOverDesk({
    selfId: "self",
    clock: new ManualClock(),
    tenure,
    ownership: {
      ownerOf: (host) => owners.get(host) ?? "self",
      ownerOnceGone: (host) => nextOwners.get(host),
      assignment: {
        successors: (host: string) => [previousOwners.get(host) ?? "self"],
      } as unknown as Ownership["assignment"],
    },
    agent: {
      quiesce: async (host, ms) => {
        quiesced.push([host, ms]);
        return !busy.has(host);
      },
      doneOf: async (host, skip, limit) => (done.get(host) ?? []).slice(skip, skip + limit),
      hostRecord: (host) => records.get(host) ?? { pagesFetched: 0 },
      adopt: (host, handOver) => adopted.push({ host, handOver }),
      commit: async () => {
        commits++;
      },
      historiesOf: async function* (host, skip) {
        yield* (histories.get(host) ?? []).slice(skip);
      },
      adoptHistories: async (handed) => {
        adoptedHistories.push(...handed);
        commits++;
      },
      releaseHistories: async (host) => {
        released.push(host);
      },
    },
    memberOf: (id) => members.get(id),
    heardFrom: (entry) => heard.push(entry.id),
    beforeHandOver: async (hosts, to) => {
      for (const host of hosts) entrusted.push(`${host}>${to}`);
      await barrier.wait;
      return delivery.ok;
    },
  });
  return {
    handOvers,
    tenure,
    owners,
    previousOwners,
    nextOwners,
    done,
    records,
    busy,
    members,
    adopted,
    histories,
    adoptedHistories,
    released,
    heard,
    quiesced,
    entrusted,
    delivery,
    barrier,
    commits: () => commits,
  };
}

const claim = (claimant: string, ...hosts: string[]) => ({
  claimant: wire(claimant),
  hosts: hosts.map((host) => ({ host, skip: 0 })),
});
const summary = (hosts: readonly HostHandOver[]) =>
  hosts.map((h) => `${h.host}:${h.status}:${h.holder?.id ?? "-"}:${unpackFingerprints(h.done).join("+")}`);

/** `count` histories of pages of `host`, each planned; `pad` makes each weigh about that many bytes more. */
const histories = (host: string, count: number, pad = 0): PageHistory[] =>
  Array.from({ length: count }, (_, i) => ({
    url: `http://${host}/p${i}.html`,
    depth: 1,
    etag: `"${"e".repeat(pad)}${i}"`,
    visits: 1,
    changes: 0,
    observedMs: 0,
    lastAtMs: 1000 + i,
    nextAtMs: 5000 + i,
  }));

describe("fingerprint packing", () => {
  it("packs fingerprints as 8-byte big-endian words and reads them back", () => {
    const bytes = packFingerprints([1n, 0x0102030405060708n, 0xffff_ffff_ffff_ffffn]);
    expect(Array.from(bytes.subarray(8, 16))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(unpackFingerprints(bytes)).toEqual([1n, 0x0102030405060708n, 0xffff_ffff_ffff_ffffn]);
    // A view into a larger buffer reads only its own bytes; a trailing partial word is ignored.
    const inner = new Uint8Array([9, ...packFingerprints([5n]), 7, 7]).subarray(1, 12);
    expect(unpackFingerprints(inner)).toEqual([5n]);
    expect(unpackFingerprints(new Uint8Array(0))).toEqual([]);
  });
});

describe("HandOverDesk.answer", () => {
  it("gives each claimed host its verdict: granted, passed, not held, not yours, later", async () => {
    const d = desk();
    for (const host of ["held", "passed-to-c", "passed-to-gone", "passed-to-left", "unknown", "pushing"]) {
      d.owners.set(host, "c");
    }
    d.owners.set("not-c", "b");
    d.members.set("b", member("b"));
    d.members.set("x", member("x"));
    d.members.set("y", member("y", "suspected"));
    d.tenure.take("held");
    d.tenure.pass("passed-to-c", "c");
    d.tenure.pass("passed-to-gone", "x");
    d.tenure.pass("passed-to-left", "y");
    d.done.set("held", [11n, 12n]);
    const reply = await d.handOvers.answer(
      claim("c", "held", "passed-to-c", "passed-to-gone", "passed-to-left", "unknown", "not-c"),
    );
    expect(summary(reply.hosts)).toEqual([
      "held:GRANTED:-:11+12",
      "passed-to-c:GRANTED:-:",
      "passed-to-gone:PASSED:x:",
      "passed-to-left:NOT_HELD:-:",
      "unknown:NOT_HELD:-:",
      "not-c:NOT_YOURS:b:",
    ]);
    // The granted host is passed to the claimant, which was heard from; only granted hosts were quiesced.
    expect(d.tenure.passedTo("held")).toBe("c");
    expect(d.heard).toEqual(["c"]);
    expect(d.quiesced).toEqual([
      ["held", 20_000],
      ["passed-to-c", 20_000],
    ]);
  });

  it("sends no done URLs in a NOT_YOURS answer for a host it holds: they leave only through the barrier", async () => {
    // Views differ: the claimant owns the host in its view, this agent in its own and still crawls it.
    // A done set recorded by the claimant now would outlive this agent's crash, while the links its
    // pages gave are still queued here alone.
    const d = desk();
    d.members.set("b", member("b"));
    d.owners.set("mine", "self");
    d.tenure.take("mine");
    d.done.set("mine", [21n, 22n]);
    d.owners.set("b-s", "b");
    d.done.set("b-s", [31n]);
    const reply = await d.handOvers.answer(claim("c", "mine", "b-s"));
    expect(summary(reply.hosts)).toEqual(["mine:NOT_YOURS:self:", "b-s:NOT_YOURS:b:31"]);
    expect(d.tenure.holds("mine")).toBe(true);
    expect(d.entrusted).toEqual([]);
  });

  it("names the owner before the claimant, when another agent, in a NOT_HELD answer", async () => {
    // The claimant's view may lack that agent (a newcomer's, filling in): it must not take the host.
    const d = desk();
    for (const host of ["was-b", "was-self"]) d.owners.set(host, "c");
    d.members.set("b", member("b"));
    d.previousOwners.set("was-b", "b");
    const reply = await d.handOvers.answer(claim("c", "was-b", "was-self"));
    expect(summary(reply.hosts)).toEqual(["was-b:NOT_HELD:b:", "was-self:NOT_HELD:-:"]);
  });

  it("answers LATER for a granted host with a request still in flight", async () => {
    const d = desk();
    d.owners.set("busy", "c");
    d.tenure.take("busy");
    d.busy.add("busy");
    const reply = await d.handOvers.answer(claim("c", "busy"));
    expect(reply.hosts[0]?.status).toBe("LATER");
    expect(d.tenure.holds("busy")).toBe(true);
    // The links its pages gave wait for the request in flight to end, and go at the next claim.
    expect(d.entrusted).toEqual([]);
    d.busy.delete("busy");
    expect((await d.handOvers.answer(claim("c", "busy"))).hosts[0]?.status).toBe("GRANTED");
    expect(d.entrusted).toEqual(["busy>c"]);
  });

  it("gives the links found on a granted host's pages to be kept elsewhere, and only a granted host's", async () => {
    // The claimant gets the host's done set: a link one of its pages gave, still waiting here, would be
    // known here alone, and lost with this agent (its page, done, is not fetched again).
    const d = desk();
    for (const host of ["held", "unknown"]) d.owners.set(host, "c");
    d.tenure.take("held");
    await d.handOvers.answer(claim("c", "held", "unknown"));
    expect(d.entrusted).toEqual(["held>c"]);
  });

  it("hands a host over only once what its pages gave and its queue held is acknowledged elsewhere", async () => {
    // Its done set must not leave while the only copy of a link or a drained URL is still here.
    const d = desk();
    d.owners.set("held", "c");
    d.tenure.take("held");
    d.done.set("held", [11n, 12n]);
    d.histories.set("held", histories("held", 1));
    d.delivery.ok = false;
    const reply = await d.handOvers.answer(claim("c", "held"));
    // Not even with a LATER answer: the claimant records what any answer carries.
    expect(summary(reply.hosts)).toEqual(["held:LATER:-:"]);
    // Taken back, not left passed to a claimant that may never ask again: pushed or granted later.
    expect(d.tenure.holds("held")).toBe(true);
    expect(reply.hosts[0]?.pages).toEqual([]);
    expect(reply.hosts[0]?.more).toBe(false);
    expect(d.released).toEqual([]);
    d.owners.set("lost", "p");
    d.tenure.take("lost");
    const sent: string[] = [];
    const push = await d.handOvers.pushLost(async (owner, request) => {
      sent.push(`${owner}:${request.hosts.map((h) => h.host).join()}`);
      return { taken: 1 };
    });
    expect(sent).toEqual([]);
    expect(push.handed).toBe(0);
    expect(d.tenure.holds("lost")).toBe(true);
    d.delivery.ok = true;
    expect((await d.handOvers.answer(claim("c", "held"))).hosts[0]?.status).toBe("GRANTED");
  });

  it("answers every other claim of a host LATER, with no done set, while an answer passing it waits for its barrier", async () => {
    const d = desk();
    for (const id of ["c1", "c2"]) d.members.set(id, member(id));
    d.owners.set("h", "c1");
    d.tenure.take("h");
    d.done.set("h", [7n, 8n]);
    let open = () => {};
    d.barrier.wait = new Promise((resolve) => {
      open = resolve;
    });
    const first = d.handOvers.answer(claim("c1", "h"));
    await vi.waitFor(() => expect(d.entrusted).toEqual(["h>c1"]));
    // A claimant whose view differs: the host is not its own here, and its done set stays.
    expect(summary((await d.handOvers.answer(claim("c2", "h"))).hosts)).toEqual(["h:NOT_YOURS:c1:"]);
    // The view changes: c2 owns it here too, and c1 is not named as its holder while c1's answer waits.
    d.owners.set("h", "c2");
    expect(summary((await d.handOvers.answer(claim("c2", "h"))).hosts)).toEqual(["h:LATER:-:"]);
    d.owners.set("h", "c1");
    // c1 asks again (its first call timed out): LATER, the first answer decides.
    expect(summary((await d.handOvers.answer(claim("c1", "h"))).hosts)).toEqual(["h:LATER:-:"]);
    d.delivery.ok = false;
    open();
    expect(summary((await first).hosts)).toEqual(["h:LATER:-:"]);
    // Taken back by the only answer that passed it: held here alone.
    expect(d.tenure.holds("h")).toBe(true);
    d.delivery.ok = true;
    d.barrier.wait = Promise.resolve();
    expect(summary((await d.handOvers.answer(claim("c1", "h"))).hosts)).toEqual(["h:GRANTED:-:7+8"]);
    expect(d.tenure.holds("h")).toBe(false);
  });

  it("stops waiting for a push's answer when the agent pushed to leaves the view: its hosts stay here", async () => {
    const d = desk();
    d.owners.set("lost", "p");
    d.tenure.take("lost");
    const signals: AbortSignal[] = [];
    // A call lost in a partition: it ends only when aborted.
    const push = d.handOvers.pushLost(
      (_owner, _request, signal) =>
        new Promise((_resolve, reject) => {
          signals.push(signal);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
    );
    await vi.waitFor(() => expect(signals).toHaveLength(1));
    d.handOvers.peerGone("q");
    expect(signals[0]?.aborted).toBe(false);
    d.handOvers.peerGone("p");
    expect(await push).toEqual({ handed: 0, failed: 1 });
    expect(d.tenure.holds("lost")).toBe(true);
  });

  it("gives no links to be kept elsewhere while leaving: its queues go to their owners anyway", async () => {
    const d = desk();
    d.tenure.take("mine");
    d.handOvers.close();
    d.nextOwners.set("mine", "p");
    const outcome = await d.handOvers.pushAll(async () => ({ taken: 1 }));
    expect(outcome).toEqual({ handed: 1, failed: 0 });
    expect(d.entrusted).toEqual([]);
  });

  it("names no holder it no longer knows: the claimant asks on", async () => {
    const d = desk();
    d.owners.set("h", "b");
    const reply = await d.handOvers.answer(claim("c", "h"));
    expect(reply.hosts[0]).toMatchObject({ status: "NOT_HELD", holder: null });
  });

  it("sends a host's page count and abandonment with its done URLs", async () => {
    const d = desk();
    d.owners.set("h", "c");
    d.tenure.take("h");
    d.records.set("h", { pagesFetched: 9, abandoned: "robots unavailable" });
    const [entry] = (await d.handOvers.answer(claim("c", "h"))).hosts;
    expect(entry).toMatchObject({ pagesFetched: 9, abandoned: "robots unavailable", more: false });
    d.records.set("h", { pagesFetched: 1 });
    const [again] = (await d.handOvers.answer(claim("c", "h"))).hosts;
    expect(again?.abandoned).toBe("");
  });

  it("skips the done URLs the claimant has, and says when more follow", async () => {
    const d = desk();
    d.owners.set("h", "c");
    d.tenure.take("h");
    const many = Array.from({ length: 262_150 }, (_, i) => BigInt(i + 1));
    d.done.set("h", many);
    const [first] = (await d.handOvers.answer(claim("c", "h"))).hosts;
    expect(first?.more).toBe(true);
    expect(first?.done.length).toBe(2 * 1024 * 1024);
    const rest = await d.handOvers.answer({ claimant: wire("c"), hosts: [{ host: "h", skip: 262_144 }] });
    expect(unpackFingerprints(rest.hosts[0]?.done as Uint8Array)).toEqual(many.slice(262_144));
    expect(rest.hosts[0]?.more).toBe(false);
  });
});

describe("HandOverDesk.takeIn and adopt", () => {
  const handOver = (host: string, over: Partial<HostHandOver> = {}): HostHandOver => ({
    host,
    status: "GRANTED",
    holder: null,
    done: packFingerprints([]),
    more: false,
    pagesFetched: 0,
    abandoned: "",
    ...over,
  });

  it("records the pushed hosts' past durably, then holds those complete", async () => {
    const d = desk();
    const request: HandOverRequest = {
      from: wire("b"),
      hosts: [
        handOver("a", { done: packFingerprints([3n]), pagesFetched: 2 }),
        handOver("b", { more: true, abandoned: "gone" }),
        handOver("c"),
      ],
    };
    expect(await d.handOvers.takeIn(request)).toEqual({ taken: 3 });
    expect(d.heard).toEqual(["b"]);
    expect(d.commits()).toBe(1);
    expect(d.adopted).toEqual([
      { host: "a", handOver: { done: [3n], pagesFetched: 2 } },
      { host: "b", handOver: { done: [], pagesFetched: 0, abandoned: "gone" } },
    ]);
    expect(d.tenure.heldHosts()).toEqual(["a", "c"]);
  });

  it("refuses pushed hosts while leaving itself", async () => {
    const d = desk();
    d.handOvers.close();
    const error = await d.handOvers
      .takeIn({ from: wire("b"), hosts: [handOver("a")] })
      .catch((e: unknown) => e);
    expect(isUbiError(error, ErrorCode.Leaving)).toBe(true);
    expect(d.tenure.heldHosts()).toEqual([]);
  });
});

describe("HandOverDesk pushes", () => {
  it("pushes held hosts to their next owners when leaving, keeping those it could not hand over", async () => {
    const d = desk();
    for (const host of ["a", "b", "c", "d", "e"]) d.tenure.take(host);
    d.nextOwners.set("a", "p");
    d.nextOwners.set("b", "p");
    d.nextOwners.set("c", "q");
    d.nextOwners.set("d", "r");
    // e has no next owner (this agent is the last): it stays.
    d.busy.add("b");
    const sent: { owner: string; hosts: string[]; from: string }[] = [];
    const outcome = await d.handOvers.pushAll(async (owner, request) => {
      sent.push({ owner, hosts: request.hosts.map((h) => h.host), from: request.from.id });
      if (owner === "r") throw new Error("r is down");
      return { taken: request.hosts.length };
    }, 5);
    expect(outcome).toEqual({ handed: 2, failed: 2 });
    expect(sent).toEqual([
      { owner: "p", hosts: ["a"], from: "self" },
      { owner: "q", hosts: ["c"], from: "self" },
      { owner: "r", hosts: ["d"], from: "self" },
    ]);
    expect(d.quiesced).toContainEqual(["a", 5]);
    expect(d.tenure.passedTo("a")).toBe("p");
    expect(d.tenure.passedTo("c")).toBe("q");
    expect(d.tenure.heldHosts().sort()).toEqual(["b", "d", "e"]);
  });

  it("pushes only the hosts it no longer owns, and tells whether it holds any", async () => {
    const d = desk();
    d.tenure.take("mine");
    d.tenure.take("lost");
    expect(d.handOvers.holdsLostHosts()).toBe(false);
    d.owners.set("lost", "p");
    expect(d.handOvers.holdsLostHosts()).toBe(true);
    const sent: string[] = [];
    const outcome = await d.handOvers.pushLost(async (owner, request) => {
      sent.push(`${owner}:${request.hosts.map((h) => h.host).join()}`);
      return { taken: 1 };
    });
    expect(outcome).toEqual({ handed: 1, failed: 0 });
    expect(sent).toEqual(["p:lost"]);
    expect(d.quiesced).toEqual([["lost", 20_000]]);
    expect(d.entrusted).toEqual(["lost>p"]);
    expect(d.handOvers.holdsLostHosts()).toBe(false);
  });

  it("pushes nothing without its own member entry, and answers LATER while pushing", async () => {
    const d = desk();
    d.tenure.take("h");
    d.owners.set("h", "p");
    d.members.delete("self");
    expect(await d.handOvers.pushLost(async () => ({ taken: 1 }))).toEqual({ handed: 0, failed: 0 });
    d.members.set("self", member("self"));
    let release!: () => void;
    const pushing = d.handOvers.pushLost(
      () =>
        new Promise((resolve) => {
          release = () => resolve({ taken: 1 });
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    d.owners.set("h", "p");
    const reply = await d.handOvers.answer(claim("p", "h"));
    expect(reply.hosts[0]?.status).toBe("LATER");
    release();
    expect(await pushing).toEqual({ handed: 1, failed: 0 });
  });

  it("splits a large done set over several messages", async () => {
    const d = desk();
    d.tenure.take("big");
    d.tenure.take("small");
    d.owners.set("big", "p");
    d.owners.set("small", "p");
    d.done.set(
      "big",
      Array.from({ length: 262_144 + 10 }, (_, i) => BigInt(i + 1)),
    );
    d.done.set("small", [1n]);
    const messages: string[][] = [];
    await d.handOvers.pushLost(async (_owner, request) => {
      messages.push(request.hosts.map((h) => `${h.host}:${h.done.length / 8}:${h.more}`));
      return { taken: request.hosts.length };
    });
    expect(messages).toEqual([["big:262144:true"], ["big:10:false", "small:1:false"]]);
  });
});

describe("HandOverDesk edges", () => {
  const MAX_DONE = (2 * 1024 * 1024) / 8;
  const fingerprints = (count: number, from = 1) => Array.from({ length: count }, (_, i) => BigInt(from + i));

  it("shares one reply's room for done URLs among the claimed hosts", async () => {
    const d = desk();
    for (const host of ["h1", "h2"]) {
      d.owners.set(host, "c");
      d.tenure.take(host);
    }
    d.done.set("h1", fingerprints(200_000));
    d.done.set("h2", fingerprints(100_000, 500_000));
    const reply = await d.handOvers.answer(claim("c", "h1", "h2"));
    expect(reply.hosts.map((h) => [h.host, h.done.length / 8, h.more])).toEqual([
      ["h1", 200_000, false],
      ["h2", MAX_DONE - 200_000, true],
    ]);
  });

  it("answers NOT_HELD for a host passed to an agent it no longer knows", async () => {
    const d = desk();
    d.owners.set("h", "c");
    d.tenure.pass("h", "forgotten");
    const reply = await d.handOvers.answer(claim("c", "h"));
    expect(reply.hosts[0]).toMatchObject({ status: "NOT_HELD", holder: null });
  });

  it("says why it refuses pushed hosts while leaving", async () => {
    const d = desk();
    d.handOvers.close();
    const error = await d.handOvers.takeIn({ from: wire("b"), hosts: [] }).catch((e: unknown) => e);
    expect(String((error as Error).message)).toBe("this agent is leaving: hand the hosts to another");
  });

  it("adopts a hand-over with only done URLs, or only a page count, or only an abandonment; not an empty one", async () => {
    const d = desk();
    const base = { status: "GRANTED" as const, holder: null, more: false };
    await d.handOvers.adopt([
      { ...base, host: "done", done: packFingerprints([7n]), pagesFetched: 0, abandoned: "" },
      { ...base, host: "pages", done: packFingerprints([]), pagesFetched: 3, abandoned: "" },
      { ...base, host: "gave-up", done: packFingerprints([]), pagesFetched: 0, abandoned: "trap" },
      { ...base, host: "empty", done: packFingerprints([]), pagesFetched: 0, abandoned: "" },
    ]);
    expect(d.adopted.map((a) => a.host)).toEqual(["done", "pages", "gave-up"]);
    // No page history came: none is adopted, but what was is committed.
    expect(d.adoptedHistories).toEqual([]);
    expect(d.commits()).toBe(1);
  });

  it("counts every host it could not push when none was quiet", async () => {
    const d = desk();
    for (const host of ["x", "y"]) {
      d.tenure.take(host);
      d.owners.set(host, "p");
      d.busy.add(host);
    }
    const outcome = await d.handOvers.pushLost(async () => ({ taken: 1 }));
    expect(outcome).toEqual({ handed: 0, failed: 2 });
  });

  it("pushes at most 1,000 hosts a message, each as GRANTED, and a done set that just fits in one entry", async () => {
    const d = desk();
    const hosts = Array.from({ length: 1002 }, (_, i) => `h${i}`);
    for (const host of hosts) {
      d.tenure.take(host);
      d.owners.set(host, "p");
    }
    d.done.set("h0", fingerprints(MAX_DONE));
    const messages: HostHandOver[][] = [];
    await d.handOvers.pushLost(async (_owner, request) => {
      messages.push(request.hosts);
      return { taken: request.hosts.length };
    });
    // h0's done set fills a message exactly: alone, with nothing more to come.
    expect(messages[0]?.map((h) => [h.host, h.done.length / 8, h.more])).toEqual([["h0", MAX_DONE, false]]);
    expect(messages.slice(1).map((m) => m.length)).toEqual([1000, 1]);
    expect(messages.flat().every((h) => h.status === "GRANTED")).toBe(true);
  });
});

describe("HandOverDesk and page histories (--recrawl)", () => {
  it("sends a claimed host's histories with their plans, and releases them only when granted, after the last part", async () => {
    const d = desk();
    for (const host of ["held.test", "other.test"]) d.owners.set(host, "c");
    d.tenure.take("held.test");
    d.histories.set("held.test", histories("held.test", 2));
    d.histories.set("other.test", histories("other.test", 1));
    const reply = await d.handOvers.answer(claim("c", "held.test", "other.test"));
    expect(reply.hosts.map((h) => [h.host, h.status, h.pages?.map((p) => p.nextAtMs)])).toEqual([
      ["held.test", "GRANTED", [5000, 5001]],
      ["other.test", "NOT_HELD", [5000]],
    ]);
    expect(reply.hosts[0]?.pages?.[0]).toMatchObject({
      url: "http://held.test/p0.html",
      etag: '"0"',
      lastAtMs: 1000,
    });
    expect(d.released).toEqual(["held.test"]);
  });

  it("splits histories over a claim's answers, from the claimant's skipPages on, releasing after the last", async () => {
    const d = desk();
    d.owners.set("big.test", "c");
    d.tenure.take("big.test");
    // About 1,100 bytes each: fewer than 1,000 fit in one MiB.
    d.histories.set("big.test", histories("big.test", 1200, 1000));
    const [first] = (await d.handOvers.answer(claim("c", "big.test"))).hosts;
    const sent = first?.pages?.length ?? 0;
    expect(first?.more).toBe(true);
    expect(sent).toBeGreaterThan(900);
    expect(sent).toBeLessThan(1000);
    expect(d.released).toEqual([]);
    const rest = await d.handOvers.answer({
      claimant: wire("c"),
      hosts: [{ host: "big.test", skip: 0, skipPages: sent }],
    });
    expect(rest.hosts[0]?.more).toBe(false);
    expect(rest.hosts[0]?.pages?.[0]?.url).toBe(`http://big.test/p${sent}.html`);
    expect(sent + (rest.hosts[0]?.pages?.length ?? 0)).toBe(1200);
    expect(d.released).toEqual(["big.test"]);
  });

  it("pushes histories in messages of at most a MiB, and releases them once the owner took them all", async () => {
    const d = desk();
    d.tenure.take("big.test");
    d.owners.set("big.test", "p");
    d.histories.set("big.test", histories("big.test", 1200, 1000));
    const messages: number[] = [];
    let fail = true;
    const send = async (_owner: string, request: HandOverRequest) => {
      if (fail) throw new Error("p is down");
      messages.push(request.hosts.reduce((sum, h) => sum + (h.pages?.length ?? 0), 0));
      return { taken: request.hosts.length };
    };
    expect(await d.handOvers.pushLost(send)).toEqual({ handed: 0, failed: 1 });
    expect(d.released).toEqual([]);
    fail = false;
    expect(await d.handOvers.pushLost(send)).toEqual({ handed: 1, failed: 0 });
    expect(messages.length).toBe(2);
    expect(messages[0] + (messages[1] ?? 0)).toBe(1200);
    expect(d.released).toEqual(["big.test"]);
  });

  it("adopts the histories a hand-over carries, and refuses one of another host before recording anything", async () => {
    const d = desk();
    const base = { status: "GRANTED" as const, holder: null, more: false, pagesFetched: 1, abandoned: "" };
    const [page] = histories("a.test", 1);
    const wirePage = {
      url: page?.url ?? "",
      depth: 1,
      etag: '"0"',
      lastModified: "",
      captureDigest: "",
      captureUrl: "",
      captureDate: "",
      captureRecordId: "",
      visits: 1,
      changes: 0,
      observedMs: 0,
      lastAtMs: 1000,
      nextAtMs: 5000,
      changefreq: "" as const,
    };
    await d.handOvers.adopt([{ ...base, host: "a.test", done: packFingerprints([1n]), pages: [wirePage] }]);
    expect(d.adoptedHistories).toEqual([{ host: "a.test", histories: [page] }]);
    const error = await d.handOvers
      .takeIn({
        from: wire("b"),
        hosts: [{ ...base, host: "b.test", done: packFingerprints([2n]), pages: [wirePage] }],
      })
      .catch((e: unknown) => e);
    expect(isUbiError(error, ErrorCode.BadMessage)).toBe(true);
    expect(d.adopted.map((a) => a.host)).toEqual(["a.test"]);
    expect(d.tenure.heldHosts()).toEqual([]);
  });
});
