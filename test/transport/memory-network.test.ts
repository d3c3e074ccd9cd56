import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { grpcStatusOf, MemoryNetwork, type PeerClient, PeerClientPool } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";
import { FakeHandlers, failure, member } from "./helpers.js";

const A = "a.memory:7000";
const B = "b.memory:7000";

/** Lets promise callbacks run (handlers, replies) between steps of the manual clock. */
const ticks = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A network on a manual clock, B serving `handlers`, and A's client of B. */
async function twoAgents(handlers = new FakeHandlers(), random = () => 0.5) {
  const clock = new ManualClock();
  const { logger, records } = await recordingLogger({ level: "error" });
  const network = new MemoryNetwork({ clock, random, logger });
  const server = network.transport(B).server({ maxReceiveMessageBytes: 4096 }, { handlers });
  await server.start(B);
  const client: PeerClient = new PeerClientPool({}, network.transport(A)).get(B);
  /** Moves the clock by `ms` and lets what falls due run, and what that sets off without delay. */
  const advance = async (ms: number) => {
    await ticks();
    clock.advance(ms);
    for (let round = 0; round < 5; round++) {
      await ticks();
      clock.advance(0);
    }
  };
  return { clock, network, server, client, handlers, records, advance };
}

const batch = (urls: string[]) => ({
  batchId: "b1",
  fromId: "agent-a",
  urls: urls.map((url) => ({ url, depth: 1 })),
});

