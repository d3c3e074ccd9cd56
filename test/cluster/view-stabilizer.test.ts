import { beforeAll, expect, it, vi } from "vitest";
import type { ClusterFacingAgent } from "../../src/agent/index.js";
import { Ownership, type Partitioning, TakeoverGrace, type UrlExchange } from "../../src/cluster/index.js";
import { ViewStabilizer } from "../../src/cluster/view-stabilizer.js";
import type { MemberEntry, MemberStatus } from "../../src/failure-detector/index.js";
import { Assignment, type Hasher64, loadHasher64 } from "../../src/hashing/index.js";
import type { LogFields, Logger } from "../../src/logging/index.js";
import type { QueuedUrl, UrlTraits } from "../../src/storage/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * Agent "a"'s ViewStabilizer over a real Ownership and TakeoverGrace, on a manual clock; the agent, the
 * URL exchange, the lost hosts and the logger are fakes that record what they are asked, in order.
 */

/** Few replicas: fast builds, still a real circle. */
const REPLICAS = 64;
const HOSTS = Array.from({ length: 60 }, (_, i) => `h${i}.example:80`);
const DELAY_MS = 10_000;
const STRANDED_CHECK_MS = 2_000;

let hasher: Hasher64;

beforeAll(async () => {
  hasher = await loadHasher64();
});

const member = (id: string, capacity = 1): MemberEntry => ({
  id,
  address: `addr-${id}`,
  capacity,
  incarnation: 1,
  status: "alive",
  lastHeardMs: 0,
});

