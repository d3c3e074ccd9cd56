import {
  Client,
  type ClientDuplexStream,
  credentials,
  Metadata,
  type ServiceDefinition,
  type ServiceError,
  type StatusObject,
  status,
} from "@grpc/grpc-js";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { systemClock } from "../../src/clock.js";
import { fromWireMember, toWireMember } from "../../src/cluster/members.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import {
  FailureDetector,
  type HeartbeatTarget,
  type RemoteHeartbeat,
} from "../../src/failure-detector/index.js";
import {
  AGENT_SERVICE_NAME,
  grpcStatusOf,
  type HeartbeatReply,
  type HeartbeatRequest,
  loadProtocol,
  PeerClient,
  PeerClientPool,
} from "../../src/transport/index.js";
import { MAX_UNANSWERED_ON_STREAM } from "../../src/transport/sequenced-stream-client.js";
import { HeartbeatPeer, type HeartbeatPeerOptions, type StreamMessage } from "./heartbeat-peer.js";
import { FakeHandlers, failure, LOAD, member, startServer } from "./helpers.js";

/** A heartbeat whose load carries `n`, so a reply can be told apart by it. */
function heartbeat(n: number): HeartbeatRequest {
  return {
    from: member("agent-a"),
    members: [member("agent-a")],
    load: { ...LOAD, pagesFetched: n },
    unanswered: n % 2 === 0,
  };
}

/** A reply that echoes the request's `pagesFetched`, so it shows which request it answers. */
function echo(request: HeartbeatRequest): HeartbeatReply {
  return {
    members: [member("agent-b", 7002)],
    load: { ...LOAD, pagesFetched: request.load.pagesFetched },
    from: member("agent-b", 7002),
  };
}

async function startPeer(options: Partial<HeartbeatPeerOptions> = {}) {
  const peer = new HeartbeatPeer({ streaming: true, respond: echo, ...options });
  const address = await peer.start();
  const client = new PeerClient(address);
  onTestFinished(() => {
    client.close();
    peer.stop();
  });
  return { peer, client, address };
}

