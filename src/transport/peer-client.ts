/**
 * A typed client for one peer agent. Every call has a deadline and fails only with a `UbiError`:
 * PeerUnreachable (retry later or elsewhere), BadMessage (do not retry as is) or IdConflict.
 */

import { status } from "@grpc/grpc-js";
import { ErrorCode, UbiError } from "../errors.js";
import { parseHostPort } from "./address.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
import type {
  BlacklistSync,
  ClaimReply,
  ClaimRequest,
  ControlReply,
  ControlRequest,
  DigestCheck,
  DigestSettleAck,
  DigestSettlements,
  DigestVerdicts,
  HandOverReply,
  HandOverRequest,
  HeartbeatReply,
  HeartbeatRequest,
  IpReply,
  IpRequest,
  JoinReply,
  JoinRequest,
  StatsReply,
  StatsRequest,
  UrlBatch,
  UrlBatchAck,
} from "./messages.js";
import {
  AGENT_RPCS,
  type ReplyOf,
  type RequestOf,
  type RpcName,
  type ServiceName,
  type StreamedRpc,
  serviceDefinition,
} from "./protocol.js";
import { GrpcChannel, type RpcChannel } from "./rpc-channel.js";
import { checkTransportSecurity, INSECURE, type TransportSecurity } from "./security.js";
import { grpcStatusOf } from "./status-mapping.js";
import { Undecodable } from "./tolerant-decode.js";

/** Options of a {@link PeerClient} (and of every client of a `PeerClientPool`). */
export interface PeerClientOptions {
  /**
   * Credentials of the connection; must match the peer's server.
   * @default { kind: "insecure" }
   */
  security?: TransportSecurity;
  /**
   * Deadline of a `heartbeat` call, in ms: a missed heartbeat is cheap, a stuck one delays detection.
   * @default 2000
   */
  heartbeatDeadlineMs?: number;
  /**
   * Deadline of a `submitUrls` call, in ms (a batch may be large and the peer busy).
   * @default 10000
   */
  batchDeadlineMs?: number;
  /**
   * Deadline of the other calls (`join`, `getStats`, `control`), in ms.
   * @default 5000
   */
  requestDeadlineMs?: number;
  /**
   * Deadline of a hand-over (`claimHosts`, `handOverHosts`), in ms: the old owner may wait for its
   * requests in flight to the hosts, each bounded by the fetch timeout.
   * @default 30000
   */
  handOverDeadlineMs?: number;
  /**
   * Largest reply accepted, in bytes.
   * @default 4194304 (4 MiB)
   */
  maxReceiveMessageBytes?: number;
  /**
   * Longest wait between reconnection attempts to a peer that went away, in ms. gRPC's own default
   * (120 s) would make a restarted peer look dead for minutes.
   * @default 5000
   */
  maxReconnectBackoffMs?: number;
  /**
   * The name to check a peer's certificate against, by the `host:port` it is dialed at, for addresses
   * this agent resolved from a name (each address of a `--join` name); others are checked against
   * their own host. @default none
   */
  serverNames?: ReadonlyMap<string, string>;
}

/** Per-call options. */
export interface PeerCallOptions {
  /** Overrides the RPC's default deadline, in ms. */
  deadlineMs?: number;
  /** Cancels the call; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** {@link PeerClientOptions} with defaults applied. */
type ResolvedOptions = Required<PeerClientOptions>;

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new UbiError(ErrorCode.InvalidArgument, `${name} must be a positive number`);
  }
  return value;
}

/** Applies defaults to `options` and checks them; throws `UbiError(InvalidArgument)`. */
export function resolvePeerClientOptions(options: PeerClientOptions): ResolvedOptions {
  const security = options.security ?? INSECURE;
  checkTransportSecurity(security);
  const maxReceiveMessageBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(maxReceiveMessageBytes) || maxReceiveMessageBytes < 1024) {
    throw new UbiError(ErrorCode.InvalidArgument, "maxReceiveMessageBytes must be an integer >= 1024");
  }
  return {
    security,
    heartbeatDeadlineMs: positive(options.heartbeatDeadlineMs ?? 2000, "heartbeatDeadlineMs"),
    batchDeadlineMs: positive(options.batchDeadlineMs ?? 10_000, "batchDeadlineMs"),
    requestDeadlineMs: positive(options.requestDeadlineMs ?? 5000, "requestDeadlineMs"),
    handOverDeadlineMs: positive(options.handOverDeadlineMs ?? 30_000, "handOverDeadlineMs"),
    maxReceiveMessageBytes,
    serverNames: options.serverNames ?? new Map(),
    maxReconnectBackoffMs: positive(options.maxReconnectBackoffMs ?? 5000, "maxReconnectBackoffMs"),
  };
}