/** Lets every promise continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const tick = () => Promise.resolve();

interface LogCall {
  readonly level: string;
  readonly fields: LogFields;
  readonly message: string;
}

function recordingLogger(): { logger: Logger; records: LogCall[] } {
  const records: LogCall[] = [];
  const method =
    (level: string) =>
    (fieldsOrMessage: LogFields | string, message = ""): void => {
      records.push(
        typeof fieldsOrMessage === "string"
          ? { level, fields: {}, message: fieldsOrMessage }
          : { level, fields: fieldsOrMessage, message },
      );
    };
  const logger: Logger = {
    fatal: method("fatal"),
    error: method("error"),
    warn: method("warn"),
    info: method("info"),
    debug: method("debug"),
    child: () => logger,
  };
  return { logger, records };
}

interface Sent {
  readonly owner: string;
  readonly url: string;
  readonly depth: number;
  readonly host: string;
  readonly traits: UrlTraits | undefined;
}

function setUp(options: { delayMs?: number; partitioning?: Partitioning } = {}) {
  const clock = new ManualClock();
  const ownership = new Ownership("a", 1, REPLICAS, hasher, options.partitioning);
  const grace = new TakeoverGrace(options.delayMs ?? DELAY_MS, {
    clock,
    current: () => ownership.assignment,
    build: (agents) => Assignment.build(agents, { replicasPerUnit: REPLICAS }, hasher),
  });
  /** Everything the fakes were asked, in order; async steps are recorded once done. */
  const calls: string[] = [];
  const sent: Sent[] = [];
  /** The agent's queues: host -> its URLs, in order. */
  const queues = new Map<string, QueuedUrl[]>();
  /** Commits fail while `fail` > 0, or wait for the test while `hold` is set. */
  const commits = { fail: 0, hold: false, waiting: [] as (() => void)[] };
  const agent: Pick<ClusterFacingAgent, "hostsWithWork" | "handOver" | "commit" | "wakeHosts"> = {
    hostsWithWork: () => [...queues].filter(([, urls]) => urls.length > 0).map(([host]) => host),
    async handOver(host, handOff) {
      calls.push(`handOver ${host}`);
      const urls = queues.get(host) ?? [];
      queues.delete(host);
      // Handed off as dequeued, one at a time.
      for (const entry of urls) {
        await tick();
        handOff(entry);
      }
    },
    async commit() {
      if (commits.hold) await new Promise<void>((resolve) => commits.waiting.push(resolve));
      await tick();
      if (commits.fail > 0) {
        commits.fail--;
        throw new Error("disk full");
      }
      calls.push("commit");
    },
    wakeHosts: () => calls.push("wakeHosts"),
  };
  /** Peers whose redistribution fails once each. */
  const failRedistribute = new Set<string>();
  /** Peers whose outbox entries fail to move once each. */
  const failRehome = new Set<string>();
  /** The owner functions rehome was given, in order. */
  const rehomedBy: ((url: string, host: string) => string)[] = [];
  const exchange: Pick<UrlExchange, "onViewChange" | "redistribute" | "rehome" | "send"> = {
    onViewChange: () => calls.push("exchange.onViewChange"),
    async redistribute(peer) {
      await tick();
      if (failRedistribute.delete(peer)) throw new Error(`cannot read the outbox of ${peer}`);
      calls.push(`redistribute ${peer}`);
      return 0;
    },
    async rehome(peer, ownerOf) {
      await tick();
      if (failRehome.delete(peer)) throw new Error(`cannot read the outbox of ${peer}`);
      calls.push(`rehome ${peer}`);
      rehomedBy.push(ownerOf);
      return 0;
    },
    send(owner, url, depth, host, traits) {
      calls.push(`send ${url}`);
      sent.push({ owner, url, depth, host, traits });
    },
  };
  /** Whether lost hosts remain; pushes wait for the test while `hold` is set. */
  const lost = { any: false, hold: false, waiting: [] as (() => void)[] };
  const lostHosts = {
    async push() {
      calls.push("lostHosts.push");
      if (lost.hold) await new Promise<void>((resolve) => lost.waiting.push(resolve));
    },
    any: () => lost.any,
  };
  const statuses = new Map<string, MemberStatus>();
  const capacities = new Map<string, number>();
  const gone: string[] = [];
  const { logger, records } = recordingLogger();
  const stabilizer = new ViewStabilizer({
    clock,
    ownership,
    grace,
    exchange,
    agent,
    lostHosts,
    statusOf: (id) => statuses.get(id),
    capacityOf: (id) => capacities.get(id) ?? 1,
    onGone: (id) => gone.push(id),
    logger,
  });
  /** The alive set changes to `ids`; agents alive so far and not in it take `status` ("suspected": crashed). */
  const view = (ids: readonly string[], status: MemberStatus = "suspected") => {
    for (const [id, was] of statuses) if (was === "alive" && !ids.includes(id)) statuses.set(id, status);
    for (const id of ids) statuses.set(id, "alive");
    stabilizer.onViewChange(ids.map((id) => member(id, capacities.get(id))));
  };
  return {
    clock,
    ownership,
    grace,
    stabilizer,
    view,
    calls,
    sent,
    queues,
    commits,
    failRedistribute,
    failRehome,
    rehomedBy,
    lost,
    statuses,
    capacities,
    gone,
    records,
  };
}

/** Two URLs of `host`: one with traits to carry over, one whose traits are all unset. */
function urlsOf(host: string): QueuedUrl[] {
  const name = host.replace(":80", "");
  return [
    { url: `http://${name}/a`, depth: 2, attempts: 1, sitemap: true, lastmod: "2024-01-01" },
    { url: `http://${name}/b`, depth: 0, attempts: 0 },
  ];
}

