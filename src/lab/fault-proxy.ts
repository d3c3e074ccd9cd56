import { randomBytes } from "node:crypto";
import { createServer, type Server, Socket } from "node:net";

/**
 * A TCP proxy on loopback for fault injection between agents. It forwards to a fixed target (an agent's
 * bound address, settable after the proxy started: connections wait for it) or, in `connect` mode, to
 * whatever an HTTP `CONNECT host:port` asks (the egress proxy of one agent, given to it as
 * `grpc_proxy`). Its mode is switched at runtime and applies to new and existing connections alike.
 */

/** What the proxy does to traffic. */
export type FaultMode =
  /** Forward both ways untouched. */
  | { readonly kind: "pass" }
  /** A partition: new connections are reset at once, existing ones destroyed. */
  | { readonly kind: "cut" }
  /** Packets dropped: connections are accepted (and kept), nothing is forwarded either way. */
  | { readonly kind: "blackhole" }
  /** A slow link: every chunk, either way, is delivered `delayMs` after it arrived (order kept). */
  | { readonly kind: "slow"; readonly delayMs: number }
  /** A garbage peer: every chunk from the client is answered with random bytes, nothing is forwarded. */
  | { readonly kind: "garbage" };

/** Shorthands for the modes. */
export const PASS: FaultMode = { kind: "pass" };
/** See {@link FaultMode}. */
export const CUT: FaultMode = { kind: "cut" };
/** See {@link FaultMode}. */
export const BLACKHOLE: FaultMode = { kind: "blackhole" };
/** See {@link FaultMode}. */
export const GARBAGE: FaultMode = { kind: "garbage" };
/** See {@link FaultMode}. */
export function slow(delayMs: number): FaultMode {
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be >= 0, got ${delayMs}`);
  return { kind: "slow", delayMs };
}

/** How to start a {@link FaultProxy}. */
export interface FaultProxyOptions {
  /** `host:port` to forward to; may be set later with {@link FaultProxy.setTarget}. Ignored with `connect`. */
  readonly target?: string;
  /** Act as an HTTP CONNECT proxy (the target comes from each connection's CONNECT line). @default false */
  readonly connect?: boolean;
  /** @default pass */
  readonly mode?: FaultMode;
}

/** What a proxy has seen, for assertions. */
export interface FaultProxyCounters {
  /** Connections accepted (including the ones reset by `cut`). */
  accepted: number;
  /** Connections reset by `cut`. */
  cut: number;
  /** Chunks dropped by `blackhole`. */
  dropped: number;
  /** Chunks answered with random bytes by `garbage`. */
  garbled: number;
  /** Chunks delayed by `slow`. */
  delayed: number;
  /** Bytes forwarded either way. */
  forwardedBytes: number;
}

/** The proxy; {@link FaultProxy.start} binds it on `127.0.0.1:0`. */
export class FaultProxy {
  /** Where clients connect: `127.0.0.1:<port>`. */
  readonly address: string;
  /** Counters since start. */
  readonly counters: FaultProxyCounters = {
    accepted: 0,
    cut: 0,
    dropped: 0,
    garbled: 0,
    delayed: 0,
    forwardedBytes: 0,
  };
  #mode: FaultMode;
  #target: string | undefined;
  readonly #waitingForTarget: (() => void)[] = [];
  readonly #links = new Set<Link>();
  #stopped: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    readonly options: FaultProxyOptions,
  ) {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("proxy is not bound to TCP");
    this.address = `127.0.0.1:${address.port}`;
    this.#mode = options.mode ?? PASS;
    this.#target = options.target;
    server.on("connection", (socket) => this.accept(socket));
  }

  /** Binds a proxy on 127.0.0.1:0. */
  static async start(options: FaultProxyOptions = {}): Promise<FaultProxy> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return new FaultProxy(server, options);
  }

  /** The current mode. */
  get mode(): FaultMode {
    return this.#mode;
  }

  /** Connections open now. */
  get openConnections(): number {
    return this.#links.size;
  }

  /** Sets the target (releasing connections waiting for it). */
  setTarget(target: string): void {
    this.#target = target;
    for (const release of this.#waitingForTarget.splice(0)) release();
  }

  /** Switches mode; `cut` also destroys every open connection. */
  setMode(mode: FaultMode): void {
    this.#mode = mode;
    if (mode.kind === "cut") {
      for (const link of this.#links) {
        this.counters.cut++;
        link.destroy();
      }
    }
  }

  /** Closes the listener and every connection. Idempotent. */
  stop(): Promise<void> {
    this.#stopped ??= new Promise<void>((resolve) => {
      for (const link of this.#links) link.destroy();
      this.server.close(() => resolve());
    });
    return this.#stopped;
  }

  private accept(client: Socket): void {
    this.counters.accepted++;
    if (this.#mode.kind === "cut") {
      this.counters.cut++;
      client.resetAndDestroy();
      return;
    }
    const link = new Link(this, client);
    this.#links.add(link);
    client.once("close", () => this.#links.delete(link));
    if (this.options.connect) {
      link.readConnectLine();
    } else if (this.#target !== undefined) {
      link.open(this.#target);
    } else {
      this.#waitingForTarget.push(() => link.open(this.#target as string));
    }
    client.resume();
  }

  /** Used by links: the mode now (a link asks on every chunk, so switches apply at once). */
  currentMode(): FaultMode {
    return this.#mode;
  }
}

/** One client connection and its upstream. */
class Link {
  private upstream: Socket | undefined;
  /** Bytes from the client before the upstream is connected (or before the CONNECT line ends). */
  private early: Buffer[] = [];
  private connectHead: Buffer | undefined;
  /** Delayed chunks of each direction, chained so `slow` (and a switch back to pass) keeps order. */
  private readonly chain = { up: Promise.resolve(), down: Promise.resolve() };
  private readonly delayedCount = { up: 0, down: 0 };
  private closed = false;

  constructor(
    private readonly proxy: FaultProxy,
    private readonly client: Socket,
  ) {
    client.on("error", () => this.destroy());
    client.on("close", () => this.destroy());
    client.on("data", (chunk: Buffer) => this.fromClient(chunk));
  }

  /** Waits for `CONNECT host:port HTTP/1.1 … \r\n\r\n`, then opens that target and answers 200. */
  readConnectLine(): void {
    this.connectHead = Buffer.alloc(0);
  }

  /** Connects to `target`; bytes the client sent meanwhile follow. */
  open(target: string, onOpen?: () => void): void {
    if (this.closed) return;
    const colon = target.lastIndexOf(":");
    const upstream = new Socket();
    this.upstream = upstream;
    upstream.on("error", () => this.destroy());
    upstream.on("close", () => this.destroy());
    upstream.on("data", (chunk: Buffer) => this.fromUpstream(chunk));
    upstream.connect(Number(target.slice(colon + 1)), target.slice(0, colon).replace(/^\[|\]$/g, ""), () => {
      onOpen?.();
      for (const chunk of this.early.splice(0)) this.forward(chunk, "up");
    });
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
    this.upstream?.destroy();
  }

  private fromClient(chunk: Buffer): void {
    if (this.connectHead !== undefined) {
      this.connectHead = Buffer.concat([this.connectHead, chunk]);
      const end = this.connectHead.indexOf("\r\n\r\n");
      if (end < 0) return;
      const line = this.connectHead.subarray(0, end).toString("latin1").split("\r\n")[0] ?? "";
      const rest = this.connectHead.subarray(end + 4);
      this.connectHead = undefined;
      const match = /^CONNECT (\S+) HTTP\/1\.[01]$/.exec(line);
      if (!match?.[1]) {
        this.client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
        return;
      }
      if (rest.length > 0) this.early.push(rest);
      const mode = this.proxy.currentMode();
      // A blackholed or garbage egress does not even answer the CONNECT properly.
      if (mode.kind === "blackhole") {
        this.proxy.counters.dropped++;
        return;
      }
      if (mode.kind === "garbage") {
        this.garble();
        return;
      }
      this.open(match[1], () => this.client.write("HTTP/1.1 200 Connection established\r\n\r\n"));
      return;
    }
    if (!this.upstream || this.upstream.connecting) {
      this.early.push(chunk);
      return;
    }
    this.forward(chunk, "up");
  }

  private fromUpstream(chunk: Buffer): void {
    this.forward(chunk, "down");
  }

  private forward(chunk: Buffer, direction: "up" | "down"): void {
    const mode = this.proxy.currentMode();
    const to = direction === "up" ? this.upstream : this.client;
    if (this.closed || !to) return;
    switch (mode.kind) {
      case "cut":
        this.destroy();
        return;
      case "blackhole":
        this.proxy.counters.dropped++;
        return;
      case "garbage":
        if (direction === "up") this.garble();
        else this.proxy.counters.dropped++;
        return;
      case "slow":
        this.proxy.counters.delayed++;
        this.later(to, chunk, direction, mode.delayMs);
        return;
      case "pass":
        // A chunk still delayed by an earlier `slow` must go out first.
        if (this.delayedCount[direction] > 0) this.later(to, chunk, direction, 0);
        else this.write(to, chunk);
    }
  }

  private later(to: Socket, chunk: Buffer, direction: "up" | "down", delayMs: number): void {
    const due = performance.now() + delayMs;
    this.delayedCount[direction]++;
    this.chain[direction] = this.chain[direction].then(async () => {
      const waitMs = due - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      this.delayedCount[direction]--;
      this.write(to, chunk);
    });
  }

  private write(to: Socket, chunk: Buffer): void {
    if (this.closed) return;
    this.proxy.counters.forwardedBytes += chunk.length;
    to.write(chunk);
  }

  private garble(): void {
    this.proxy.counters.garbled++;
    this.client.write(randomBytes(64 + Math.floor(Math.random() * 960)));
  }
}