describe("PeerClient.streamHeartbeat", () => {
  it("sends every heartbeat to a peer on one stream, each answered with its own reply", async () => {
    const { peer, client } = await startPeer();
    for (let n = 1; n <= 5; n++) {
      expect((await client.streamHeartbeat(heartbeat(n))).load.pagesFetched).toBe(n);
    }
    const replies = await Promise.all([6, 7, 8].map((n) => client.streamHeartbeat(heartbeat(n))));
    expect(replies.map((reply) => reply.load.pagesFetched)).toEqual([6, 7, 8]);
    expect(peer.streamsOpened).toBe(1);
    expect(peer.unaryCalls).toBe(0);
    const sequences = peer.streamMessages.map((message) => message.request.sequence);
    expect(new Set(sequences).size).toBe(8);
    expect(sequences.every((sequence) => sequence >= 1)).toBe(true);
  });

  it("matches replies to requests when they come out of order or after the request was abandoned", async () => {
    const held: StreamMessage[] = [];
    const { peer, client } = await startPeer({ onStreamMessage: (message) => held.push(message) });
    const abandon = new AbortController();
    const first = client.streamHeartbeat(heartbeat(1));
    const second = failure(client.streamHeartbeat(heartbeat(2), { signal: abandon.signal }));
    const third = client.streamHeartbeat(heartbeat(3));
    await vi.waitFor(() => expect(held).toHaveLength(3));
    abandon.abort(new UbiError(ErrorCode.PeerUnreachable, "given up"));
    expect((await second).message).toBe("given up");
    for (const message of [...held].reverse()) message.answer();
    expect((await third).load.pagesFetched).toBe(3);
    expect((await first).load.pagesFetched).toBe(1);
    // The late reply to the abandoned heartbeat was dropped; the stream goes on.
    const next = client.streamHeartbeat(heartbeat(4));
    await vi.waitFor(() => expect(held).toHaveLength(4));
    held[3]?.answer();
    expect((await next).load.pagesFetched).toBe(4);
    expect(peer.streamsOpened).toBe(1);
  });

  it("gives up on a heartbeat at its deadline, and replaces a stream with too many unanswered", async () => {
    const { peer, client } = await startPeer({ onStreamMessage: () => {} });
    const late = await failure(client.streamHeartbeat(heartbeat(0), { deadlineMs: 20 }));
    expect(late.code).toBe(ErrorCode.PeerUnreachable);
    await vi.waitFor(() => expect(peer.streamMessages).toHaveLength(1));
    for (let n = 1; n < MAX_UNANSWERED_ON_STREAM; n++) {
      await failure(client.streamHeartbeat(heartbeat(n), { deadlineMs: 20 }));
    }
    await vi.waitFor(() => expect(peer.streamMessages).toHaveLength(MAX_UNANSWERED_ON_STREAM));
    expect(peer.streamsOpened).toBe(1);
    await failure(client.streamHeartbeat(heartbeat(99), { deadlineMs: 20 }));
    await vi.waitFor(() => expect(peer.streamsOpened).toBe(2));
  });

  it("refuses a reply to a sequence it never sent, and opens a new stream for the next heartbeat", async () => {
    let lie = true;
    const { peer, client } = await startPeer({
      onStreamMessage: (message) => message.answer(lie ? message.request.sequence + 1000 : undefined),
    });
    const error = await failure(client.streamHeartbeat(heartbeat(1)));
    expect(error.code).toBe(ErrorCode.BadMessage);
    lie = false;
    expect((await client.streamHeartbeat(heartbeat(2))).load.pagesFetched).toBe(2);
    expect(peer.streamsOpened).toBe(2);
  });

  it("refuses an invalid reply as BadMessage, like the unary call", async () => {
    const { client } = await startPeer({ respond: (request) => ({ ...echo(request), from: member("") }) });
    expect((await failure(client.streamHeartbeat(heartbeat(1)))).code).toBe(ErrorCode.BadMessage);
  });

  it("sends unary heartbeats to a peer that does not implement the stream", async () => {
    const { peer, client } = await startPeer({ streaming: false });
    for (let n = 1; n <= 3; n++) {
      expect((await client.streamHeartbeat(heartbeat(n))).load.pagesFetched).toBe(n);
    }
    expect(peer.unaryCalls).toBe(3);
    expect(peer.streamsOpened).toBe(0);
  });

  it("fails waiting and later heartbeats once closed", async () => {
    const { client } = await startPeer({ onStreamMessage: () => {} });
    const waiting = failure(client.streamHeartbeat(heartbeat(1)));
    client.close();
    expect((await waiting).code).toBe(ErrorCode.PeerUnreachable);
    expect((await failure(client.streamHeartbeat(heartbeat(2)))).code).toBe(ErrorCode.PeerUnreachable);
  });
});

describe("a failure detector heartbeating on streams", () => {
  it("fails waiting heartbeats when the peer goes away, suspects it, and trusts it again on a new stream", async () => {
    // b answers as a real detector would; a heartbeats it through a client pool, as cluster nodes do.
    const b = () =>
      new FailureDetector(
        { self: { id: "b", address: bAddress, capacity: 1 } },
        { clock: systemClock, sendHeartbeat: never },
      );
    let detectorB: FailureDetector | undefined;
    let holdNext = false;
    const held: StreamMessage[] = [];
    const options: HeartbeatPeerOptions = {
      streaming: true,
      respond: (request) => {
        if (detectorB === undefined) throw new Error("b is not running");
        const answer = detectorB.onHeartbeat({
          from: fromWireMember(request.from),
          entries: request.members.map(fromWireMember),
          unanswered: request.unanswered,
        });
        const now = systemClock.now();
        return {
          members: answer.entries.map((entry) => toWireMember(entry, now)),
          load: LOAD,
          from: toWireMember(answer.from, now),
        };
      },
      onStreamMessage: (message) => (holdNext ? held.push(message) : message.answer()),
    };
    let peer = new HeartbeatPeer(options);
    const bAddress = await peer.start();
    detectorB = b();
    const pool = new PeerClientPool();
    const a = new FailureDetector(
      {
        self: { id: "a", address: "127.0.0.1:1", capacity: 1 },
        heartbeatIntervalMs: 100,
        suspectAfterMs: 800,
      },
      { clock: systemClock, sendHeartbeat: viaPool(pool) },
    );
    onTestFinished(() => {
      a.stop();
      pool.closeAll();
      peer.stop();
    });
    await a.join([bAddress]);
    a.start();
    await vi.waitFor(() => expect(peer.streamMessages.length).toBeGreaterThan(2), { timeout: 10_000 });
    expect(peer.unaryCalls).toBe(1); // the join, through the seed address
    expect(peer.streamsOpened).toBe(1);
    expect(statusOf(a, "b")).toBe("alive");

    // A heartbeat waiting on the stream when b goes away fails at once, not at its deadline.
    holdNext = true;
    const waiting = failure(pool.get(bAddress).streamHeartbeat(heartbeat(1), { deadlineMs: 60_000 }));
    await vi.waitFor(() => expect(held.length).toBeGreaterThan(0));
    peer.stop();
    expect((await waiting).code).toBe(ErrorCode.PeerUnreachable);
    await vi.waitFor(() => expect(statusOf(a, "b")).toBe("suspected"), { timeout: 10_000 });

    holdNext = false;
    peer = new HeartbeatPeer(options);
    await peer.start(bAddress);
    detectorB = b();
    await vi.waitFor(() => expect(statusOf(a, "b")).toBe("alive"), { timeout: 20_000 });
    expect(peer.streamsOpened).toBeGreaterThanOrEqual(1);
    expect(peer.unaryCalls).toBe(0);
  });
});