it("hands over, URL by URL, the queues of hosts no longer held to their new owners, then commits", async () => {
  const { ownership, stabilizer, view, calls, sent, queues } = setUp();
  view(["a"]);
  for (const host of HOSTS) queues.set(host, urlsOf(host));
  view(["a", "b", "c"]);
  await stabilizer.settled();

  const kept = HOSTS.filter((host) => ownership.ownerOf(host) === "a");
  const moved = HOSTS.filter((host) => ownership.ownerOf(host) !== "a");
  expect(kept.length).toBeGreaterThan(5);
  expect(moved.length).toBeGreaterThan(5);
  expect([...queues.keys()]).toEqual(kept);
  expect(sent).toEqual(
    moved.flatMap((host) => {
      const [first, second] = urlsOf(host) as [QueuedUrl, QueuedUrl];
      const owner = ownership.ownerOf(host);
      return [
        {
          owner,
          url: first.url,
          depth: 2,
          host,
          traits: { attempts: 1, sitemap: true, lastmod: "2024-01-01" },
        },
        { owner, url: second.url, depth: 0, host, traits: {} },
      ];
    }),
  );
  // The commit comes once every URL handed off is in the exchange's outbox, not in between.
  const commitAt = calls.indexOf("commit");
  expect(commitAt).toBeGreaterThan(calls.lastIndexOf(`send ${sent.at(-1)?.url}`));
  expect(calls.filter((call) => call === "commit")).toHaveLength(1);
  expect(calls.slice(commitAt)).toEqual(["commit", "wakeHosts", "lostHosts.push"]);
});

it("handOverStranded hands a URL put back after the view change's hand-over to its owner, and resolves once done", async () => {
  // This agent left: a fetch that ended after its queues went to their owners put its URL back.
  const { ownership, stabilizer, view, sent, queues } = setUp();
  view(["a", "b"]);
  view(["b"], "left");
  await stabilizer.settled();
  const host = HOSTS[0] as string;
  const url = { url: `http://${host.replace(":80", "")}/late`, depth: 0 };
  queues.set(host, [url]);
  await stabilizer.handOverStranded();
  expect(sent).toEqual([{ owner: "b", url: url.url, depth: 0, host, traits: {} }]);
  expect(ownership.ownerOf(host)).toBe("b");
  expect(queues.has(host)).toBe(false);
});

it("under URL partitioning, sends each URL of a queue to its own owner once this agent left the view", async () => {
  const { ownership, stabilizer, view, sent, queues } = setUp({ partitioning: "url" });
  view(["a", "b", "c"]);
  const host = "h1.example:80";
  const urls = Array.from({ length: 40 }, (_, i) => ({ url: `http://h1.example/p${i}`, depth: 1 }));
  queues.set(host, urls);
  await stabilizer.settled();
  // Every agent in the view may hold every host by URL: nothing moved.
  expect(sent).toEqual([]);

  view(["b", "c"], "left");
  await stabilizer.settled();
  expect(sent.map(({ url }) => url)).toEqual(urls.map(({ url }) => url));
  for (const { owner, url } of sent) expect(owner).toBe(ownership.ownerOfUrl(url, host));
  expect(new Set(sent.map(({ owner }) => owner))).toEqual(new Set(["b", "c"]));
});

it("re-sends what was handed to crashed agents after the commit; moves what was handed to agents that left", async () => {
  const { stabilizer, view, calls, gone } = setUp();
  view(["a", "b", "c", "d"]);
  await stabilizer.settled();
  calls.length = 0;
  view(["a", "b", "d"], "suspected");
  view(["a", "b"], "left");
  await stabilizer.settled();
  expect(gone).toEqual(["c", "d"]);
  // Both changes came before the re-examination began: it serves both.
  expect(calls).toEqual([
    "exchange.onViewChange",
    "exchange.onViewChange",
    "commit",
    "redistribute c",
    "rehome d",
    "wakeHosts",
    "lostHosts.push",
  ]);
});

it("moves what was handed to an agent that left to its hosts' next owners, again after a failure, not once it is back", async () => {
  const { clock, ownership, stabilizer, view, calls, failRehome, rehomedBy, statuses } = setUp();
  view(["a", "b", "c"]);
  await stabilizer.settled();
  stabilizer.start();
  calls.length = 0;
  failRehome.add("c");
  view(["a", "b"], "left");
  await stabilizer.settled();
  expect(calls.filter((call) => call.startsWith("rehome"))).toEqual([]);
  // The periodic check asks again.
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls.filter((call) => call.startsWith("rehome"))).toEqual(["rehome c"]);
  // Each URL goes to its owner in the view without c.
  for (const host of HOSTS.slice(0, 10)) {
    const url = `http://${host.replace(":80", "")}/`;
    expect(rehomedBy[0]?.(url, host)).toBe(ownership.ownerOfUrl(url, host));
  }
  // b leaves, and comes back before a re-examination: what was handed to it stays with it.
  calls.length = 0;
  view(["a"], "left");
  view(["a", "b"]);
  statuses.set("b", "alive");
  await stabilizer.settled();
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  stabilizer.stop();
  expect(calls.filter((call) => call.startsWith("rehome"))).toEqual([]);
});

