import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode, isUbiError, UbiError } from "../../src/errors.js";
import type { Logger } from "../../src/logging/index.js";
import {
  AgentServer,
  grpcStatusOf,
  MAX_HOSTS_PER_HAND_OVER,
  MAX_URLS_PER_BATCH,
  PeerClient,
} from "../../src/transport/index.js";
import { recordingLogger } from "../support/recording-logger.js";
import { FakeHandlers, failure, LOAD, member, STATS, startServer } from "./helpers.js";

/** Calls `method` (`Join`, or `Admin/Control` for the operators' service) with raw bytes. */
function rawCall(address: string, method: string, payload: Buffer): Promise<ServiceError | Buffer> {
  const client = new Client(address, credentials.createInsecure());
  const path = method.includes("/") ? `/ubicrawl.v1.${method}` : `/ubicrawl.v1.Agent/${method}`;
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      payload,
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      (error, value) => {
        client.close();
        resolve(error ?? (value as Buffer));
      },
    );
  });
}

const longUrl = (chars: number) => `http://h.test/${"a".repeat(chars - 14)}`;

describe("AgentServer round trips", () => {
  it("binds port 0 to a real port", async () => {
    const { address } = await startServer();
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(address).not.toBe("127.0.0.1:0");
  });

  it("join passes the member and returns the table", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const reply = await client.join({ member: member("agent-a") });
    expect(handlers.calls.join).toEqual([{ member: member("agent-a") }]);
    expect(reply.members).toEqual([member("agent-b", 7002), member("agent-a")]);
  });

  it("heartbeat carries gossip and load both ways", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const request = {
      from: member("agent-a"),
      members: [member("agent-a"), member("agent-c", 7003)],
      load: LOAD,
      unanswered: true,
    };
    const reply = await client.heartbeat(request);
    expect(handlers.calls.heartbeat).toEqual([request]);
    expect(reply).toEqual({
      members: [member("agent-b", 7002)],
      load: { ...LOAD, idle: true },
      from: member("agent-b", 7002),
    });
  });

  it("submitUrls delivers the batch and returns the ack", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const batch = {
      batchId: "agent-a/17",
      fromId: "agent-a",
      urls: [
        { url: "http://x.test/", depth: 0 },
        { url: "http://y.test/p?q=1", depth: 4 },
      ],
    };
    expect(await client.submitUrls(batch)).toEqual({ accepted: 1, forwarded: 1, duplicates: 0 });
    expect(handlers.calls.submitUrls).toEqual([batch]);
  });

  it("claimHosts answers in claim order, done fingerprints as bytes", async () => {
    const { client } = await startServer();
    const hosts = ["old.test:80", "new.test:80", "old.test:8080"].map((host) => ({ host, skip: 0 }));
    const reply = await client.claimHosts({ claimant: member("agent-a"), hosts });
    expect(
      reply.hosts.map((entry) => [entry.host, entry.status, entry.done.length, entry.pagesFetched]),
    ).toEqual([
      ["old.test:80", "GRANTED", 16, 2],
      ["new.test:80", "NOT_HELD", 0, 0],
      ["old.test:8080", "GRANTED", 16, 2],
    ]);
    expect([...(reply.hosts[0]?.done ?? [])]).toEqual(new Array(16).fill(7));
  });

  it("getStats returns structured stats, 64-bit counters and the error map intact", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    expect(await client.getStats({ cluster: false })).toEqual({ agents: [STATS] });
    const cluster = await client.getStats({ cluster: true });
    expect(cluster.agents.map((a) => a.id)).toEqual(["agent-b", "agent-c"]);
    expect(cluster.agents[0]?.bytesFetched).toBe(9_007_199_254_740_000);
    expect(handlers.calls.getStats).toEqual([{ cluster: false }, { cluster: true }]);
  });

  it("control passes action and argument", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    expect(await client.control({ action: "PAUSE", argument: "" })).toEqual({ ok: true, message: "PAUSE" });
    expect(await client.control({ action: "BLACKLIST_ADD", argument: "*.spam.test" })).toEqual({
      ok: true,
      message: "BLACKLIST_ADD *.spam.test",
    });
    expect(handlers.calls.control.map((c) => c.action)).toEqual(["PAUSE", "BLACKLIST_ADD"]);
  });

  it("keeps `this` for class-based handlers", async () => {
    class Counter extends FakeHandlers {
      count = 0;
      override async control() {
        this.count++;
        return { ok: true, message: String(this.count) };
      }
    }
    const { client } = await startServer(new Counter());
    await client.control({ action: "RESUME", argument: "" });
    expect((await client.control({ action: "RESUME", argument: "" })).message).toBe("2");
  });
});

