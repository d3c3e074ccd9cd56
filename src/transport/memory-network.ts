/**
 * A network inside one process, for a whole cluster in one process: each agent's server registers at
 * its address, and a call goes to it as bytes — encoded and decoded with the proto's own codec,
 * validated field by field on both ends, refused past the message size limits, mapped to and from gRPC
 * statuses — exactly what the gRPC transport checks, without sockets. Each direction of each link can be
 * delayed, made lossy or cut, on the injected clock: partitions, a slow direction and dead agents are
 * then reached deliberately instead of by timing real processes.
 *
 * What it does not model: TLS and certificate roles (every caller may use both services), the
 * `HeartbeatStream` and `DigestStream` streams (clients fall back to their unary calls) and the `Admin`
 * service's archive methods.
 */

import { Metadata, type MethodDefinition, type ServiceError, status } from "@grpc/grpc-js";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import type { AgentServerDependencies, AgentServerOptions } from "./agent-server.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
import type { AgentServiceHandlers } from "./messages.js";
import { PeerClient, type PeerClientOptions } from "./peer-client.js";
import type { PeerServer, PeerTransport } from "./peer-transport.js";
import { AGENT_RPCS, type RpcName } from "./protocol.js";
import { answerRequest, checkHandlers } from "./request-answering.js";
import type { RpcChannel, UnaryExchange } from "./rpc-channel.js";
import { errorFromStatus, type GrpcStatus, statusForError } from "./status-mapping.js";
import { tolerant } from "./tolerant-decode.js";

/** What happens to messages going one way on one link. */
export interface LinkRule {
  /** Every message takes this long, in ms. @default 0 */
  readonly delayMs?: number;
  /** The share of messages lost (0 … 1); a lost call fails at its deadline. @default 0 */
  readonly lossRate?: number;
  /** Every message is lost (a partition): calls fail at their deadline. @default false */
  readonly cut?: boolean;
}

/** What a {@link MemoryNetwork} is given rather than reaching for. */
export interface MemoryNetworkDeps {
  /** Delays, deadlines and lost messages run on it. @default systemClock */
  readonly clock?: Clock;
  /** Draws which messages a lossy link loses, in [0, 1): give a seeded one for a repeatable run. @default Math.random */
  readonly random?: () => number;
  /** Where handler failures that are not `UbiError`s (bugs) are logged. @default JSON records on standard error */
  readonly logger?: Logger;
}

/** A served agent: its handlers and how large a request it takes. */
interface Endpoint {
  readonly handlers: AgentServiceHandlers;
  readonly maxReceiveMessageBytes: number;
  readonly logger: Logger;
}

/** The RPC of each proto method name. */
const RPC_BY_METHOD = new Map(
  (Object.keys(AGENT_RPCS) as RpcName[]).map((name) => [AGENT_RPCS[name].method, name] as const),
);

/** A grpc-js-shaped failure, so the client maps it exactly as it maps a real call's. */
function serviceError({ code, details }: GrpcStatus): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), {
    code,
    details,
    metadata: new Metadata(),
  });
}

/** The agents of one process and the links between them. */
export class MemoryNetwork {
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: Logger | undefined;
  readonly #endpoints = new Map<string, Endpoint>();
  /** Rules by `from → to`. */
  readonly #links = new Map<string, LinkRule>();
  #nextPort = 1;

  constructor(deps: MemoryNetworkDeps = {}) {
    this.#clock = deps.clock ?? systemClock;
    this.#random = deps.random ?? Math.random;
    this.#logger = deps.logger;
  }