function never(): Promise<RemoteHeartbeat> {
  return Promise.reject(new Error("b sends no heartbeats"));
}

/** The detector's `sendHeartbeat` over a client pool: unary to a seed, on the stream to a member. */
function viaPool(pool: PeerClientPool) {
  return async (
    target: HeartbeatTarget,
    beat: RemoteHeartbeat,
    signal: AbortSignal,
  ): Promise<RemoteHeartbeat> => {
    const now = systemClock.now();
    const request = {
      from: toWireMember(beat.from, now),
      members: beat.entries.map((entry) => toWireMember(entry, now)),
      load: LOAD,
    };
    const client = pool.get(target.address);
    const reply = await (target.id === undefined
      ? client.heartbeat(request, { signal })
      : client.streamHeartbeat(request, { signal }));
    return { from: fromWireMember(reply.from), entries: reply.members.map(fromWireMember) };
  };
}

function statusOf(detector: FailureDetector, id: string): string | undefined {
  return detector.members().find((entry) => entry.id === id)?.status;
}

// ---- the server side ------------------------------------------------------------------------

const streamMethod = () => {
  const method = (loadProtocol()[AGENT_SERVICE_NAME] as ServiceDefinition).HeartbeatStream;
  if (method === undefined) throw new Error("no HeartbeatStream");
  return method;
};

/** A raw `HeartbeatStream` call to `address`: what it receives, decoded, and how it ends. */
function rawStream(address: string) {
  const client = new Client(address, credentials.createInsecure());
  const call: ClientDuplexStream<Buffer, Buffer> = client.makeBidiStreamRequest(
    "/ubicrawl.v1.Agent/HeartbeatStream",
    (bytes: Buffer) => bytes,
    (bytes: Buffer) => bytes,
    new Metadata(),
    {},
  );
  const replies: (HeartbeatReply & { sequence: number })[] = [];
  call.on("data", (bytes: Buffer) => replies.push(streamMethod().responseDeserialize(bytes)));
  call.on("error", (_error: ServiceError) => {}); // the status below says it
  const ended = new Promise<StatusObject>((resolve) => call.on("status", resolve));
  onTestFinished(() => {
    call.cancel();
    client.close();
  });
  const write = (message: object) => call.write(streamMethod().requestSerialize(message));
  return { call, replies, ended, write };
}

