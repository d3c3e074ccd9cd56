import { expect, it } from "vitest";
import { heartbeatSender } from "../../src/cluster/heartbeat-sender.js";
import type { Partitioning } from "../../src/cluster/ownership.js";
import type { GossipEntry, MemberEntry, RemoteHeartbeat } from "../../src/failure-detector/index.js";
import type {
  AgentLoad,
  HeartbeatReply,
  HeartbeatRequest,
  Member,
  MemberFigures,
  PeerCallOptions,
  PeerClient,
} from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** One heartbeat call a fake peer received, waiting for the test's reply. */
interface Call {
  readonly address: string;
  readonly kind: "unary" | "stream";
  readonly request: HeartbeatRequest;
  readonly options: PeerCallOptions;
  reply(reply: HeartbeatReply): void;
  fail(error: Error): void;
}

/** Lets every promise continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const DEADLINE_MS = 5_000;

/** A pool whose clients record the heartbeats they are asked to send and answer when the test says. */
function fakePeers() {
  const calls: Call[] = [];
  const clientOf = (address: string): Pick<PeerClient, "heartbeat" | "streamHeartbeat"> => {
    const call = (kind: Call["kind"]) => (request: HeartbeatRequest, options: PeerCallOptions | undefined) =>
      new Promise<HeartbeatReply>((reply, fail) => {
        calls.push({ address, kind, request, options: options ?? {}, reply, fail });
      });
    return { heartbeat: call("unary"), streamHeartbeat: call("stream") };
  };
  return { calls, peers: { get: clientOf } };
}

/** A sender of agent "me", crawling with `partitioning`, whose load the test sets. */
function setUp(partitioning: Partitioning = "host") {
  const clock = new ManualClock();
  const { calls, peers } = fakePeers();
  const load: { now: AgentLoad } = {
    now: {
      idle: false,
      urlBatchesSent: 3,
      urlBatchesReceived: 4,
      pagesFetched: 50,
      queuedUrls: 12,
      spareHostSlots: 0,
      revisitPages: 0,
      revisitBudget: 0,
    },
  };
  const figures: { now: MemberFigures[] } = {
    now: [{ id: "me", pagesFetched: 50, bytesFetched: 900, pagesRecovered: 0, errors: {} }],
  };
  const replies: { fromId: string; load: AgentLoad; figures?: MemberFigures[]; sentAtMs: number }[] = [];
  const send = heartbeatSender({
    clock,
    peers,
    deadlineMs: DEADLINE_MS,
    partitioning,
    load: () => load.now,
    figures: () => figures.now,
    onReply: (fromId, reply, sentAtMs) =>
      replies.push({
        fromId,
        load: reply.load,
        ...(reply.figures === undefined ? {} : { figures: reply.figures }),
        sentAtMs,
      }),
  });
  return { clock, calls, load, figures, replies, send };
}

const gossip = (id: string, status: GossipEntry["status"] = "alive"): GossipEntry => ({
  id,
  address: `${id}:7000`,
  capacity: 1,
  incarnation: 7,
  status,
});

const wire = (id: string, status: Member["status"] = "ALIVE", lastHeardMsAgo = 0): Member => ({
  id,
  address: `${id}:7000`,
  capacity: 1,
  incarnation: 7,
  status,
  lastHeardMsAgo,
});

const HEARTBEAT: RemoteHeartbeat = { from: gossip("me"), entries: [gossip("me"), gossip("b")] };

const REPLY_LOAD: AgentLoad = {
  idle: true,
  urlBatchesSent: 8,
  urlBatchesReceived: 9,
  pagesFetched: 70,
  queuedUrls: 0,
  spareHostSlots: 0,
  revisitPages: 0,
  revisitBudget: 0,
};

it("sends a seed, whose id is not known yet, a unary heartbeat, and a known member one on its stream", async () => {
  const { calls, send } = setUp();
  void send({ address: "seed:7000" }, HEARTBEAT, new AbortController().signal);
  void send({ id: "b", address: "b:7000" }, HEARTBEAT, new AbortController().signal);
  await settle();
  expect(calls.map(({ address, kind }) => `${kind} ${address}`)).toEqual([
    "unary seed:7000",
    "stream b:7000",
  ]);
});