/** The client of one agent's `Agent` service (and, for operators, its `Admin` service), at one `host:port`. */
export class PeerClient {
  /** The peer's `host:port`. */
  readonly address: string;
  readonly #options: ResolvedOptions;
  readonly #channel: RpcChannel;
  #closed = false;

  /**
   * @param channel what carries the calls (a `MemoryNetwork`'s, in one process); by default a gRPC
   * connection made with `options`
   */
  constructor(address: string, options: PeerClientOptions = {}, channel?: RpcChannel) {
    const hostPort = typeof address === "string" ? parseHostPort(address) : undefined;
    if (hostPort === undefined) {
      throw new UbiError(ErrorCode.InvalidArgument, `peer address must be host:port, got ${String(address)}`);
    }
    this.address = address;
    this.#options = resolvePeerClientOptions(options);
    this.#channel =
      channel ??
      new GrpcChannel(address, hostPort.host, {
        security: this.#options.security,
        serverName: this.#options.serverNames.get(address),
        maxReceiveMessageBytes: this.#options.maxReceiveMessageBytes,
        maxReconnectBackoffMs: this.#options.maxReconnectBackoffMs,
      });
  }

  /** Announces `request.member` to the peer; resolves to the peer's membership table. */
  join(request: JoinRequest, options: PeerCallOptions = {}): Promise<JoinReply> {
    return this.#call("join", request, options.deadlineMs ?? this.#options.requestDeadlineMs, options.signal);
  }