it("calls onGone for every agent gone from the view, crashed or left, and for no other", async () => {
  const { stabilizer, view, gone, statuses } = setUp();
  view(["a", "b", "c", "d", "e"]);
  statuses.set("d", "left");
  view(["a", "b", "e"], "suspected");
  await stabilizer.settled();
  expect(gone).toEqual(["c", "d"]);
  expect(stabilizer.alive).toEqual(new Set(["a", "b", "e"]));
  expect(stabilizer.isAlive("b")).toBe(true);
  expect(stabilizer.isAlive("c")).toBe(false);
});

it("holds a crashed agent's hosts for the takeover grace, with the capacity it had", async () => {
  const { ownership, grace, clock, view, capacities, records } = setUp();
  capacities.set("b", 3);
  view(["a", "b", "c"]);
  const before = ownership.assignment;
  view(["a", "c"], "suspected");
  expect(grace.heldFor).toEqual(["b"]);
  // The hosts held are exactly those b owned with its capacity of 3 (with 1, it would own fewer).
  const deadline = clock.now() + DELAY_MS;
  for (const host of HOSTS) {
    expect(grace.heldUntilMs(host), host).toBe(before.ownerOf(host) === "b" ? deadline : 0);
  }
  expect(HOSTS.filter((host) => before.ownerOf(host) === "b").length).toBeGreaterThan(HOSTS.length / 2);
  expect(records.filter(({ level }) => level === "warn")).toEqual([
    {
      level: "warn",
      fields: { event: "agent-suspected", peer: "b" },
      message: `agent b is not answering; its hosts wait ${DELAY_MS} ms for it to come back (--takeover-delay-ms)`,
    },
  ]);
});

it("forgets the grace of a crashed agent that is back in the view", () => {
  const { grace, view } = setUp();
  view(["a", "b", "c"]);
  view(["a", "c"], "suspected");
  expect(grace.heldFor).toEqual(["b"]);
  view(["a", "b", "c"]);
  expect(grace.heldFor).toEqual([]);
});

it("holds nothing for an agent that left, and forgets any grace it had", () => {
  const { grace, view } = setUp();
  view(["a", "b", "c"]);
  // A grace noted for c by another path (the stabilizer itself notes only agents gone from its view).
  grace.noteCrashed({ id: "c", capacity: 1 });
  view(["a", "b"], "left");
  expect(grace.heldFor).toEqual([]);
});

it("does not warn of a suspected agent's hosts waiting when there is no takeover delay, but says so", () => {
  const { grace, view, records } = setUp({ delayMs: 0 });
  view(["a", "b", "c"]);
  view(["a", "c"], "suspected");
  expect(grace.heldFor).toEqual([]);
  expect(records.filter(({ level }) => level === "warn")).toEqual([]);
  expect(records.filter(({ fields }) => fields.event === "agent-suspected")).toEqual([
    {
      level: "info",
      fields: { event: "agent-suspected", peer: "b" },
      message: "agent b is not answering; its hosts are taken over now (--takeover-delay-ms 0)",
    },
  ]);
});

it("logs agents joining (not those of the first view) and agents leaving (not crashing)", () => {
  const { view, records } = setUp();
  view(["a", "b"]);
  expect(records).toEqual([]);
  view(["a", "b", "c"]);
  view(["a", "b"], "left");
  view(["a"], "suspected");
  expect(records.filter(({ level }) => level === "info")).toEqual([
    { level: "info", fields: { event: "agent-joined", peer: "c" }, message: "agent c joined" },
    { level: "info", fields: { event: "agent-left", peer: "c" }, message: "agent c left the cluster" },
  ]);
});

