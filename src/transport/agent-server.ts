/**
 * The gRPC server of one agent: serves `ubicrawl.v1.Agent` over the handlers it is given, after
 * validating every request, and turns every handler failure into a gRPC status (never a crash).
 */

import {
  type MethodDefinition,
  Server,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { formatHostPort, parseHostPort } from "./address.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
import type { AgentServiceHandlers } from "./messages.js";
import {
  AGENT_RPCS,
  agentServiceDefinition,
  type ReplyOf,
  type RequestOf,
  type RpcName,
} from "./protocol.js";
import {
  checkTransportSecurity,
  INSECURE,
  serverCredentialsFor,
  type TransportSecurity,
} from "./security.js";
import { statusForError } from "./status-mapping.js";
import { tolerant, Undecodable } from "./tolerant-decode.js";

/** Options of an {@link AgentServer}. */
export interface AgentServerOptions {
  /**
   * Credentials of the listening socket.
   * @default { kind: "insecure" }
   */
  security?: TransportSecurity;
  /**
   * Largest request accepted, in bytes; larger ones are refused with RESOURCE_EXHAUSTED.
   * @default 4194304 (4 MiB)
   */
  maxReceiveMessageBytes?: number;
  /**
   * How long `stop()` lets in-flight calls finish before closing connections forcibly, in ms.
   * @default 5000
   */
  stopGraceMs?: number;
}

/** Dependencies of an {@link AgentServer}. */
export interface AgentServerDependencies {
  /** What the server serves. */
  handlers: AgentServiceHandlers;
  /** Timer source for the stop deadline. @default systemClock */
  clock?: Clock;
  /** Told about handler failures that are not `UbiError`s (bugs), for logging. */
  onUnexpectedError?: (rpc: RpcName, error: unknown) => void;
}

/** Wraps each method's decoder so undecodable bytes reach our handler instead of failing early. */
function tolerantDefinition(definition: ServiceDefinition): ServiceDefinition {
  const wrapped: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(definition)) {
    wrapped[name] = { ...method, requestDeserialize: tolerant(method.requestDeserialize) };
  }
  return wrapped;
}

/** Serves the agent protocol on one address; `start()` then `stop()`, once each. */
export class AgentServer {
  readonly #security: TransportSecurity;
  readonly #maxReceiveMessageBytes: number;
  readonly #stopGraceMs: number;
  readonly #handlers: AgentServiceHandlers;
  readonly #clock: Clock;
  readonly #onUnexpectedError: ((rpc: RpcName, error: unknown) => void) | undefined;
  #server: Server | undefined;
  #address: string | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: AgentServerOptions, dependencies: AgentServerDependencies) {
    this.#security = options.security ?? INSECURE;
    checkTransportSecurity(this.#security);
    this.#maxReceiveMessageBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!Number.isSafeInteger(this.#maxReceiveMessageBytes) || this.#maxReceiveMessageBytes < 1024) {
      throw new UbiError(ErrorCode.InvalidArgument, "maxReceiveMessageBytes must be an integer >= 1024");
    }
    this.#stopGraceMs = options.stopGraceMs ?? 5000;
    if (!Number.isFinite(this.#stopGraceMs) || this.#stopGraceMs < 0) {
      throw new UbiError(ErrorCode.InvalidArgument, "stopGraceMs must be a non-negative number");
    }
    this.#handlers = dependencies.handlers;
    for (const name of Object.keys(AGENT_RPCS) as RpcName[]) {
      if (typeof this.#handlers?.[name] !== "function") {
        throw new UbiError(ErrorCode.InvalidArgument, `handlers.${name} must be a function`);
      }
    }
    this.#clock = dependencies.clock ?? systemClock;
    this.#onUnexpectedError = dependencies.onUnexpectedError;
  }

  /** The bound `host:port` (with the real port when started on port 0); undefined before start. */
  get address(): string | undefined {
    return this.#address;
  }

  /** Binds `listen` (`host:port`, port 0 picks a free one) and serves; resolves to the bound address. */
  async start(listen: string): Promise<string> {
    if (this.#server !== undefined) throw new UbiError(ErrorCode.InvalidArgument, "server already started");
    const hostPort = parseHostPort(listen, true);
    if (hostPort === undefined) {
      throw new UbiError(ErrorCode.InvalidArgument, `listen address must be host:port, got ${listen}`);
    }
    const server = new Server({ "grpc.max_receive_message_length": this.#maxReceiveMessageBytes });
    server.addService(tolerantDefinition(agentServiceDefinition()), this.#implementation());
    this.#server = server;
    let port: number;
    try {
      port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(formatHostPort(hostPort), serverCredentialsFor(this.#security), (error, bound) => {
          if (error) reject(error);
          else resolve(bound);
        });
      });
    } catch (error) {
      server.forceShutdown();
      this.#server = undefined;
      throw new UbiError(ErrorCode.InvalidArgument, `cannot listen on ${listen}`, { cause: error });
    }
    this.#address = formatHostPort({ host: hostPort.host, port });
    return this.#address;
  }

  /**
   * Stops accepting calls, lets in-flight ones finish for up to `stopGraceMs`, then closes whatever
   * is left. Idempotent; resolves once the server is closed.
   */
  stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return Promise.resolve();
    this.#stopping ??= new Promise<void>((resolve) => {
      const deadline = this.#clock.setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, this.#stopGraceMs);
      server.tryShutdown(() => {
        this.#clock.clearTimeout(deadline);
        resolve();
      });
    });
    return this.#stopping;
  }

  #implementation(): UntypedServiceImplementation {
    const implementation: UntypedServiceImplementation = {};
    for (const name of Object.keys(AGENT_RPCS) as RpcName[]) {
      implementation[AGENT_RPCS[name].method] = (
        call: ServerUnaryCall<unknown, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        this.#serve(name, call.request).then(
          (reply) => callback(null, reply),
          (error: unknown) => {
            if (!(error instanceof UbiError)) this.#report(name, error);
            callback(statusForError(error));
          },
        );
      };
    }
    return implementation;
  }

  #report(rpc: RpcName, error: unknown): void {
    try {
      this.#onUnexpectedError?.(rpc, error);
    } catch {
      // A failing logger must not turn into an unhandled rejection that kills the agent.
    }
  }

  async #serve<K extends RpcName>(name: K, raw: unknown): Promise<ReplyOf<K>> {
    if (raw instanceof Undecodable) {
      throw new UbiError(
        ErrorCode.BadMessage,
        `undecodable ${AGENT_RPCS[name].method} request: ${raw.reason}`,
      );
    }
    const request = AGENT_RPCS[name].validateRequest(raw);
    // Called as a method so class-based handlers keep their `this`.
    const handler = this.#handlers[name] as unknown as (request: RequestOf<K>) => Promise<ReplyOf<K>>;
    const reply = await handler.call(this.#handlers, request);
    if (typeof reply !== "object" || reply === null) {
      throw new Error(`handler ${name} returned no reply`);
    }
    return reply;
  }
}