  /** Sends a heartbeat with gossip as a unary call (to a seed); resolves to the peer's view and load. */
  heartbeat(request: HeartbeatRequest, options: PeerCallOptions = {}): Promise<HeartbeatReply> {
    return this.#call(
      "heartbeat",
      request,
      options.deadlineMs ?? this.#options.heartbeatDeadlineMs,
      options.signal,
    );
  }

  /**
   * Sends a heartbeat to a known member, as {@link heartbeat} does, on the one long-lived
   * `HeartbeatStream` to this peer (much cheaper than a call each). Falls back to the unary call when
   * the peer does not implement the stream (UNIMPLEMENTED), for that heartbeat and for a while after.
   */
  streamHeartbeat(request: HeartbeatRequest, options: PeerCallOptions = {}): Promise<HeartbeatReply> {
    return this.#onStream(
      "heartbeat",
      request,
      options.deadlineMs ?? this.#options.heartbeatDeadlineMs,
      options,
      () => this.heartbeat(request, options),
    );
  }

  /** Hands a batch of URLs to the peer; safe to retry with the same `batchId`. */
  submitUrls(request: UrlBatch, options: PeerCallOptions = {}): Promise<UrlBatchAck> {
    return this.#call(
      "submitUrls",
      request,
      options.deadlineMs ?? this.#options.batchDeadlineMs,
      options.signal,
    );
  }

  /**
   * Claims hosts (a hand-over); the reply has one entry per host, in order. The peer may first wait for
   * its requests in flight to those hosts, so the deadline is the hand-over one.
   */
  async claimHosts(request: ClaimRequest, options: PeerCallOptions = {}): Promise<ClaimReply> {
    const reply = await this.#call(
      "claimHosts",
      request,
      options.deadlineMs ?? this.#options.handOverDeadlineMs,
      options.signal,
    );
    if (
      reply.hosts.some((host, i) => host.host !== request.hosts[i]?.host) ||
      reply.hosts.length !== request.hosts.length
    ) {
      throw new UbiError(
        ErrorCode.BadMessage,
        `ClaimHosts to ${this.address}: the answer does not list the ${request.hosts.length} hosts claimed, in order`,
      );
    }
    return reply;
  }

  /** Pushes hosts to their next owner (a graceful leave); resolves once it took them in durably. */
  handOverHosts(request: HandOverRequest, options: PeerCallOptions = {}): Promise<HandOverReply> {
    return this.#call(
      "handOverHosts",
      request,
      options.deadlineMs ?? this.#options.handOverDeadlineMs,
      options.signal,
    );
  }

  /**
   * Fetches the peer's stats (and, with `cluster`, those of every live agent it knows), as another
   * agent: on the `Agent` service, which takes agent certificates only.
   */
  getStats(request: StatsRequest, options: PeerCallOptions = {}): Promise<StatsReply> {
    return this.#call(
      "getStats",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
    );
  }

  /** The same stats, asked by an operator: on the `Admin` service, which takes operator certificates only. */
  operatorStats(request: StatsRequest, options: PeerCallOptions = {}): Promise<StatsReply> {
    return this.#call(
      "getStats",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
      "Admin",
    );
  }

  /**
   * Relays an operator command to this peer, as the agent an operator asked with `cluster` (`Agent`
   * service, agent certificates only). The request goes without `cluster`: it stops here.
   */
  relayControl(request: ControlRequest, options: PeerCallOptions = {}): Promise<ControlReply> {
    const { cluster: _relayedOnce, ...relayed } = request;
    return this.#call(
      "control",
      { ...relayed, urls: relayed.urls ?? [] },
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
    );
  }

  /** Sends an operator command (`Admin` service: operator certificates only). */
  control(request: ControlRequest, options: PeerCallOptions = {}): Promise<ControlReply> {
    return this.#call(
      "control",
      { ...request, urls: request.urls ?? [] },
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
      "Admin",
    );
  }

  /** Sends this agent's blacklist entries, and gets the peer's after it merged them (`Agent` service). */
  syncBlacklist(request: BlacklistSync, options: PeerCallOptions = {}): Promise<BlacklistSync> {
    return this.#call(
      "syncBlacklist",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
    );
  }

  /** Asks the peer about payload digests it owns (`Agent` service). */
  checkDigests(request: DigestCheck, options: PeerCallOptions = {}): Promise<DigestVerdicts> {
    return this.#call(
      "checkDigests",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
    );
  }

  /**
   * Asks as {@link checkDigests} does, on the one long-lived `DigestStream` to this peer (a busy agent
   * asks every few milliseconds: a call each costs several times the message). Falls back to the unary
   * call when the peer does not implement the stream, for that request and for a while after.
   */
  streamCheckDigests(request: DigestCheck, options: PeerCallOptions = {}): Promise<DigestVerdicts> {
    return this.#onStream(
      "checkDigests",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options,
      () => this.checkDigests(request, options),
    );
  }

  /** Tells the peer what became of digests it said were new (`Agent` service). */
  settleDigests(request: DigestSettlements, options: PeerCallOptions = {}): Promise<DigestSettleAck> {
    return this.#call(
      "settleDigests",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
    );
  }

  /** Asks the peer, the authority of some IP addresses, for their politeness grants (`Agent` service). */
  ipGrants(request: IpRequest, options: PeerCallOptions = {}): Promise<IpReply> {
    return this.#call(
      "ipGrants",
      request,
      options.deadlineMs ?? this.#options.requestDeadlineMs,
      options.signal,
    );
  }

  /** Closes the connection; later calls fail with PeerUnreachable. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#channel.close();
  }

  /**
   * Sends `request` on the stream of `rpc`, or through `unary` when the channel has no stream or the
   * peer lacks it (UNIMPLEMENTED).
   */
  async #onStream<K extends StreamedRpc>(
    rpc: K,
    request: RequestOf<K>,
    deadlineMs: number,
    options: PeerCallOptions,
    unary: () => Promise<ReplyOf<K>>,
  ): Promise<ReplyOf<K>> {
    const stream = this.#closed ? undefined : this.#channel.stream(rpc);
    if (stream?.available) {
      try {
        return await stream.send(request, positive(deadlineMs, "deadlineMs"), options.signal);
      } catch (error) {
        if (grpcStatusOf(error) !== status.UNIMPLEMENTED) throw error;
      }
    }
    return unary();
  }

  #call<K extends RpcName>(
    name: K,
    request: RequestOf<K>,
    deadlineMs: number,
    signal: AbortSignal | undefined,
    service: ServiceName = "Agent",
  ): Promise<ReplyOf<K>> {
    const spec = AGENT_RPCS[name];
    const method = serviceDefinition(service)[spec.method];
    if (method === undefined) throw new Error(`proto has no method ${spec.method}`);
    if (this.#closed) {
      return Promise.reject(new UbiError(ErrorCode.PeerUnreachable, `client of ${this.address} is closed`));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    positive(deadlineMs, "deadlineMs");
    let bytes: Buffer;
    try {
      // Encoding here, not inside grpc-js, so a local encoding failure is not mistaken for the peer's.
      bytes = method.requestSerialize(request);
    } catch (error) {
      return Promise.reject(
        new UbiError(ErrorCode.BadMessage, `cannot encode ${spec.method} request`, { cause: error }),
      );
    }
    return this.#channel.unary({ method, methodName: spec.method, bytes, deadlineMs, signal }).then((raw) => {
      if (raw instanceof Undecodable) {
        throw new UbiError(ErrorCode.BadMessage, `undecodable ${spec.method} reply: ${raw.reason}`);
      }
      return spec.validateReply(raw);
    });
  }
}