it("re-examines nothing when the ownership did not change", async () => {
  const { stabilizer, view, calls, gone, queues } = setUp();
  view(["a", "b", "c"]);
  await stabilizer.settled();
  calls.length = 0;
  // The same members again (a heartbeat's news, in another order): no hand-over, no commit.
  queues.set("h1.example:80", urlsOf("h1.example:80"));
  view(["c", "a", "b"]);
  await stabilizer.settled();
  expect(calls).toEqual([]);
  expect(gone).toEqual([]);
});

it("does nothing on an empty alive set (this agent left, alone)", async () => {
  const { clock, stabilizer, view, calls, gone } = setUp();
  view(["a", "b"]);
  await stabilizer.settled();
  calls.length = 0;
  clock.advance(1_000);
  stabilizer.onViewChange([]);
  await stabilizer.settled();
  expect(stabilizer.alive).toEqual(new Set(["a", "b"]));
  expect(calls).toEqual([]);
  expect(gone).toEqual([]);
});

it("every 2 s re-examines when a host not held has work, or lost hosts remain; not otherwise", async () => {
  const { clock, ownership, stabilizer, view, calls, queues, lost } = setUp();
  view(["a", "b", "c"]);
  await stabilizer.settled();
  calls.length = 0;
  stabilizer.start();
  const own = HOSTS.find((host) => ownership.ownerOf(host) === "a") as string;
  const other = HOSTS.find((host) => ownership.ownerOf(host) !== "a") as string;
  queues.set(own, urlsOf(own));
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls).toEqual([]);

  // A URL put back in the queue of a host handed over.
  queues.set(other, urlsOf(other));
  clock.advance(STRANDED_CHECK_MS - 1);
  await stabilizer.settled();
  expect(calls).toEqual([]);
  clock.advance(1);
  await stabilizer.settled();
  expect(calls.filter((call) => !call.startsWith("send "))).toEqual([
    `handOver ${other}`,
    "commit",
    "wakeHosts",
    "lostHosts.push",
  ]);
  expect(queues.has(other)).toBe(false);

  calls.length = 0;
  lost.any = true;
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls).toEqual(["commit", "wakeHosts", "lostHosts.push"]);
  expect(clock.pendingDelays).toEqual([STRANDED_CHECK_MS]);
});

it("stops the stranded-URL check on stop(), even one started after it", async () => {
  const { clock, ownership, stabilizer, view, calls, queues } = setUp();
  view(["a", "b", "c"]);
  await stabilizer.settled();
  calls.length = 0;
  const other = HOSTS.find((host) => ownership.ownerOf(host) !== "a") as string;
  queues.set(other, urlsOf(other));
  stabilizer.start();
  stabilizer.stop();
  expect(clock.pending).toBe(0);
  // A node closed while it was still joining: stop() came first.
  stabilizer.start();
  clock.advance(5 * STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls).toEqual([]);
  expect(clock.pending).toBe(0);
});

it("settled() resolves only once every re-examination queued so far is done, one after the other", async () => {
  const { stabilizer, view, calls, commits } = setUp();
  commits.hold = true;
  view(["a", "b"]);
  await settle();
  // Asked for while the first is running: a second re-examination, after it.
  view(["a", "b", "c"]);
  let settled = false;
  void stabilizer.settled().then(() => {
    settled = true;
  });
  await settle();
  expect(settled).toBe(false);
  // The second re-examination waits for the first.
  expect(commits.waiting).toHaveLength(1);
  commits.waiting.shift()?.();
  await settle();
  expect(calls.filter((call) => call === "commit")).toHaveLength(1);
  expect(settled).toBe(false);
  expect(commits.waiting).toHaveLength(1);
  commits.waiting.shift()?.();
  await settle();
  expect(calls.filter((call) => call === "commit")).toHaveLength(2);
  expect(settled).toBe(true);
});

