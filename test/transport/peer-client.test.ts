import { createServer, type Server as NetServer, type Socket } from "node:net";
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode, isUbiError, UbiError } from "../../src/errors.js";
import { AgentServer, grpcStatusOf, PeerClient, PeerClientPool } from "../../src/transport/index.js";
import { FakeHandlers, LOAD, member } from "./helpers.js";

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

async function ubiFailure(promise: Promise<unknown>): Promise<UbiError> {
  const error = await failure(promise);
  expect(error).toBeInstanceOf(UbiError);
  return error as UbiError;
}

function listen(server: NetServer): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });
}

/** A port nothing listens on: bind one, then close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP server that accepts connections and never says anything (a hung peer). */
async function blackhole(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
  });
  const port = await listen(server);
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return `127.0.0.1:${port}`;
}

async function agent(handlers = new FakeHandlers()): Promise<string> {
  const server = new AgentServer({}, { handlers });
  const address = await server.start("127.0.0.1:0");
  onTestFinished(() => server.stop());
  return address;
}

function client(address: string, options: ConstructorParameters<typeof PeerClient>[1] = {}): PeerClient {
  const c = new PeerClient(address, options);
  onTestFinished(() => c.close());
  return c;
}

describe("PeerClient failures", () => {
  it("a refused connection is PeerUnreachable (UNAVAILABLE) well within the deadline", async () => {
    const peer = client(`127.0.0.1:${await closedPort()}`);
    const started = Date.now();
    const error = await ubiFailure(peer.heartbeat({ from: member("agent-a"), members: [], load: LOAD }));
    expect(error.code).toBe(ErrorCode.PeerUnreachable);
    expect(grpcStatusOf(error)).toBe(status.UNAVAILABLE);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a peer that never answers is PeerUnreachable (DEADLINE_EXCEEDED) at the deadline", async () => {
    const peer = client(await blackhole(), { heartbeatDeadlineMs: 300 });
    const started = Date.now();
    const error = await ubiFailure(peer.heartbeat({ from: member("agent-a"), members: [], load: LOAD }));
    expect(error.code).toBe(ErrorCode.PeerUnreachable);
    expect(grpcStatusOf(error)).toBe(status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a per-call deadline overrides the default", async () => {
    const peer = client(await blackhole());
    const error = await ubiFailure(
      peer.submitUrls({ batchId: "b", fromId: "agent-a", urls: [] }, { deadlineMs: 200 }),
    );
    expect(grpcStatusOf(error)).toBe(status.DEADLINE_EXCEEDED);
  });

  it("an abort signal cancels the call with the signal's reason", async () => {
    const peer = client(await blackhole());
    const controller = new AbortController();
    const call = peer.getStats({ cluster: true }, { signal: controller.signal, deadlineMs: 30_000 });
    setTimeout(() => controller.abort(new Error("shutting down")), 50);
    expect(((await failure(call)) as Error).message).toBe("shutting down");
    const preAborted = AbortSignal.abort(new Error("already"));
    expect(
      ((await failure(peer.getStats({ cluster: false }, { signal: preAborted }))) as Error).message,
    ).toBe("already");
  });

  it("a closed client refuses calls", async () => {
    const peer = client(await agent());
    expect((await peer.control({ action: "RESUME", argument: "" })).ok).toBe(true);
    peer.close();
    peer.close(); // idempotent
    expect((await ubiFailure(peer.control({ action: "RESUME", argument: "" }))).code).toBe(
      ErrorCode.PeerUnreachable,
    );
  });

  it("a request that cannot be encoded is BadMessage without a network error", async () => {
    const handlers = new FakeHandlers();
    const peer = client(await agent(handlers));
    const error = await ubiFailure(
      peer.claimHosts({ claimant: member("agent-a"), hosts: "not a list" as never }),
    );
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(grpcStatusOf(error)).toBeUndefined();
    expect(handlers.totalCalls).toBe(0);
  });
});

describe("PeerClient reply validation", () => {
  it("refuses a reply that breaks the protocol rules", async () => {
    const handlers = new FakeHandlers();
    handlers.join = async () => ({ members: [{ ...member("agent-b"), id: "bad id" }] });
    const peer = client(await agent(handlers));
    const error = await ubiFailure(peer.join({ member: member("agent-a") }));
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(error.message).toContain("members[0].id");
  });

  it("refuses a claim answer that does not list the hosts claimed, in order", async () => {
    const handlers = new FakeHandlers();
    const answer = handlers.claimHosts.bind(handlers);
    handlers.claimHosts = async (request) => ({ hosts: (await answer(request)).hosts.reverse() });
    const peer = client(await agent(handlers));
    const hosts = [
      { host: "a.test:80", skip: 0 },
      { host: "b.test:80", skip: 0 },
    ];
    const error = await ubiFailure(peer.claimHosts({ claimant: member("agent-a"), hosts }));
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(error.message).toContain("in order");
    handlers.claimHosts = async () => ({ hosts: [] });
    expect((await ubiFailure(peer.claimHosts({ claimant: member("agent-a"), hosts }))).code).toBe(
      ErrorCode.BadMessage,
    );
  });

  it("refuses undecodable reply bytes", async () => {
    // A server speaking the right method names but answering garbage bytes.
    const server = new Server();
    const garbage: ServiceDefinition = {
      Control: {
        path: "/ubicrawl.v1.Admin/Control",
        requestStream: false,
        responseStream: false,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: (b: Buffer) => b,
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    };
    server.addService(garbage, {
      Control: (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) =>
        callback(null, Buffer.from([0x0f])), // wire type 7 does not exist
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    onTestFinished(() => server.forceShutdown());
    const peer = client(`127.0.0.1:${port}`);
    const error = await ubiFailure(peer.control({ action: "PAUSE", argument: "" }));
    expect(error.code).toBe(ErrorCode.BadMessage);
  });
});

describe("PeerClient options", () => {
  it.each([
    ["no port", "127.0.0.1"],
    ["port 0", "127.0.0.1:0"],
    ["empty", ""],
  ])("refuses address with %s", (_name, address) => {
    expect(() => new PeerClient(address)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }) as unknown as Error,
    );
  });

  it.each([
    { heartbeatDeadlineMs: 0 },
    { batchDeadlineMs: -5 },
    { requestDeadlineMs: Number.NaN },
    { maxReceiveMessageBytes: 12.5 },
    { security: { kind: "plain" } as never },
  ])("refuses options %o", (options) => {
    let thrown: unknown;
    try {
      new PeerClient("127.0.0.1:7000", options).close();
    } catch (e) {
      thrown = e;
    }
    expect(isUbiError(thrown, ErrorCode.InvalidArgument)).toBe(true);
  });
});

describe("PeerClientPool", () => {
  it("shares one client per address and closes them", async () => {
    const addressA = await agent();
    const addressB = await agent();
    const pool = new PeerClientPool({ requestDeadlineMs: 3000 });
    onTestFinished(() => pool.closeAll());
    const a = pool.get(addressA);
    expect(pool.get(addressA)).toBe(a);
    const b = pool.get(addressB);
    expect(b).not.toBe(a);
    expect(pool.size).toBe(2);
    expect((await a.control({ action: "RESUME", argument: "" })).ok).toBe(true);
    expect((await b.control({ action: "RESUME", argument: "" })).ok).toBe(true);

    pool.remove(addressA);
    expect(pool.has(addressA)).toBe(false);
    expect((await ubiFailure(a.control({ action: "RESUME", argument: "" }))).code).toBe(
      ErrorCode.PeerUnreachable,
    );
    const again = pool.get(addressA);
    expect(again).not.toBe(a);
    expect((await again.control({ action: "RESUME", argument: "" })).ok).toBe(true);

    pool.closeAll();
    expect(pool.size).toBe(0);
    expect((await ubiFailure(b.control({ action: "RESUME", argument: "" }))).code).toBe(
      ErrorCode.PeerUnreachable,
    );
    expect(() => pool.get(addressB)).toThrow(UbiError);
  });

  it("checks its options once, up front", () => {
    expect(() => new PeerClientPool({ batchDeadlineMs: 0 })).toThrow(UbiError);
  });
});

describe("PeerClient reconnection", () => {
  it("reaches a peer again once it restarts on the same address", async () => {
    const port = await closedPort();
    const peer = client(`127.0.0.1:${port}`, { maxReconnectBackoffMs: 200 });
    const ping = () => peer.control({ action: "RESUME", argument: "" }, { deadlineMs: 1000 });
    expect((await ubiFailure(ping())).code).toBe(ErrorCode.PeerUnreachable);

    const server = new AgentServer({}, { handlers: new FakeHandlers() });
    await server.start(`127.0.0.1:${port}`);
    onTestFinished(() => server.stop());
    const until = Date.now() + 15_000;
    let reply: unknown;
    while (reply === undefined && Date.now() < until) {
      reply = await ping().catch(() => new Promise((resolve) => setTimeout(() => resolve(undefined), 50)));
    }
    expect(reply).toEqual({ ok: true, message: "RESUME" });
  });
});
