/**
 * The gRPC server of one agent: serves `ubicrawl.v1.Agent` (to other agents) and `ubicrawl.v1.Admin`
 * (to operators) over the handlers it is given, after checking the caller's certificate role and
 * validating every request, and turns every handler failure into a gRPC status (never a crash).
 */

import { createServer, isIP } from "node:net";
import type { PeerCertificate } from "node:tls";
import {
  type MethodDefinition,
  Server,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import { formatHostPort, type HostPort, parseHostPort } from "./address.js";
import { type ArchiveSource, archiveImplementation } from "./archive-service.js";
import { certificateRole } from "./certificate-roles.js";
import { RefusalLog, watchRefusals } from "./handshake-refusals.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
import type { AgentServiceHandlers, Sequenced } from "./messages.js";
import {
  AGENT_RPCS,
  type ReplyOf,
  RPC_NAMES,
  SERVICE_ROLES,
  type ServiceName,
  STREAMED_RPCS,
  type StreamedRpc,
  serviceDefinition,
} from "./protocol.js";
import { answerRequest, checkHandlers, decodeRequest, handleRequest } from "./request-answering.js";
import {
  checkTlsMaterial,
  checkTransportSecurity,
  INSECURE,
  serverCredentialsFor,
  type TransportSecurity,
} from "./security.js";
import { type GrpcStatus, statusForError } from "./status-mapping.js";
import { tolerant } from "./tolerant-decode.js";
import { validateSequence } from "./validate.js";

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
  /** The agent's WARC files, for the `Admin` service's archive methods (absent: it serves none). */
  archive?: ArchiveSource;
  /** Timer source for the stop deadline. @default systemClock */
  clock?: Clock;
  /**
   * Where handler failures that are not `UbiError`s (bugs) are logged, with the error, and refused
   * connections (a failed TLS handshake, a TLS client of a plaintext server), one record each with the
   * peer's address, at most 10 a minute. @default JSON records on standard error
   */
  logger?: Logger;
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
  readonly #archive: ArchiveSource | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #refusals: RefusalLog;
  #server: Server | undefined;
  /** Ends each open stream (`HeartbeatStream`, `DigestStream`): they never end by themselves, and `stop()` waits for calls. */
  readonly #streamEnders = new Set<(status: GrpcStatus) => void>();
  #address: string | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: AgentServerOptions, dependencies: AgentServerDependencies) {
    this.#security = options.security ?? INSECURE;
    checkTransportSecurity(this.#security);
    // A key that is not the certificate's would only fail at bind time, as an OpenSSL code.
    if (this.#security.kind === "tls") checkTlsMaterial(this.#security);
    this.#maxReceiveMessageBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!Number.isSafeInteger(this.#maxReceiveMessageBytes) || this.#maxReceiveMessageBytes < 1024) {
      throw new UbiError(ErrorCode.InvalidArgument, "maxReceiveMessageBytes must be an integer >= 1024");
    }
    this.#stopGraceMs = options.stopGraceMs ?? 5000;
    if (!Number.isFinite(this.#stopGraceMs) || this.#stopGraceMs < 0) {
      throw new UbiError(ErrorCode.InvalidArgument, "stopGraceMs must be a non-negative number");
    }
    this.#handlers = dependencies.handlers;
    this.#archive = dependencies.archive;
    checkHandlers(this.#handlers);
    this.#clock = dependencies.clock ?? systemClock;
    this.#logger = dependencies.logger ?? defaultLogger();
    const logger = this.#logger;
    this.#refusals = new RefusalLog(
      {},
      {
        clock: this.#clock,
        write: (line, fields) => logger.warn({ event: "connection-refused", ...fields }, line),
      },
    );
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
    const server = new Server({
      "grpc.max_receive_message_length": this.#maxReceiveMessageBytes,
      // Channelz (grpc's introspection service, which ubicrawl does not serve) counts every call.
      "grpc.enable_channelz": 0,
    });
    server.addService(tolerantDefinition(serviceDefinition("Agent")), this.#implementation("Agent"));
    server.addService(tolerantDefinition(serviceDefinition("Admin")), {
      ...this.#implementation("Admin"),
      ...archiveImplementation(
        this.#archive,
        (call) => this.#roleRefusal("Admin", call),
        (rpc, error) => this.#report(rpc, error),
      ),
    });
    watchRefusals(server, this.#security.kind === "tls", this.#refusals);
    this.#server = server;
    let port: number;
    try {
      // grpc-js logs a failed bind as a raw line of its own: find out first, and say it in words.
      await checkListenable(hostPort);
      port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(formatHostPort(hostPort), serverCredentialsFor(this.#security), (error, bound) => {
          if (error) reject(error);
          else resolve(bound);
        });
      });
    } catch (error) {
      server.forceShutdown();
      this.#server = undefined;
      throw listenError(listen, hostPort, error);
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
    this.#refusals.stop();
    this.#stopping ??= new Promise<void>((resolve) => {
      const deadline = this.#clock.setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, this.#stopGraceMs);
      server.tryShutdown(() => {
        this.#clock.clearTimeout(deadline);
        resolve();
      });
      for (const end of this.#streamEnders) end({ code: status.UNAVAILABLE, details: "agent is stopping" });
    });
    return this.#stopping;
  }

  /** The handlers of `service`'s methods, each checking the caller's role first. */
  #implementation(service: ServiceName): UntypedServiceImplementation {
    const implementation: UntypedServiceImplementation = {};
    for (const name of RPC_NAMES) {
      if (!AGENT_RPCS[name].services.includes(service)) continue;
      implementation[AGENT_RPCS[name].method] = (
        call: ServerUnaryCall<unknown, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        const refusal = this.#roleRefusal(service, call);
        if (refusal) {
          callback(statusForError(refusal));
          return;
        }
        answerRequest(this.#handlers, name, call.request).then(
          (reply) => callback(null, reply),
          (error: unknown) => {
            if (!(error instanceof UbiError)) this.#report(name, error);
            callback(statusForError(error));
          },
        );
      };
    }
    if (service === "Agent") {
      for (const [name, method] of Object.entries(STREAMED_RPCS) as [StreamedRpc, string][]) {
        implementation[method] = (call: ServerDuplexStream<unknown, unknown>) => {
          const refusal = this.#roleRefusal(service, call);
          if (refusal) call.emit("error", statusForError(refusal));
          else this.#serveStream(name, call);
        };
      }
    }
    return implementation;
  }

  /**
   * Why the caller of `call` may not use `service`, or undefined when it may: over mutual TLS, `Agent`
   * takes only agent certificates and `Admin` only operator ones (plaintext has no roles).
   */
  #roleRefusal(
    service: ServiceName,
    call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } | null },
  ): UbiError | undefined {
    if (this.#security.kind !== "tls") return undefined;
    const wanted = SERVICE_ROLES[service];
    const role = certificateRole(call.getAuthContext()?.sslPeerCertificate);
    if (role === wanted) return undefined;
    const shown = role === "none" ? "a certificate of no role" : `an ${role} certificate`;
    return new UbiError(
      ErrorCode.PermissionDenied,
      `the ${service} service takes ${wanted} certificates only, and the caller showed ${shown}` +
        (wanted === "operator" ? " (ubicrawl certs issues operator.pem)" : ""),
    );
  }

  /**
   * Answers each message on the stream form of RPC `name` (`HeartbeatStream`, `DigestStream`) as the
   * unary call would (same validation, same handler), tagged with its sequence. The first bad request
   * or failed handler ends the stream with the status the unary call would have got; a client that
   * half-closes gets its pending replies first.
   */
  #serveStream(name: StreamedRpc, call: ServerDuplexStream<unknown, unknown>): void {
    let inFlight = 0;
    let halfClosed = false;
    let ended = false;
    const end = (error?: GrpcStatus) => {
      if (ended) return;
      ended = true;
      this.#streamEnders.delete(end);
      // grpc-js sends an emitted error's code and details as the stream's status.
      if (error === undefined) call.end();
      else call.emit("error", error);
    };
    this.#streamEnders.add(end);
    call.on("data", (raw: unknown) => {
      if (ended) return;
      inFlight++;
      this.#answerOnStream(name, raw)
        .then(
          (reply) => {
            if (!ended) call.write(reply);
          },
          (error: unknown) => {
            if (!(error instanceof UbiError)) this.#report(name, error);
            end(statusForError(error));
          },
        )
        .finally(() => {
          inFlight--;
          if (halfClosed && inFlight === 0) end();
        });
    });
    call.on("end", () => {
      halfClosed = true;
      if (inFlight === 0) end();
    });
    // The client went away (cancelled, reset, connection lost): nothing is left to answer.
    call.on("cancelled", () => {
      ended = true;
      this.#streamEnders.delete(end);
    });
  }

  async #answerOnStream<K extends StreamedRpc>(name: K, raw: unknown): Promise<Sequenced<ReplyOf<K>>> {
    const request = decodeRequest(name, raw);
    const sequence = validateSequence(raw, `${STREAMED_RPCS[name]} request`);
    return { ...(await handleRequest(this.#handlers, name, request)), sequence };
  }

  #report(rpc: string, error: unknown): void {
    try {
      this.#logger.error({ event: "rpc-failed", rpc, err: error }, `the ${rpc} handler failed`);
    } catch {
      // A failing logger must not turn into an unhandled rejection that kills the agent.
    }
  }
}

