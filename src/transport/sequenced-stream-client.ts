/**
 * A unary RPC's messages to one peer over one long-lived stream call instead of one call each
 * (`HeartbeatStream` for heartbeats, `DigestStream` for digest questions: see `STREAMED_RPCS`): a
 * message is then a single HTTP/2 data frame each way, without the headers, metadata, trailers and
 * deadline timers of a call. Requests carry a sequence number and replies are matched by it, in any
 * order. The stream opens on the first request; when it breaks, every request waiting on it fails and
 * the next one opens a new stream.
 */

import { type Client, type ClientDuplexStream, Metadata, type StatusObject, status } from "@grpc/grpc-js";
import { ErrorCode, UbiError } from "../errors.js";
import type { Sequenced } from "./messages.js";
import {
  AGENT_RPCS,
  agentServiceDefinition,
  type ReplyOf,
  type RequestOf,
  STREAMED_RPCS,
  type StreamedRpc,
} from "./protocol.js";
import { errorFromStatus, isServiceError } from "./status-mapping.js";
import { tolerant, Undecodable } from "./tolerant-decode.js";
import { validateSequence } from "./validate.js";

/**
 * A stream with this many requests written and not answered is replaced before the next one: it
 * bounds what an unresponsive (but connected) peer makes this side buffer.
 */
export const MAX_UNANSWERED_ON_STREAM = 16;

/** After a peer answered the stream with UNIMPLEMENTED, how long to send it unary calls, in ms. */
export const STREAM_RETRY_AFTER_UNIMPLEMENTED_MS = 60_000;

/** A request waiting for its reply. */
interface Pending<R> {
  readonly resolve: (reply: R) => void;
  readonly reject: (error: unknown) => void;
  /** Removes the deadline timer and the abort listener. */
  readonly settle: () => void;
}

/** One open call, with what was written on it. */
interface OpenStream<R> {
  readonly call: ClientDuplexStream<Buffer, unknown>;
  /** Sequences written and not answered yet, abandoned ones included. */
  readonly unanswered: Set<number>;
  /** Requests still waited for, by sequence. */
  readonly pending: Map<number, Pending<R>>;
  ended: boolean;
}

/** The stream of RPC `K`'s messages to one peer, over a channel owned by its `PeerClient`. */
export class SequencedStreamClient<K extends StreamedRpc> {
  readonly #rpc: K;
  readonly #method: string;
  readonly #address: string;
  readonly #client: Client;
  #current: OpenStream<ReplyOf<K>> | undefined;
  /** Last sequence used: numbers are never reused, across streams too. */
  #sequence = 0;
  /** Until when (Date.now() ms) the peer is taken to lack the stream rpc. */
  #unimplementedUntilMs = 0;
  #closed = false;

  /**
   * @param rpc the unary RPC whose messages the stream carries
   * @param address the peer's `host:port`, for error messages
   * @param client the grpc-js client of the peer's channel (its credentials and message size limit)
   */
  constructor(rpc: K, address: string, client: Client) {
    this.#rpc = rpc;
    this.#method = STREAMED_RPCS[rpc];
    this.#address = address;
    this.#client = client;
  }

  /** False for a while after the peer answered the stream with UNIMPLEMENTED: make unary calls. */
  get available(): boolean {
    return Date.now() >= this.#unimplementedUntilMs;
  }

