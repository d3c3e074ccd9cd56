import type { Socket } from "node:net";
import type { HostileContext, HttpHostileHost, RawHostileHost } from "./hostile-host.js";

/** Calls `write` every `intervalMs` until `emitter` closes: the timer never outlives the connection. */
function drip(intervalMs: number, write: () => void, emitter: NodeJS.EventEmitter): void {
  const timer = setInterval(write, intervalMs);
  emitter.once("close", () => clearInterval(timer));
}

/** Slowloris: a status line, then one header byte per interval, never ending the headers. */
export const slowHeadersHost: RawHostileHost = {
  kind: "raw",
  label: "slow-headers",
  description: "status line, then one header byte per dripIntervalMs forever: must end in a headers timeout",
  entryPaths: ["/"],
  handle(socket: Socket, _request, context: HostileContext) {
    socket.write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Slow: ");
    drip(context.options.dripIntervalMs, () => socket.write("a"), socket);
  },
};

/** A valid response whose body comes one byte per interval, forever. */
export const dripBodyHost: HttpHostileHost = {
  kind: "http",
  label: "drip-body",
  description: "headers at once, then one body byte per dripIntervalMs forever: must end in a body timeout",
  entryPaths: ["/"],
  handle(_req, res, context) {
    res.writeHead(200, { "content-type": "text/html" });
    res.write("<!doctype html><p>");
    drip(context.options.dripIntervalMs, () => res.write("x"), res);
  },
};