describe("AgentServer HeartbeatStream", () => {
  it("answers each heartbeat through the heartbeat handler, as the unary call does", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const unary = await client.heartbeat(heartbeat(1));
    expect(await client.streamHeartbeat(heartbeat(1))).toEqual(unary);
    expect(await client.streamHeartbeat(heartbeat(2))).toEqual(unary);
    // The handler sees the same validated request either way (no sequence).
    expect(handlers.calls.heartbeat).toEqual([heartbeat(1), heartbeat(1), heartbeat(2)]);
  });

  it("ends the stream with INVALID_ARGUMENT at the first bad request, after answering the good ones", async () => {
    const handlers = new FakeHandlers();
    const { address } = await startServer(handlers);
    const stream = rawStream(address);
    stream.write({ ...heartbeat(1), sequence: 1 });
    await vi.waitFor(() => expect(stream.replies.map((reply) => reply.sequence)).toEqual([1]));
    stream.write({ ...heartbeat(2), from: member("no spaces allowed"), sequence: 2 });
    stream.write({ ...heartbeat(3), sequence: 3 });
    expect((await stream.ended).code).toBe(status.INVALID_ARGUMENT);
    expect(handlers.calls.heartbeat).toEqual([heartbeat(1)]);
  });

  it.each([
    ["without a sequence", (write: (message: object) => boolean) => write(heartbeat(1))],
    [
      "undecodable",
      (_write: unknown, call: ClientDuplexStream<Buffer, Buffer>) => call.write(Buffer.from([0xff, 0xff])),
    ],
  ])("refuses a request %s with INVALID_ARGUMENT", async (_name, send) => {
    const handlers = new FakeHandlers();
    const { address } = await startServer(handlers);
    const stream = rawStream(address);
    send(stream.write, stream.call);
    expect((await stream.ended).code).toBe(status.INVALID_ARGUMENT);
    expect(handlers.totalCalls).toBe(0);
  });

  it("refuses a bad heartbeat from a PeerClient as BadMessage, then serves the next on a new stream", async () => {
    const { client } = await startServer(new FakeHandlers());
    const error = await failure(client.streamHeartbeat({ ...heartbeat(1), from: member("bad id!") }));
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(grpcStatusOf(error)).toBe(status.INVALID_ARGUMENT);
    expect((await client.streamHeartbeat(heartbeat(2))).from.id).toBe("agent-b");
  });

  it("refuses a heartbeat over the size limit with RESOURCE_EXHAUSTED", async () => {
    const { client } = await startServer(new FakeHandlers(), { maxReceiveMessageBytes: 1024 });
    const big = { ...heartbeat(1), members: Array.from({ length: 40 }, (_, i) => member(`agent-${i}`)) };
    const error = await failure(client.streamHeartbeat(big));
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(grpcStatusOf(error)).toBe(status.RESOURCE_EXHAUSTED);
  });

  it("ends the stream with ALREADY_EXISTS when the handler refuses the sender", async () => {
    const handlers = new FakeHandlers();
    handlers.heartbeat = async () => {
      throw new UbiError(ErrorCode.IdConflict, "agent-a is alive elsewhere");
    };
    const { client } = await startServer(handlers);
    const error = await failure(client.streamHeartbeat(heartbeat(1)));
    expect(error.code).toBe(ErrorCode.IdConflict);
    expect(grpcStatusOf(error)).toBe(status.ALREADY_EXISTS);
  });

  it("answers what is pending before ending a stream the client half-closed", async () => {
    const handlers = new FakeHandlers();
    const answer = handlers.heartbeat.bind(handlers);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let received = 0;
    handlers.heartbeat = async (request) => {
      received++;
      await gate;
      return answer(request);
    };
    const { address } = await startServer(handlers);
    const stream = rawStream(address);
    stream.write({ ...heartbeat(1), sequence: 1 });
    stream.write({ ...heartbeat(2), sequence: 2 });
    stream.call.end();
    await vi.waitFor(() => expect(received).toBe(2));
    release();
    expect((await stream.ended).code).toBe(status.OK);
    expect(stream.replies.map((reply) => reply.sequence).sort()).toEqual([1, 2]);
  });

  it("stop() ends open streams instead of waiting for them: their waiting heartbeats fail", async () => {
    const handlers = new FakeHandlers();
    let called = false;
    handlers.heartbeat = () => {
      called = true;
      return new Promise<never>(() => {});
    };
    // A grace far beyond the test's timeout: stop() must not wait for the stream to end by itself.
    const { server, client } = await startServer(handlers, { stopGraceMs: 10 * 60_000 });
    const waiting = failure(client.streamHeartbeat(heartbeat(1), { deadlineMs: 60_000 }));
    await vi.waitFor(() => expect(called).toBe(true));
    await server.stop();
    const error = await waiting;
    expect(error.code).toBe(ErrorCode.PeerUnreachable);
  });
});
