import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { ManualClock as SharedManualClock } from "../support/manual-clock.js";

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

/** The shared manual clock, starting at a realistic epoch time (robots.txt expiry and DNS TTL tests). */
export class ManualClock extends SharedManualClock {
  constructor(startMs = 1_700_000_000_000) {
    super(startMs);
  }
}
