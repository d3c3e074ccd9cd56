import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Clock, TimerHandle } from "../../src/clock.js";

/** A real HTTP server on a loopback address that counts connections and keeps the requests it saw. */
export interface LoopbackServer {
  server: Server;
  host: string;
  port: number;
  /** Connections accepted so far. */
  connections: number;
  /** Requests received so far. */
  requests: IncomingMessage[];
  close(): Promise<void>;
}

/** Starts `handler` on `host:0` (default 127.0.0.1). */
export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = "127.0.0.1",
): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const state: LoopbackServer = {
    server: createServer((req, res) => {
      state.requests.push(req);
      handler(req, res);
    }),
    host,
    port: 0,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        state.server.close(() => resolve());
      }),
  };
  state.server.on("connection", (socket: Socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => state.server.listen(0, host, resolve));
  state.port = (state.server.address() as AddressInfo).port;
  return state;
}

/** A clock whose time moves only when told; timers fire on {@link ManualClock.advance}. */
export class ManualClock implements Clock {
  #now: number;
  #timers = new Map<object, { at: number; callback: () => void }>();

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const handle = {};
    this.#timers.set(handle, { at: this.#now + delayMs, callback });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle);
  }

  /** Moves time forward and runs the timers that fall due, in order. */
  advance(ms: number): void {
    this.#now += ms;
    const due = [...this.#timers].filter(([, t]) => t.at <= this.#now).sort((a, b) => a[1].at - b[1].at);
    for (const [handle, timer] of due) {
      this.#timers.delete(handle);
      timer.callback();
    }
  }
}