  /**
   * Sends `request` on the stream and resolves to its validated reply. Rejects like a unary call:
   * PeerUnreachable when the stream broke (the gRPC status in `cause`: UNIMPLEMENTED means the peer has
   * no stream rpc) or after `deadlineMs`, BadMessage on a bad reply or a refused request, IdConflict
   * when the peer refused the sender; with the signal's reason when `signal` aborts.
   */
  send(request: RequestOf<K>, deadlineMs: number, signal?: AbortSignal): Promise<ReplyOf<K>> {
    if (this.#closed) {
      return Promise.reject(new UbiError(ErrorCode.PeerUnreachable, `client of ${this.#address} is closed`));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const sequence = ++this.#sequence;
    let bytes: Buffer;
    try {
      // Encoded here, as unary requests are, so a local encoding failure is not taken for the peer's.
      bytes = this.#definition().requestSerialize({ ...request, sequence } satisfies Sequenced<RequestOf<K>>);
    } catch (error) {
      return Promise.reject(
        new UbiError(ErrorCode.BadMessage, `cannot encode ${this.#method} request`, { cause: error }),
      );
    }
    let stream = this.#current;
    if (stream !== undefined && stream.unanswered.size >= MAX_UNANSWERED_ON_STREAM) {
      this.#end(stream, this.#failure(`${stream.unanswered.size} requests unanswered`));
      stream = undefined;
    }
    stream ??= this.#open();
    const open = stream;
    return new Promise<ReplyOf<K>>((resolve, reject) => {
      const drop = (error: unknown) => {
        if (open.pending.get(sequence) !== entry) return;
        open.pending.delete(sequence);
        entry.settle();
        reject(error);
      };
      const onAbort = () => drop(signal?.reason);
      const timer = setTimeout(
        () => drop(this.#failure(`no reply in ${deadlineMs} ms (DEADLINE_EXCEEDED)`)),
        deadlineMs,
      );
      const entry: Pending<ReplyOf<K>> = {
        resolve,
        reject,
        settle: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      open.pending.set(sequence, entry);
      open.unanswered.add(sequence);
      open.call.write(bytes);
    });
  }

  /** Cancels the stream; waiting requests fail with PeerUnreachable, later ones too. Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#current !== undefined) this.#end(this.#current, this.#failure("client closed"));
  }

  #open(): OpenStream<ReplyOf<K>> {
    const definition = this.#definition();
    const call = this.#client.makeBidiStreamRequest(
      definition.path,
      (encoded: Buffer) => encoded,
      tolerant(definition.responseDeserialize),
      new Metadata(),
      {},
    );
    const stream: OpenStream<ReplyOf<K>> = {
      call,
      unanswered: new Set(),
      pending: new Map(),
      ended: false,
    };
    this.#current = stream;
    call.on("data", (raw: unknown) => this.#onReply(stream, raw));
    // The status comes as 'error' (then 'status') when not OK, as 'status' alone when OK.
    call.on("error", (error: unknown) => this.#onStatus(stream, error));
    call.on("status", (result: StatusObject) => {
      if (result.code === status.OK) this.#end(stream, this.#failure("stream ended by the peer"));
    });
    return stream;
  }

  #onStatus(stream: OpenStream<ReplyOf<K>>, error: unknown): void {
    if (!isServiceError(error)) {
      this.#end(stream, this.#failure(String(error)));
      return;
    }
    if (error.code === status.UNIMPLEMENTED) {
      this.#unimplementedUntilMs = Date.now() + STREAM_RETRY_AFTER_UNIMPLEMENTED_MS;
    }
    this.#end(stream, errorFromStatus(error, this.#address, this.#method));
  }

  #onReply(stream: OpenStream<ReplyOf<K>>, raw: unknown): void {
    if (stream.ended) return;
    let sequence: number;
    try {
      if (raw instanceof Undecodable) {
        throw new UbiError(ErrorCode.BadMessage, `undecodable ${this.#method} reply: ${raw.reason}`);
      }
      sequence = validateSequence(raw, `${this.#method} reply`);
      if (!stream.unanswered.delete(sequence)) {
        throw new UbiError(ErrorCode.BadMessage, `reply to sequence ${sequence}, which was not asked`);
      }
    } catch (error) {
      // A reply that matches nothing leaves every waiting request unmatchable: start afresh.
      this.#end(stream, error);
      return;
    }
    const entry = stream.pending.get(sequence);
    // None: the request was abandoned (aborted or past its deadline) before this late reply.
    if (entry === undefined) return;
    stream.pending.delete(sequence);
    entry.settle();
    try {
      entry.resolve(AGENT_RPCS[this.#rpc].validateReply(raw) as ReplyOf<K>);
    } catch (invalid) {
      entry.reject(invalid);
    }
  }

  /** Fails every request waiting on `stream` with `error` and cancels it; the next one opens another. */
  #end(stream: OpenStream<ReplyOf<K>>, error: unknown): void {
    if (stream.ended) return;
    stream.ended = true;
    if (this.#current === stream) this.#current = undefined;
    for (const entry of stream.pending.values()) {
      entry.settle();
      entry.reject(error);
    }
    stream.pending.clear();
    stream.call.cancel();
  }

  #failure(reason: string): UbiError {
    return new UbiError(ErrorCode.PeerUnreachable, `${this.#method} to ${this.#address}: ${reason}`);
  }

  #definition() {
    const definition = agentServiceDefinition()[this.#method];
    if (definition === undefined) throw new Error(`proto has no method ${this.#method}`);
    return definition;
  }
}