describe("AgentServer validation", () => {
  const good = member("agent-a");
  const cases: [string, (c: PeerClient) => Promise<unknown>][] = [
    ["id with bad chars", (c) => c.join({ member: { ...good, id: "agent a!" } })],
    ["id of 129 chars", (c) => c.join({ member: { ...good, id: "a".repeat(129) } })],
    ["empty id", (c) => c.join({ member: { ...good, id: "" } })],
    ["missing member", (c) => c.join({} as never)],
    ["address without port", (c) => c.join({ member: { ...good, address: "127.0.0.1" } })],
    ["capacity 0", (c) => c.join({ member: { ...good, capacity: 0 } })],
    [
      "unspecified status",
      (c) => c.join({ member: { ...good, status: "MEMBER_STATUS_UNSPECIFIED" as never } }),
    ],
    ["heartbeat without load", (c) => c.heartbeat({ from: good, members: [] } as never)],
    ["heartbeat without from", (c) => c.heartbeat({ members: [good], load: LOAD } as never)],
    [
      "URL over 4096 chars",
      (c) => c.submitUrls({ batchId: "b1", fromId: "agent-a", urls: [{ url: longUrl(4097), depth: 1 }] }),
    ],
    ["empty URL", (c) => c.submitUrls({ batchId: "b1", fromId: "agent-a", urls: [{ url: "", depth: 1 }] })],
    [
      "too many URLs",
      (c) =>
        c.submitUrls({
          batchId: "b1",
          fromId: "agent-a",
          urls: Array.from({ length: MAX_URLS_PER_BATCH + 1 }, (_, i) => ({
            url: `http://h.test/${i}`,
            depth: 1,
          })),
        }),
    ],
    ["empty batch id", (c) => c.submitUrls({ batchId: "", fromId: "agent-a", urls: [] })],
    ["batch id of 129 chars", (c) => c.submitUrls({ batchId: "b".repeat(129), fromId: "agent-a", urls: [] })],
    ["missing sender", (c) => c.submitUrls({ batchId: "b1", fromId: "", urls: [] })],
    [
      "too many hosts claimed",
      (c) =>
        c.claimHosts({
          claimant: member("agent-a"),
          hosts: Array.from({ length: MAX_HOSTS_PER_HAND_OVER + 1 }, (_, i) => ({
            host: `h${i}.test:80`,
            skip: 0,
          })),
        }),
    ],
    [
      "a claimed host that is no host key",
      (c) => c.claimHosts({ claimant: member("agent-a"), hosts: [{ host: "http://h.test/", skip: 0 }] }),
    ],
    [
      "a pushed hand-over that is not GRANTED",
      (c) =>
        c.handOverHosts({
          from: member("agent-a"),
          hosts: [
            {
              host: "h.test:80",
              status: "NOT_HELD",
              holder: null,
              done: new Uint8Array(),
              more: false,
              pagesFetched: 0,
              abandoned: "",
            },
          ],
        }),
    ],
    [
      "done fingerprints cut mid-way",
      (c) =>
        c.handOverHosts({
          from: member("agent-a"),
          hosts: [
            {
              host: "h.test:80",
              status: "GRANTED",
              holder: null,
              done: new Uint8Array(12),
              more: false,
              pagesFetched: 0,
              abandoned: "",
            },
          ],
        }),
    ],
    [
      "unspecified control action",
      (c) => c.control({ action: "CONTROL_ACTION_UNSPECIFIED" as never, argument: "" }),
    ],
    ["blacklist without host", (c) => c.control({ action: "BLACKLIST_ADD", argument: "" })],
  ];

  it.each(cases)("%s → INVALID_ARGUMENT, handler not called", async (_name, send) => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const error = await failure(send(client));
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(grpcStatusOf(error)).toBe(status.INVALID_ARGUMENT);
    expect(handlers.totalCalls).toBe(0);
  });

  it("accepts the limits themselves", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    await client.join({ member: { ...member("a".repeat(128)), id: "A.b_c-9".padEnd(128, "x") } });
    await client.submitUrls({
      batchId: "b".repeat(128),
      fromId: "agent-a",
      urls: [{ url: longUrl(4096), depth: 0 }],
    });
    expect(handlers.calls.join).toHaveLength(1);
    expect(handlers.calls.submitUrls[0]?.urls[0]?.url).toHaveLength(4096);
  });

  it("garbage bytes get an error status, reach no handler, and the server keeps serving", async () => {
    const handlers = new FakeHandlers();
    const { client, address } = await startServer(handlers);
    let seed = 12345;
    const pseudoRandom = Buffer.from(
      Array.from({ length: 512 }, () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed >>> 16;
      }),
    );
    const payloads = [
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
      Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), // length prefix far past the end
      pseudoRandom,
      Buffer.alloc(0), // an empty message decodes to defaults, which fail validation
    ];
    for (const method of ["Join", "Heartbeat", "SubmitUrls", "ClaimHosts", "Admin/Control"]) {
      for (const payload of payloads) {
        const result = await rawCall(address, method, payload);
        expect(result).toBeInstanceOf(Error);
        expect((result as ServiceError).code).toBe(status.INVALID_ARGUMENT);
      }
    }
    expect(handlers.totalCalls).toBe(0);
    expect((await client.control({ action: "RESUME", argument: "" })).ok).toBe(true);
  });

  it("an unknown method is UNIMPLEMENTED", async () => {
    const { address } = await startServer();
    const result = await rawCall(address, "Crawl", Buffer.alloc(0));
    expect((result as ServiceError).code).toBe(status.UNIMPLEMENTED);
  });
});