/**
 * Binds and releases `hostPort` with a plain TCP server, so that an address in use or not local is
 * found before grpc-js tries (and logs its own line). Names are left to grpc-js, which binds every
 * address a name resolves to and succeeds when one binds.
 */
function checkListenable(hostPort: HostPort): Promise<void> {
  if (isIP(hostPort.host) === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ host: hostPort.host, port: hostPort.port, exclusive: true }, () => {
      probe.close(() => resolve());
    });
  });
}

/** The `ListenFailed` error for a failed bind of `listen`, saying why and what to do. */
function listenError(listen: string, hostPort: HostPort, error: unknown): UbiError {
  const code = (error as NodeJS.ErrnoException).code;
  const text = error instanceof Error ? error.message : String(error);
  const has = (errno: string) => code === errno || text.includes(errno);
  let why: string;
  if (has("EADDRINUSE")) {
    why =
      `the address is already in use: another agent or program listens on port ${hostPort.port} there. ` +
      "Stop it, or give --listen another port (port 0 picks a free one)";
  } else if (has("EADDRNOTAVAIL")) {
    why =
      `${hostPort.host} is not an address of this machine. --listen takes a local address (0.0.0.0 for ` +
      "all of them); behind NAT or a proxy, give the address others reach this agent at with --advertise";
  } else if (has("EACCES")) {
    why = `not allowed to listen on port ${hostPort.port} (ports below 1024 need privileges): choose a port from 1024 up`;
  } else if (has("ENOTFOUND") || has("EAI_AGAIN")) {
    why = `${hostPort.host} does not resolve to an address of this machine`;
  } else {
    why = text;
  }
  return new UbiError(ErrorCode.ListenFailed, `cannot listen on ${listen}: ${why}`, { cause: error });
}
