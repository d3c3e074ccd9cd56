import type { Socket } from "node:net";
import { htmlPage } from "./content.js";
import type { RawHostileHost } from "./hostile-host.js";

const CRLF = "\r\n";

/** Writes a response head (status line and headers) exactly as given. */
function head(status: string, headers: readonly string[]): string {
  return `${status}${CRLF}${headers.map((line) => `${line}${CRLF}`).join("")}${CRLF}`;
}

/** Content-Length says 64 bytes, the body is longer; then the connection is closed. */
export const shortLengthHost: RawHostileHost = {
  kind: "raw",
  label: "short-length",
  description: "Content-Length shorter than the body: the client reads the declared 64 bytes and moves on",
  entryPaths: ["/"],
  handle(socket: Socket) {
    const body = htmlPage("short length", ["/never-seen"]).padEnd(400, " ");
    socket.end(head("HTTP/1.1 200 OK", ["Content-Type: text/html", "Content-Length: 64"]) + body);
  },
};

/** Content-Length says 100000 bytes, 200 arrive, then the server closes. */
export const longLengthHost: RawHostileHost = {
  kind: "raw",
  label: "long-length",
  description: "Content-Length longer than the body, then close: a protocol error (premature end)",
  entryPaths: ["/"],
  handle(socket: Socket) {
    const body = "<!doctype html><p>".padEnd(200, "y");
    socket.end(head("HTTP/1.1 200 OK", ["Content-Type: text/html", "Content-Length: 100000"]) + body);
  },
};

/** Headers and part of the body, then a TCP reset. */
export const resetMidBodyHost: RawHostileHost = {
  kind: "raw",
  label: "reset-mid-body",
  description: "sends 4 KB of a 1 MB body, then resets the connection (RST): a protocol error",
  entryPaths: ["/"],
  handle(socket: Socket) {
    const start = head("HTTP/1.1 200 OK", ["Content-Type: text/html", "Content-Length: 1048576"]);
    socket.write(start + "<p>".padEnd(4096, "z"), () => {
      // Give the client time to read the head, so the reset lands mid-body, not before it.
      const timer = setTimeout(() => socket.resetAndDestroy(), 200);
      socket.once("close", () => clearTimeout(timer));
    });
  },
};

/** HTTP/1.0 responses delimited by the end of the connection only. */
export const http10Host: RawHostileHost = {
  kind: "raw",
  label: "http10",
  description: "HTTP/1.0, no Content-Length, body ends at close: read to the end, links followed",
  entryPaths: ["/"],
  handle(socket: Socket, request) {
    const page =
      request.path === "/"
        ? htmlPage("HTTP/1.0 home", ["/second"])
        : request.path === "/second"
          ? htmlPage("HTTP/1.0 second page", [])
          : undefined;
    if (page === undefined) {
      socket.end(head("HTTP/1.0 404 Not Found", ["Content-Type: text/plain"]));
      return;
    }
    socket.end(head("HTTP/1.0 200 OK", ["Content-Type: text/html"]) + page);
  },
};

/** The raw answers of the malformed host, by path. */
const MALFORMED: ReadonlyMap<string, string> = new Map([
  ["/bad-status", `${head("HTTP/1.1 2x0 OK", ["Content-Length: 2"])}ok`],
  ["/garbage", "SSH-2.0-OpenSSH_9.6\r\nProtocol mismatch.\r\n"],
  ["/bad-header-name", `${head("HTTP/1.1 200 OK", ["Bad Header: yes", "Content-Length: 2"])}ok`],
  ["/nul-header", `${head("HTTP/1.1 200 OK", ["X-Nul: a\0b", "Content-Length: 2"])}ok`],
  ["/huge-header", `${head("HTTP/1.1 200 OK", [`X-Huge: ${"h".repeat(100_000)}`, "Content-Length: 2"])}ok`],
  ["/bad-chunk", `${head("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"])}zz\r\nnot a chunk\r\n0\r\n\r\n`],
  [
    "/double-length",
    `${head("HTTP/1.1 200 OK", ["Content-Length: 2", "Content-Length: 5", "Content-Type: text/html"])}hello`,
  ],
]);

/** Malformed status lines and headers, one kind per path. */
export const malformedHost: RawHostileHost = {
  kind: "raw",
  label: "malformed",
  description:
    "malformed status line, garbage, bad/NUL/huge headers, bad chunk, conflicting lengths: protocol errors",
  entryPaths: [...MALFORMED.keys()],
  handle(socket: Socket, request) {
    const answer = MALFORMED.get(request.path);
    socket.end(answer ?? head("HTTP/1.1 404 Not Found", ["Content-Length: 0"]));
  },
};