describe("AgentServer message size limit", () => {
  const bigBatch = (count: number) => ({
    batchId: `big-${count}`,
    fromId: "agent-a",
    urls: Array.from({ length: count }, (_, i) => ({ url: `${longUrl(4000)}${i}`, depth: 1 })),
  });

  it("refuses a message over the default 4 MiB with RESOURCE_EXHAUSTED and keeps serving", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const error = await failure(client.submitUrls(bigBatch(1100))); // ~4.4 MB, valid otherwise
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(grpcStatusOf(error)).toBe(status.RESOURCE_EXHAUSTED);
    expect(handlers.calls.submitUrls).toHaveLength(0);
    expect(await client.submitUrls(bigBatch(900))).toEqual({ accepted: 899, forwarded: 1, duplicates: 0 });
  });

  it("honours maxReceiveMessageBytes", async () => {
    const { client } = await startServer(new FakeHandlers(), { maxReceiveMessageBytes: 64 * 1024 });
    expect(grpcStatusOf(await failure(client.submitUrls(bigBatch(20))))).toBe(status.RESOURCE_EXHAUSTED);
    expect((await client.submitUrls(bigBatch(10))).accepted).toBe(9);
  });
});

describe("AgentServer handler errors", () => {
  function throwingOn(method: "join" | "control", error: unknown): FakeHandlers {
    const handlers = new FakeHandlers();
    handlers[method] = async () => {
      throw error;
    };
    return handlers;
  }

  it("IdConflict → ALREADY_EXISTS → UbiError IdConflict at the client", async () => {
    const refusal = new UbiError(
      ErrorCode.IdConflict,
      "id agent-a is taken by 127.0.0.1:7009; choose another id",
    );
    const { client } = await startServer(throwingOn("join", refusal));
    const error = await failure(client.join({ member: member("agent-a") }));
    expect(error.code).toBe(ErrorCode.IdConflict);
    expect(grpcStatusOf(error)).toBe(status.ALREADY_EXISTS);
    expect(error.message).toContain("choose another id");
  });

  it.each([
    [ErrorCode.InvalidUrl, status.INVALID_ARGUMENT, ErrorCode.BadMessage],
    [ErrorCode.InvalidArgument, status.INVALID_ARGUMENT, ErrorCode.BadMessage],
    [ErrorCode.BadMessage, status.INVALID_ARGUMENT, ErrorCode.BadMessage],
    [ErrorCode.StorageFailed, status.UNAVAILABLE, ErrorCode.PeerUnreachable],
    [ErrorCode.Leaving, status.FAILED_PRECONDITION, ErrorCode.Leaving],
    [ErrorCode.DnsNotFound, status.INTERNAL, ErrorCode.PeerUnreachable],
  ])("handler %s → grpc %s → client %s", async (thrown, grpcCode, clientCode) => {
    const { client } = await startServer(throwingOn("control", new UbiError(thrown, "boom")));
    const error = await failure(client.control({ action: "PAUSE", argument: "" }));
    expect(grpcStatusOf(error)).toBe(grpcCode);
    expect(error.code).toBe(clientCode);
  });

  it("survives plain errors, sync throws and missing replies, reporting the unexpected ones", async () => {
    const { logger, records } = await recordingLogger();
    const handlers = new FakeHandlers();
    handlers.join = async () => {
      throw new TypeError("bug");
    };
    handlers.heartbeat = (() => {
      throw new RangeError("sync bug");
    }) as never;
    handlers.control = (async () => undefined) as never;
    const { client } = await startServer(handlers, {}, logger);
    for (const call of [
      () => client.join({ member: member("agent-a") }),
      () => client.heartbeat({ from: member("agent-a"), members: [], load: LOAD }),
      () => client.control({ action: "PAUSE", argument: "" }),
    ]) {
      const error = await failure(call());
      expect(grpcStatusOf(error)).toBe(status.INTERNAL);
      expect(error.message).not.toContain("bug");
    }
    // Each logged as an error with its RPC and the error itself (the client saw neither).
    expect(records.map((record) => [record.level, record.event, record.rpc])).toEqual([
      ["error", "rpc-failed", "join"],
      ["error", "rpc-failed", "heartbeat"],
      ["error", "rpc-failed", "control"],
    ]);
    expect(records.map((record) => record.err?.message)).toEqual(["bug", "sync bug", expect.any(String)]);
    expect(records[0]?.err?.stack).toContain("TypeError: bug");
    expect(await client.claimHosts({ claimant: member("agent-a"), hosts: [] })).toEqual({ hosts: [] });
  });
  it("survives an error reporter that throws", async () => {
    const handlers = new FakeHandlers();
    handlers.join = async () => {
      throw new Error("bug");
    };
    const { logger } = await recordingLogger();
    const { client } = await startServer(
      handlers,
      {},
      Object.assign(Object.create(logger) as Logger, {
        error: () => {
          throw new Error("logger down");
        },
      }),
    );
    expect(grpcStatusOf(await failure(client.join({ member: member("agent-a") })))).toBe(status.INTERNAL);
    expect((await client.control({ action: "RESUME", argument: "" })).ok).toBe(true);
  });
});