it("sends this agent's entry, its gossip table, its load and figures now, the unanswered mark and its partitioning", async () => {
  const { clock, calls, load, figures, send } = setUp("url");
  // An entry with a local time of hearing goes relative to the sending time.
  const heard: MemberEntry = { ...gossip("c", "suspected"), lastHeardMs: clock.now() - 700 };
  load.now = { ...load.now, queuedUrls: 99, spareHostSlots: 0 };
  figures.now = [
    { id: "me", pagesFetched: 60, bytesFetched: 1_000, pagesRecovered: 0, errors: {} },
    { id: "gone", pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} },
  ];
  void send(
    { id: "b", address: "b:7000" },
    { from: gossip("me"), entries: [gossip("b"), heard] },
    new AbortController().signal,
  );
  void send({ id: "b", address: "b:7000" }, { ...HEARTBEAT, unanswered: true }, new AbortController().signal);
  await settle();
  expect(calls.map((call) => call.request)).toEqual([
    {
      from: wire("me"),
      members: [wire("b"), wire("c", "SUSPECTED", 700)],
      load: {
        idle: false,
        urlBatchesSent: 3,
        urlBatchesReceived: 4,
        pagesFetched: 50,
        queuedUrls: 99,
        spareHostSlots: 0,
        revisitPages: 0,
        revisitBudget: 0,
      },
      figures: figures.now,
      unanswered: false,
      partitioning: "url",
    },
    {
      from: wire("me"),
      members: [wire("me"), wire("b")],
      load: {
        idle: false,
        urlBatchesSent: 3,
        urlBatchesReceived: 4,
        pagesFetched: 50,
        queuedUrls: 99,
        spareHostSlots: 0,
        revisitPages: 0,
        revisitBudget: 0,
      },
      figures: figures.now,
      unanswered: true,
      partitioning: "url",
    },
  ]);
});

it("bounds each call by the detector's signal and the heartbeat deadline", async () => {
  const { calls, send } = setUp();
  const seed = new AbortController();
  const known = new AbortController();
  void send({ address: "seed:7000" }, HEARTBEAT, seed.signal);
  void send({ id: "b", address: "b:7000" }, HEARTBEAT, known.signal);
  await settle();
  expect(calls[0]?.options).toEqual({ signal: seed.signal, deadlineMs: DEADLINE_MS });
  expect(calls[1]?.options).toEqual({ signal: known.signal, deadlineMs: DEADLINE_MS });
  expect(calls[0]?.options.signal).toBe(seed.signal);
  expect(calls[1]?.options.signal).toBe(known.signal);
});

it("tells onReply who replied, its load and figures, and when the heartbeat was sent, not when the reply came", async () => {
  const { clock, calls, replies, send } = setUp();
  const sentAtMs = clock.now();
  const answered = send({ address: "seed:7000" }, HEARTBEAT, new AbortController().signal);
  await settle();
  clock.advance(1_500);
  calls[0]?.reply({ from: wire("seed-id"), members: [], load: REPLY_LOAD });
  await answered;
  // The id is the replier's own, even where the target's id said otherwise.
  const later = send({ id: "b", address: "b:7000" }, HEARTBEAT, new AbortController().signal);
  await settle();
  clock.advance(700);
  const told = [{ id: "gone", pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} }];
  calls[1]?.reply({
    from: wire("b2"),
    members: [],
    load: { ...REPLY_LOAD, queuedUrls: 5, spareHostSlots: 0 },
    figures: told,
  });
  await later;
  expect(replies).toEqual([
    { fromId: "seed-id", load: REPLY_LOAD, sentAtMs },
    {
      fromId: "b2",
      load: { ...REPLY_LOAD, queuedUrls: 5, spareHostSlots: 0 },
      figures: told,
      sentAtMs: sentAtMs + 1_500,
    },
  ]);
});

it("returns the reply's sender and members as the failure detector's gossip entries", async () => {
  const { calls, send } = setUp();
  const answered = send({ id: "b", address: "b:7000" }, HEARTBEAT, new AbortController().signal);
  await settle();
  calls[0]?.reply({
    from: wire("b"),
    members: [wire("c", "SUSPECTED", 4_000), wire("d", "LEFT", 60), wire("b")],
    load: REPLY_LOAD,
  });
  expect(await answered).toEqual({
    from: gossip("b"),
    entries: [gossip("c", "suspected"), gossip("d", "left"), gossip("b")],
  });
});

it("rejects when the call fails, and tells onReply nothing", async () => {
  const { calls, replies, send } = setUp();
  const answered = send({ id: "b", address: "b:7000" }, HEARTBEAT, new AbortController().signal);
  await settle();
  calls[0]?.fail(new Error("unreachable"));
  await expect(answered).rejects.toThrow("unreachable");
  expect(replies).toEqual([]);
});
