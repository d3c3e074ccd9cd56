/**
 * A real gRPC peer that serves only the heartbeat rpcs of the agent protocol, counts the calls it gets
 * and lets a test decide when (and with which sequence) stream messages are answered — what an
 * `AgentServer` never does on purpose: late, out-of-order or mismatched replies. Without `streaming`,
 * the `HeartbeatStream` method is left out of the service, as in an agent built before it existed.
 */

import {
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
} from "@grpc/grpc-js";
import {
  AGENT_SERVICE_NAME,
  type HeartbeatReply,
  type HeartbeatRequest,
  loadProtocol,
  type Sequenced,
} from "../../src/transport/index.js";

/** A stream message as the peer decoded it, and how to answer it. */
export interface StreamMessage {
  readonly request: Sequenced<HeartbeatRequest>;
  /** Answers with the peer's reply, tagged with `sequence` (default: the request's). */
  answer(sequence?: number): void;
}

/** Options of a {@link HeartbeatPeer}. */
export interface HeartbeatPeerOptions {
  /** Serve `HeartbeatStream`; false: only the unary `Heartbeat`, so the stream gets UNIMPLEMENTED. */
  readonly streaming: boolean;
  /** The reply to a heartbeat, on either rpc. */
  readonly respond: (request: HeartbeatRequest) => HeartbeatReply;
  /** Called with each stream message; by default it is answered at once. */
  readonly onStreamMessage?: (message: StreamMessage) => void;
}

/** See the module comment; `start()` then `stop()`. */
export class HeartbeatPeer {
  unaryCalls = 0;
  streamsOpened = 0;
  /** Every message received on any stream, in order. */
  readonly streamMessages: StreamMessage[] = [];
  #server: Server | undefined;

  constructor(private readonly options: HeartbeatPeerOptions) {}

  /** Listens on `listen` (`127.0.0.1:0` by default); resolves to the bound address. */
  async start(listen = "127.0.0.1:0"): Promise<string> {
    const all = loadProtocol()[AGENT_SERVICE_NAME] as ServiceDefinition;
    const definition: ServiceDefinition = this.options.streaming
      ? { Heartbeat: all.Heartbeat, HeartbeatStream: all.HeartbeatStream }
      : { Heartbeat: all.Heartbeat };
    const server = new Server();
    server.addService(definition, {
      Heartbeat: (call: ServerUnaryCall<HeartbeatRequest, HeartbeatReply>, done: sendUnaryData<unknown>) => {
        this.unaryCalls++;
        done(null, this.options.respond(call.request));
      },
      HeartbeatStream: (call: ServerDuplexStream<Sequenced<HeartbeatRequest>, unknown>) => {
        this.streamsOpened++;
        call.on("data", (request: Sequenced<HeartbeatRequest>) => {
          const message: StreamMessage = {
            request,
            answer: (sequence = request.sequence) => {
              if (!call.cancelled) call.write({ ...this.options.respond(request), sequence });
            },
          };
          this.streamMessages.push(message);
          if (this.options.onStreamMessage === undefined) message.answer();
          else this.options.onStreamMessage(message);
        });
        call.on("end", () => call.end());
      },
    });
    this.#server = server;
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(listen, ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    return `127.0.0.1:${port}`;
  }

  /** Goes away at once, as a crashed peer does: every connection and stream is cut. */
  stop(): void {
    this.#server?.forceShutdown();
    this.#server = undefined;
  }
}