  /**
   * The transport of the agent at `self` (`host:port`, the address its server listens at): the links
   * its calls take start there.
   */
  transport(self: string): PeerTransport {
    return {
      connect: (address: string, options: PeerClientOptions) =>
        new PeerClient(address, options, this.#channel(self, address, options)),
      server: (options: AgentServerOptions, dependencies: AgentServerDependencies) =>
        this.#server(options, dependencies),
    };
  }

  /** Sets what happens to messages from `from` to `to` (one direction); replaces the earlier rule. */
  setLink(from: string, to: string, rule: LinkRule): void {
    this.#links.set(`${from} → ${to}`, rule);
  }

  /** Cuts every link between agents of different groups, both ways (agents in no group keep theirs). */
  partition(...groups: readonly (readonly string[])[]): void {
    for (const [i, group] of groups.entries()) {
      for (const other of groups.slice(i + 1)) {
        for (const a of group) {
          for (const b of other) {
            this.setLink(a, b, { ...this.#rule(a, b), cut: true });
            this.setLink(b, a, { ...this.#rule(b, a), cut: true });
          }
        }
      }
    }
  }

  /** Every link back to normal: no delay, no loss, no cut. */
  heal(): void {
    this.#links.clear();
  }

  /** The addresses served now. */
  get addresses(): string[] {
    return [...this.#endpoints.keys()];
  }

  #rule(from: string, to: string): LinkRule {
    return this.#links.get(`${from} → ${to}`) ?? {};
  }

  /** Runs `deliver` once a message from `from` reached `to`, or never when the link loses it. */
  #carry(from: string, to: string, deliver: () => void): void {
    const rule = this.#rule(from, to);
    if (rule.cut === true || (rule.lossRate !== undefined && this.#random() < rule.lossRate)) return;
    this.#clock.setTimeout(deliver, rule.delayMs ?? 0);
  }

  #server(options: AgentServerOptions, dependencies: AgentServerDependencies): PeerServer {
    checkHandlers(dependencies.handlers);
    const endpoint: Endpoint = {
      handlers: dependencies.handlers,
      maxReceiveMessageBytes: options.maxReceiveMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      logger: dependencies.logger ?? this.#logger ?? defaultLogger(),
    };
    let bound: string | undefined;
    return {
      get address() {
        return bound;
      },
      start: async (listen: string) => {
        if (bound !== undefined) throw new UbiError(ErrorCode.InvalidArgument, "server already started");
        const address = listen.endsWith(":0") ? `${listen.slice(0, -2)}:${this.#nextPort++}` : listen;
        if (this.#endpoints.has(address)) {
          throw new UbiError(
            ErrorCode.ListenFailed,
            `cannot listen on ${address}: the address is already in use`,
          );
        }
        this.#endpoints.set(address, endpoint);
        bound = address;
        return address;
      },
      stop: async () => {
        if (bound !== undefined && this.#endpoints.get(bound) === endpoint) this.#endpoints.delete(bound);
      },
    };
  }

  #channel(from: string, to: string, options: PeerClientOptions): RpcChannel {
    let closed = false;
    const maxReplyBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    return {
      unary: (exchange) =>
        closed
          ? Promise.reject(new UbiError(ErrorCode.PeerUnreachable, `client of ${to} is closed`))
          : this.#call(from, to, exchange, maxReplyBytes),
      stream: () => undefined,
      close: () => {
        closed = true;
      },
    };
  }

  /** One call from `from` to `to`, as the gRPC transport would make it. */
  #call(from: string, to: string, exchange: UnaryExchange, maxReplyBytes: number): Promise<unknown> {
    const { method, methodName, bytes, deadlineMs, signal } = exchange;
    const failure = (code: status, details: string) =>
      errorFromStatus(serviceError({ code, details }), to, methodName);
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const settle = (finish: () => void) => {
        if (settled) return;
        settled = true;
        this.#clock.clearTimeout(deadline);
        signal?.removeEventListener("abort", onAbort);
        finish();
      };
      const onAbort = () => settle(() => reject(signal?.reason));
      const deadline = this.#clock.setTimeout(
        () => settle(() => reject(failure(status.DEADLINE_EXCEEDED, "Deadline exceeded"))),
        deadlineMs,
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      const answerWith = (outcome: () => void) => this.#carry(to, from, () => settle(outcome));
      this.#carry(from, to, () => {
        const endpoint = this.#endpoints.get(to);
        if (endpoint === undefined) {
          settle(() => reject(failure(status.UNAVAILABLE, "No connection established: connection refused")));
          return;
        }
        const name = RPC_BY_METHOD.get(methodName);
        if (name === undefined) {
          answerWith(() => reject(failure(status.UNIMPLEMENTED, `${methodName} is not served here`)));
          return;
        }
        if (bytes.length > endpoint.maxReceiveMessageBytes) {
          const details = `Received message larger than max (${bytes.length} vs. ${endpoint.maxReceiveMessageBytes})`;
          answerWith(() => reject(failure(status.RESOURCE_EXHAUSTED, details)));
          return;
        }
        this.#answer(endpoint, method, name, bytes).then(
          (reply) =>
            answerWith(() => {
              if (reply.length > maxReplyBytes) {
                const details = `Received message larger than max (${reply.length} vs. ${maxReplyBytes})`;
                reject(failure(status.RESOURCE_EXHAUSTED, details));
              } else {
                resolve(tolerant(method.responseDeserialize)(reply));
              }
            }),
          (error: unknown) => {
            const { code, details } = statusForError(error);
            answerWith(() => reject(failure(code, details)));
          },
        );
      });
    });
  }

  /** The encoded reply of `endpoint` to the encoded request; rejects as its handler does. */
  async #answer(
    endpoint: Endpoint,
    method: MethodDefinition<object, object>,
    name: RpcName,
    bytes: Buffer,
  ): Promise<Buffer> {
    try {
      const reply = await answerRequest(endpoint.handlers, name, tolerant(method.requestDeserialize)(bytes));
      return method.responseSerialize(reply);
    } catch (error) {
      if (!(error instanceof UbiError)) {
        endpoint.logger.error({ event: "rpc-failed", rpc: name, err: error }, `the ${name} handler failed`);
      }
      throw error;
    }
  }
}
