/**
 * What carries a {@link PeerClient}'s calls to its peer: the one place a client meets a network. The
 * client encodes, validates and names its calls; a channel moves the bytes — over gRPC
 * ({@link GrpcChannel}) or, for a whole cluster in one process, through a `MemoryNetwork`.
 */

import { Client, Metadata, type MethodDefinition } from "@grpc/grpc-js";
import type { ReplyOf, RequestOf, StreamedRpc } from "./protocol.js";
import { channelSecurityFor, type TransportSecurity } from "./security.js";
import { SequencedStreamClient } from "./sequenced-stream-client.js";
import { errorFromStatus } from "./status-mapping.js";
import { tolerant, type Undecodable } from "./tolerant-decode.js";

/** One unary call as a channel sees it: encoded, with its deadline. */
export interface UnaryExchange {
  /** The proto method (its path, and how its reply decodes). */
  readonly method: MethodDefinition<object, object>;
  /** The method's name in the proto, for error messages. */
  readonly methodName: string;
  /** The encoded request. */
  readonly bytes: Buffer;
  /** How long the call may take, in ms. */
  readonly deadlineMs: number;
  readonly signal?: AbortSignal | undefined;
}

/** The stream form of an RPC's messages (`HeartbeatStream`, `DigestStream`). */
export interface StreamSender<K extends StreamedRpc> {
  /** False while the peer is taken to lack the stream: make unary calls. */
  readonly available: boolean;
  send(request: RequestOf<K>, deadlineMs: number, signal?: AbortSignal): Promise<ReplyOf<K>>;
}

/** How a client's calls reach one peer. */
export interface RpcChannel {
  /**
   * Sends one request; resolves to the decoded reply ({@link Undecodable} when its bytes do not
   * decode), rejects with a `UbiError` for a failed call, or with the signal's reason when it aborts.
   */
  unary(exchange: UnaryExchange): Promise<unknown>;
  /** The stream that carries RPC `rpc`'s messages, or undefined when this channel has none. */
  stream<K extends StreamedRpc>(rpc: K): StreamSender<K> | undefined;
  /** Closes the channel; its streams end. Idempotent. */
  close(): void;
}

/** What a {@link GrpcChannel} is opened with. */
export interface GrpcChannelOptions {
  readonly security: TransportSecurity;
  /** The name to check the peer's certificate against, when it is not the address's host. */
  readonly serverName: string | undefined;
  readonly maxReceiveMessageBytes: number;
  readonly maxReconnectBackoffMs: number;
}

/** A channel over one grpc-js client (one HTTP/2 connection), with its two long-lived streams. */
export class GrpcChannel implements RpcChannel {
  readonly #address: string;
  readonly #client: Client;
  readonly #heartbeats: SequencedStreamClient<"heartbeat">;
  readonly #digestQuestions: SequencedStreamClient<"checkDigests">;

  /** @param host the address's host, which the peer's certificate is checked against by default */
  constructor(address: string, host: string, options: GrpcChannelOptions) {
    this.#address = address;
    const { credentials, options: securityOptions } = channelSecurityFor(
      options.security,
      host,
      options.serverName,
    );
    this.#client = new Client(address, credentials, {
      ...securityOptions,
      "grpc.max_receive_message_length": options.maxReceiveMessageBytes,
      "grpc.max_reconnect_backoff_ms": options.maxReconnectBackoffMs,
      "grpc.initial_reconnect_backoff_ms": Math.min(1000, options.maxReconnectBackoffMs),
      // Channelz (grpc's introspection service, which ubicrawl does not serve) counts every call.
      "grpc.enable_channelz": 0,
    });
    this.#heartbeats = new SequencedStreamClient("heartbeat", address, this.#client);
    this.#digestQuestions = new SequencedStreamClient("checkDigests", address, this.#client);
  }

  unary({ method, methodName, bytes, deadlineMs, signal }: UnaryExchange): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = () => call.cancel();
      const call = this.#client.makeUnaryRequest(
        method.path,
        (encoded: Buffer) => encoded,
        tolerant(method.responseDeserialize),
        bytes,
        new Metadata(),
        { deadline: Date.now() + deadlineMs },
        (error, value) => {
          signal?.removeEventListener("abort", onAbort);
          if (error)
            reject(signal?.aborted ? signal.reason : errorFromStatus(error, this.#address, methodName));
          else resolve(value);
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  stream<K extends StreamedRpc>(rpc: K): StreamSender<K> {
    const stream: StreamSender<StreamedRpc> = rpc === "heartbeat" ? this.#heartbeats : this.#digestQuestions;
    return stream as StreamSender<K>;
  }

  close(): void {
    this.#heartbeats.close();
    this.#digestQuestions.close();
    this.#client.close();
  }
}
