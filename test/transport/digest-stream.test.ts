import {
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
} from "@grpc/grpc-js";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import {
  AGENT_SERVICE_NAME,
  type DigestCheck,
  type DigestVerdicts,
  loadProtocol,
  PeerClient,
  type Sequenced,
} from "../../src/transport/index.js";
import { FakeHandlers, failure, startServer } from "./helpers.js";

/**
 * Digest questions on `DigestStream`: answered by a real `AgentServer` with its `CheckDigests` handler
 * and validation, one stream for all of them, and the unary call to a peer that lacks the stream.
 */

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** A distinct valid digest for each `n` below 32². */
const digest = (n: number) => `sha1:${"A".repeat(30)}${BASE32[Math.floor(n / 32)]}${BASE32[n % 32]}`;

function question(...ns: number[]): DigestCheck {
  return { fromId: "agent-a", fromIncarnation: 1, digests: ns.map(digest), settlements: [] };
}

/** A bare peer serving `methods` only (an agent built before `DigestStream`, or one that took it away). */
async function barePeer(methods: readonly ("CheckDigests" | "DigestStream")[]) {
  const all = loadProtocol()[AGENT_SERVICE_NAME] as ServiceDefinition;
  const seen = { unary: 0, streams: 0, streamed: 0 };
  const answer = (request: DigestCheck): DigestVerdicts => ({
    verdicts: request.digests.map(() => ({ state: "DIGEST_NEW", original: null })),
  });
  const server = new Server();
  server.addService(Object.fromEntries(methods.map((m) => [m, all[m]])) as ServiceDefinition, {
    CheckDigests: (call: ServerUnaryCall<DigestCheck, DigestVerdicts>, done: sendUnaryData<unknown>) => {
      seen.unary++;
      done(null, answer(call.request));
    },
    DigestStream: (call: ServerDuplexStream<Sequenced<DigestCheck>, unknown>) => {
      seen.streams++;
      call.on("data", (request: Sequenced<DigestCheck>) => {
        seen.streamed++;
        call.write({ ...answer(request), sequence: request.sequence });
      });
      call.on("end", () => call.end());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  const client = new PeerClient(`127.0.0.1:${port}`);
  onTestFinished(() => {
    client.close();
    server.forceShutdown();
  });
  return { client, seen };
}

describe("PeerClient.streamCheckDigests", () => {
  it("is answered by the agent's CheckDigests handler, each question with its own verdicts", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const sizes = [1, 2, 3, 4, 5];
    const replies = await Promise.all(
      sizes.map((size) => client.streamCheckDigests(question(...Array.from({ length: size }, (_, i) => i)))),
    );
    expect(replies.map((reply) => reply.verdicts.length)).toEqual(sizes);
    expect(replies.every((reply) => reply.verdicts[0]?.state === "DIGEST_SEEN")).toBe(true);
    expect(handlers.calls.checkDigests.map((request) => request.digests.length).sort()).toEqual(sizes);
  });

  it("sends every question on one stream, never a call each", async () => {
    const { client, seen } = await barePeer(["DigestStream"]);
    for (let n = 1; n <= 4; n++)
      expect((await client.streamCheckDigests(question(n))).verdicts).toHaveLength(1);
    await Promise.all([5, 6, 7].map((n) => client.streamCheckDigests(question(n, n + 10))));
    expect(seen).toEqual({ unary: 0, streams: 1, streamed: 7 });
  });

  it("asks a peer that lacks the stream with the unary call", async () => {
    const { client, seen } = await barePeer(["CheckDigests"]);
    for (let n = 1; n <= 3; n++)
      expect((await client.streamCheckDigests(question(n))).verdicts).toHaveLength(1);
    expect(seen.unary).toBe(3);
  });

  it("refuses a bad question as BadMessage, as the unary call does, and asks the next on a new stream", async () => {
    const handlers = new FakeHandlers();
    const { client } = await startServer(handlers);
    const bad = { ...question(1), digests: ["not a digest"] };
    expect((await failure(client.streamCheckDigests(bad))).code).toBe(ErrorCode.BadMessage);
    expect((await failure(client.checkDigests(bad))).code).toBe(ErrorCode.BadMessage);
    expect((await client.streamCheckDigests(question(2))).verdicts).toHaveLength(1);
    expect(handlers.calls.checkDigests).toHaveLength(1);
  });
});