describe("AgentServer lifecycle", () => {
  it("stop waits for in-flight calls, then refuses new ones", async () => {
    const handlers = new FakeHandlers();
    let release: () => void = () => {};
    let entered: () => void = () => {};
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    handlers.submitUrls = async (request) => {
      entered();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { accepted: request.urls.length, forwarded: 0, duplicates: 0 };
    };
    const { server, client, address } = await startServer(handlers);
    const inFlight = client.submitUrls({
      batchId: "b1",
      fromId: "agent-a",
      urls: [{ url: "http://x.test/", depth: 0 }],
    });
    await inHandler;
    let stopped = false;
    const stopping = server.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(false);
    release();
    expect(await inFlight).toEqual({ accepted: 1, forwarded: 0, duplicates: 0 });
    await stopping;
    expect(stopped).toBe(true);
    await server.stop(); // idempotent
    const late = new PeerClient(address, { requestDeadlineMs: 3000 });
    onTestFinished(() => late.close());
    const refused = await failure(late.control({ action: "PAUSE", argument: "" }));
    expect(refused.code).toBe(ErrorCode.PeerUnreachable);
    // What an operator reads names the refused connection, without grpc-js's empty "Resolution note: ".
    expect(refused.message).toMatch(/ECONNREFUSED/);
    expect(refused.message).not.toMatch(/Resolution note/);
  });

  it("stop forces the close after stopGraceMs when a handler hangs", async () => {
    const handlers = new FakeHandlers();
    handlers.heartbeat = () => new Promise(() => {}); // never answers
    const { server, client } = await startServer(handlers, { stopGraceMs: 50 });
    // The client retries the dropped call until its deadline: long past the grace, short for the test.
    const hanging = failure(
      client.heartbeat({ from: member("agent-a"), members: [], load: LOAD }, { deadlineMs: 4_000 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the call reach the handler
    const started = Date.now();
    await server.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await hanging).code).toBe(ErrorCode.PeerUnreachable);
  });

  it("checks options, handlers and listen addresses", async () => {
    const handlers = new FakeHandlers();
    const invalid = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return isUbiError(e, ErrorCode.InvalidArgument);
      }
      return false;
    };
    expect(invalid(() => new AgentServer({ maxReceiveMessageBytes: 10 }, { handlers }))).toBe(true);
    expect(invalid(() => new AgentServer({ stopGraceMs: -1 }, { handlers }))).toBe(true);
    expect(invalid(() => new AgentServer({ security: { kind: "tls" } as never }, { handlers }))).toBe(true);
    expect(invalid(() => new AgentServer({}, { handlers: { ...handlers, join: undefined } as never }))).toBe(
      true,
    );
    const server = new AgentServer({}, { handlers });
    for (const listen of ["127.0.0.1", "no port:1", "127.0.0.1:99999", "::1:0"]) {
      expect((await failure(server.start(listen))).code).toBe(ErrorCode.InvalidArgument);
    }
    expect(server.address).toBeUndefined();
    await server.stop(); // never started: no-op
  });

  it("serves on IPv6 loopback when available", async () => {
    const server = new AgentServer({}, { handlers: new FakeHandlers() });
    let address: string;
    try {
      address = await server.start("[::1]:0");
    } catch {
      return; // no IPv6 loopback on this machine
    }
    const client = new PeerClient(address);
    onTestFinished(async () => {
      client.close();
      await server.stop();
    });
    expect(address).toMatch(/^\[::1\]:\d+$/);
    expect((await client.control({ action: "RESUME", argument: "" })).ok).toBe(true);
  });
});