it("settled() waits for the crawls of hosts held here to be pushed to their owners too", async () => {
  const { stabilizer, view, lost } = setUp();
  lost.hold = true;
  view(["a", "b"]);
  let settled = false;
  void stabilizer.settled().then(() => {
    settled = true;
  });
  await settle();
  expect(lost.waiting).toHaveLength(1);
  expect(settled).toBe(false);
  lost.waiting.shift()?.();
  await settle();
  expect(settled).toBe(true);
});

it("re-sends what was handed to a crashed agent while a push of held hosts still waits: pushes run apart", async () => {
  // A push may wait long (a quiesce up to 20 s, a barrier up to 5 s, a call): the next view change's
  // re-examination, which gives a dead agent's hosts their URLs back, must not wait behind it.
  const { stabilizer, view, calls, lost } = setUp();
  view(["a", "b", "c"]);
  await stabilizer.settled();
  lost.hold = true;
  lost.any = true;
  view(["a", "b", "c", "d"]);
  await settle();
  expect(lost.waiting).toHaveLength(1);
  calls.length = 0;
  view(["a", "c", "d"]);
  await vi.waitFor(() => expect(calls).toContain("redistribute b"));
  // One push at a time: the one under way is not doubled (the periodic check asks again later).
  expect(calls.filter((call) => call === "lostHosts.push")).toEqual([]);
  let settled = false;
  void stabilizer.settled().then(() => {
    settled = true;
  });
  await settle();
  expect(settled).toBe(false);
  lost.waiting.shift()?.();
  await vi.waitFor(() => expect(settled).toBe(true));
});

it("logs a failing re-examination and still runs the next one", async () => {
  const { stabilizer, view, calls, commits, records } = setUp();
  commits.fail = 1;
  view(["a", "b"]);
  await expect(stabilizer.settled()).resolves.toBeUndefined();
  expect(calls).toEqual(["exchange.onViewChange"]);
  const errors = records.filter(({ level }) => level === "error");
  expect(errors).toEqual([
    {
      level: "error",
      fields: { event: "reexamine-failed", err: expect.objectContaining({ message: "disk full" }) },
      message: "re-examining the frontier failed",
    },
  ]);
  view(["a", "b", "c"]);
  await stabilizer.settled();
  expect(calls).toEqual([
    "exchange.onViewChange",
    "exchange.onViewChange",
    "commit",
    "wakeHosts",
    "lostHosts.push",
  ]);
});

it("re-sends what was handed to a crashed agent at the next re-examination when the one after the crash failed", async () => {
  const { clock, stabilizer, view, calls, commits } = setUp();
  view(["a", "b", "c"]);
  await stabilizer.settled();
  stabilizer.start();
  calls.length = 0;
  // The commit before the redistribution fails (a full disk for a moment): the crash is not forgotten.
  commits.fail = 1;
  view(["a", "c"]);
  await stabilizer.settled();
  expect(calls).toEqual(["exchange.onViewChange"]);
  // Nothing stranded, no lost hosts: the stranded-URL check re-examines for the crashed agent alone.
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls).toEqual(["exchange.onViewChange", "commit", "redistribute b", "wakeHosts", "lostHosts.push"]);
  // Once re-sent, never again.
  calls.length = 0;
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  view(["a", "c", "d"]);
  await stabilizer.settled();
  stabilizer.stop();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual([]);
});

it("retries a crashed agent whose redistribution failed with growing waits, without holding up the others", async () => {
  const { clock, stabilizer, view, calls, failRedistribute, records } = setUp();
  view(["a", "b", "c", "d"]);
  await stabilizer.settled();
  stabilizer.start();
  calls.length = 0;
  failRedistribute.add("b");
  view(["a", "d"]);
  await stabilizer.settled();
  // b failed; c was re-sent all the same, and the hosts were woken and pushed.
  expect(calls).toEqual(["exchange.onViewChange", "commit", "redistribute c", "wakeHosts", "lostHosts.push"]);
  expect(stabilizer.redistributing).toBe(true);
  expect(records.filter(({ fields }) => fields.event === "redistribute-failed")).toEqual([
    expect.objectContaining({ level: "warn", fields: expect.objectContaining({ peer: "b" }) }),
  ]);
  // Another view change before b's retry is due does not retry it.
  calls.length = 0;
  view(["a", "d", "e"]);
  await stabilizer.settled();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual([]);
  // Due 2 s after the failure: the stranded check's re-examination retries it.
  failRedistribute.add("b");
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual([]);
  // Failed again: the next try waits 4 s, not 2, and nothing is re-examined before it is due.
  calls.length = 0;
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls).toEqual([]);
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  stabilizer.stop();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual(["redistribute b"]);
  expect(stabilizer.redistributing).toBe(false);
});

