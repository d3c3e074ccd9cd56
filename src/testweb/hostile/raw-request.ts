import type { Socket } from "node:net";
import type { RawRequest } from "./hostile-host.js";

/** Longest request head a raw host reads before giving up on the client. */
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_END = Buffer.from("\r\n\r\n");

/**
 * Reads one request head off `socket` and calls `onRequest` with its method and target; a client that
 * sends more than 16 KiB of head, or no request line, is disconnected.
 */
export function readRawRequest(socket: Socket, onRequest: (request: RawRequest) => void): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf(HEAD_END);
    if (end === -1) {
      if (head.length > MAX_HEAD_BYTES) socket.destroy();
      return;
    }
    socket.off("data", onData);
    const [method, path] = head.subarray(0, end).toString("latin1").split("\r\n")[0]?.split(" ") ?? [];
    if (method === undefined || path === undefined || !path.startsWith("/")) {
      socket.destroy();
      return;
    }
    onRequest({ method, path });
  };
  socket.on("data", onData);
}