describe("MemoryNetwork", () => {
  it("carries a call as the gRPC transport does: encoded, validated both ways, answered by the handler", async () => {
    const { client, handlers, advance } = await twoAgents();
    const reply = client.submitUrls(batch(["http://x.test/a", "http://x.test/b"]));
    await advance(0);
    expect(await reply).toEqual({ accepted: 1, forwarded: 1, duplicates: 0 });
    // What the handler got went through the proto codec: defaults filled in, as over gRPC.
    expect(handlers.calls.submitUrls[0]?.urls[0]).toMatchObject({ url: "http://x.test/a", depth: 1 });
  });

  it("refuses a request its validation refuses, and a reply the client's refuses, as BadMessage", async () => {
    const handlers = new FakeHandlers();
    const { client, advance } = await twoAgents(handlers);
    const badRequest = failure(client.submitUrls({ ...batch(["http://x.test/a"]), batchId: "b\u0001" }));
    await advance(0);
    expect((await badRequest).code).toBe(ErrorCode.BadMessage);
    expect(handlers.calls.submitUrls).toHaveLength(0);
    handlers.join = async () => ({ members: [member("not an id!")] });
    const badReply = failure(client.join({ member: member("agent-a") }));
    await advance(0);
    expect((await badReply).code).toBe(ErrorCode.BadMessage);
  });

  it("maps a handler's failure through the gRPC status, and logs one that is a bug", async () => {
    const handlers = new FakeHandlers();
    const { client, records, advance } = await twoAgents(handlers);
    handlers.join = async () => {
      throw new UbiError(ErrorCode.IdConflict, "agent-a is alive");
    };
    const conflict = failure(client.join({ member: member("agent-a") }));
    await advance(0);
    expect((await conflict).code).toBe(ErrorCode.IdConflict);
    handlers.getStats = async () => {
      throw new TypeError("oops");
    };
    const bug = failure(client.getStats({ cluster: false }));
    await advance(0);
    const error = await bug;
    expect(error.code).toBe(ErrorCode.PeerUnreachable);
    expect(grpcStatusOf(error)).toBe(status.INTERNAL);
    expect(records.map((record) => record.event)).toContain("rpc-failed");
  });

  it("refuses a request over the server's size limit with RESOURCE_EXHAUSTED", async () => {
    const { client, advance } = await twoAgents();
    const urls = Array.from({ length: 200 }, (_, i) => `http://x.test/${"p".repeat(20)}${i}`);
    const tooBig = failure(client.submitUrls(batch(urls)));
    await advance(0);
    const error = await tooBig;
    expect(error.code).toBe(ErrorCode.BadMessage);
    expect(grpcStatusOf(error)).toBe(status.RESOURCE_EXHAUSTED);
  });

  it("fails a call to an address nobody serves at once, as a refused connection", async () => {
    const { client, server, advance } = await twoAgents();
    await server.stop();
    const refused = failure(client.getStats({ cluster: false }));
    await advance(0);
    expect(grpcStatusOf(await refused)).toBe(status.UNAVAILABLE);
  });

  it("delays each direction of a link by its own rule: a slow request, then a slow reply", async () => {
    const { client, network, handlers, advance } = await twoAgents();
    network.setLink(A, B, { delayMs: 300 });
    let answered = false;
    const slowRequest = client.getStats({ cluster: false }).then(() => {
      answered = true;
    });
    await advance(299);
    expect(handlers.calls.getStats).toHaveLength(0);
    await advance(1);
    await slowRequest;
    expect(answered).toBe(true);

    network.heal();
    network.setLink(B, A, { delayMs: 500 });
    answered = false;
    const slowReply = client.getStats({ cluster: false }).then(() => {
      answered = true;
    });
    await advance(0);
    expect(handlers.calls.getStats).toHaveLength(2);
    await advance(499);
    expect(answered).toBe(false);
    await advance(1);
    await slowReply;
    expect(answered).toBe(true);
  });

  it("loses every message across a partition: calls fail at their deadline, unseen; heal() brings it back", async () => {
    const { client, network, handlers, advance } = await twoAgents();
    network.partition([A], [B]);
    const lost = failure(client.getStats({ cluster: false }, { deadlineMs: 1_000 }));
    await advance(999);
    await advance(1);
    const error = await lost;
    expect(error.code).toBe(ErrorCode.PeerUnreachable);
    expect(grpcStatusOf(error)).toBe(status.DEADLINE_EXCEEDED);
    expect(handlers.calls.getStats).toHaveLength(0);
    network.heal();
    const back = client.getStats({ cluster: false });
    await advance(0);
    await back;
    expect(handlers.calls.getStats).toHaveLength(1);
  });

  it("loses the share of messages its loss rate says, drawn from the injected random source", async () => {
    const draws = [0.1, 0.9];
    const { client, network, handlers, advance } = await twoAgents(
      new FakeHandlers(),
      () => draws.shift() ?? 0.9,
    );
    network.setLink(A, B, { lossRate: 0.5 });
    const lost = failure(client.getStats({ cluster: false }, { deadlineMs: 100 }));
    const delivered = client.getStats({ cluster: false }, { deadlineMs: 100 });
    await advance(0);
    await delivered;
    await advance(100);
    expect(grpcStatusOf(await lost)).toBe(status.DEADLINE_EXCEEDED);
    expect(handlers.calls.getStats).toHaveLength(1);
  });

  it("ends a call when its signal aborts, with the signal's reason", async () => {
    const { client, network, advance } = await twoAgents();
    network.setLink(A, B, { delayMs: 1_000 });
    const controller = new AbortController();
    const call = client.getStats({ cluster: false }, { signal: controller.signal }).catch((e: unknown) => e);
    await advance(10);
    controller.abort(new Error("shutting down"));
    expect(((await call) as Error).message).toBe("shutting down");
  });

  it("gives a server started on port 0 a port of its own, and refuses a second server at one address", async () => {
    const { network } = await twoAgents();
    const handlers = new FakeHandlers();
    const first = await network.transport("c.memory:0").server({}, { handlers }).start("c.memory:0");
    const second = await network.transport("c.memory:0").server({}, { handlers }).start("c.memory:0");
    expect(first).not.toBe(second);
    const taken = await failure(network.transport(B).server({}, { handlers }).start(B));
    expect(taken.code).toBe(ErrorCode.ListenFailed);
    expect(network.addresses).toEqual(expect.arrayContaining([B, first, second]));
  });
});