it("drops a crashed agent not yet re-sent once it is back, or has left", async () => {
  const { clock, stabilizer, view, calls, failRedistribute, statuses } = setUp();
  view(["a", "b", "c", "d"]);
  await stabilizer.settled();
  stabilizer.start();
  failRedistribute.add("b");
  failRedistribute.add("c");
  view(["a", "d"]);
  await stabilizer.settled();
  expect(stabilizer.redistributing).toBe(true);
  // b comes back with what it acknowledged: dropped at the view change.
  view(["a", "b", "d"]);
  await stabilizer.settled();
  expect(stabilizer.redistributing).toBe(true);
  // c's leave is heard later (it handed its queue over itself), with no view change: dropped at the
  // next re-examination, with nothing re-sent (moved instead).
  statuses.set("c", "left");
  calls.length = 0;
  clock.advance(10 * STRANDED_CHECK_MS);
  await stabilizer.settled();
  stabilizer.stop();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual([]);
  expect(calls.filter((call) => call.startsWith("rehome"))).toEqual(["rehome c"]);
  expect(stabilizer.redistributing).toBe(false);
});

it("serves requests for a re-examination made before it begins with one run: the stranded check does not pile them up", async () => {
  const { clock, stabilizer, view, calls, commits, lost } = setUp();
  view(["a", "b"]);
  await stabilizer.settled();
  stabilizer.start();
  lost.any = true;
  commits.hold = true;
  clock.advance(STRANDED_CHECK_MS);
  await settle();
  // The first waits in its commit; checks meanwhile queue one more run, not one each.
  for (let i = 0; i < 5; i++) {
    clock.advance(STRANDED_CHECK_MS);
    await settle();
  }
  expect(commits.waiting).toHaveLength(1);
  calls.length = 0;
  commits.hold = false;
  commits.waiting.shift()?.();
  await stabilizer.settled();
  stabilizer.stop();
  expect(calls.filter((call) => call === "lostHosts.push")).toHaveLength(2);
});

it("re-sends for agents absent from the first view once the takeover grace is over, unless they appear", async () => {
  const { clock, stabilizer, view, calls } = setUp();
  view(["a", "b"]);
  await stabilizer.settled();
  stabilizer.start();
  calls.length = 0;
  // c and d were handed URLs in an earlier run; b is alive, so nothing is due for it.
  stabilizer.resendForAbsent(["b", "c", "d"]);
  expect(stabilizer.redistributing).toBe(true);
  clock.advance(DELAY_MS - STRANDED_CHECK_MS);
  await stabilizer.settled();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual([]);
  // d appears within the grace (a whole cluster restarting); c does not. The view change's
  // re-examination, still within the grace, re-sends nothing.
  view(["a", "b", "d"]);
  await stabilizer.settled();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual([]);
  clock.advance(STRANDED_CHECK_MS);
  await stabilizer.settled();
  stabilizer.stop();
  expect(calls.filter((call) => call.startsWith("redistribute"))).toEqual(["redistribute c"]);
  expect(stabilizer.redistributing).toBe(false);
});

it("holds nothing to re-send for agents in the first view", () => {
  const { stabilizer, view } = setUp();
  view(["a", "b"]);
  stabilizer.resendForAbsent(["b"]);
  expect(stabilizer.redistributing).toBe(false);
});
