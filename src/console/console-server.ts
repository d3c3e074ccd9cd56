import { timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { isIPv4 } from "node:net";
import type { TLSSocket } from "node:tls";
import { clusterTotals } from "../cluster/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import { type AgentStats, certificateRole, formatHostPort, parseHostPort } from "../transport/index.js";
import type { AgentMetrics } from "./agent-metrics.js";
import { type ConsoleAsset, consoleAsset } from "./assets.js";
import { type CaptureSource, replayLinkOf, serveReplay } from "./capture-replay.js";
import type { FetchActivity } from "./fetch-activity.js";

/** What the console reads of a running agent once it is ready. */
export interface ConsoleSource {
  /** This agent's partition stats (the `ubicrawl stats --json` row). */
  stats(): AgentStats;
  /** Every member's stats gathered through this agent (just this one for an agent alone). */
  clusterStats(): Promise<AgentStats[]>;
  /**
   * Pages fetched by every member so far as this agent knows them without asking (its own alone):
   * sampled every second for the dashboard's cluster rate, so it must be cheap.
   */
  clusterPagesFetched(): number;
}

/** Options of a {@link ConsoleServer}. */
export interface ConsoleServerOptions {
  /** `HOST:PORT` to listen on (port 0 picks one). */
  readonly listen: string;
  /** A bearer token every request but the probes must carry (`Authorization: Bearer …`). */
  readonly token?: string;
  /**
   * The cluster's mutual TLS: served over HTTPS, and every request but the probes must come with an
   * operator certificate of the cluster CA.
   */
  readonly tls?: { readonly caPem: string; readonly certPem: string; readonly keyPem: string };
}

/** What a {@link ConsoleServer} serves from. */
export interface ConsoleServerDeps {
  readonly metrics: AgentMetrics;
  readonly activity: FetchActivity;
  /** Where a request that failed inside the server is reported. */
  readonly onError: (error: unknown) => void;
}

/** Why an agent is not ready (`/readyz`), or undefined when it is. */
type NotReady = "starting" | "stopping" | undefined;

/**
 * The read-only HTTP endpoint of one agent (`--http`): `/metrics` (Prometheus), `/api/stats` (the
 * `stats --json` document, `?cluster=1` for every agent), `/api/activity` (recent fetches, each with
 * its `replay` link when archived, busiest and slowest hosts, pages per second of this agent and of the
 * cluster), `/healthz` and `/readyz` (probes), `/`, a live dashboard served from the package (no
 * CDN), and the replay of recent captures in ReplayWeb.page (`capture-replay.ts`). No request changes anything. On loopback it is open; on any other
 * address it needs a bearer token or the cluster's mutual TLS with an operator certificate, and
 * refuses to start without one — the probes excepted, which tell nothing but up or ready.
 */
export class ConsoleServer {
  private server: Server | undefined;
  private source: ConsoleSource | undefined;
  private replay: CaptureSource | undefined;
  private notReady: NotReady = "starting";
  private readonly token: Buffer | undefined;

  constructor(
    private readonly options: ConsoleServerOptions,
    private readonly deps: ConsoleServerDeps,
  ) {
    checkConsoleOptions(options);
    this.token = options.token === undefined ? undefined : Buffer.from(options.token);
  }

  /** Binds the address; resolves to the bound `HOST:PORT`. */
  async start(): Promise<string> {
    const { host, port } = parseHostPort(this.options.listen, true) as { host: string; port: number };
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      this.handle(request, response).catch((error: unknown) => {
        this.deps.onError(error);
        if (!response.headersSent) send(response, 500, "text/plain", "internal error\n");
        else response.destroy();
      });
    };
    const { tls } = this.options;
    const server = tls
      ? createHttpsServer(
          { ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, requestCert: true, rejectUnauthorized: false },
          handler,
        )
      : createHttpServer(handler);
    server.keepAliveTimeout = 5000;
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
    const bound = server.address() as AddressInfo;
    return formatHostPort({ host, port: bound.port });
  }

  /** The agent is ready: serve its figures from `source`, and replay its recent captures from `replay`. */
  attach(source: ConsoleSource, replay: CaptureSource): void {
    this.source = source;
    this.replay = replay;
    this.notReady = undefined;
  }

  /** The agent stops: `/readyz` answers 503 from now on (a load balancer takes it out). */
  markStopping(): void {
    this.notReady = "stopping";
  }

  /** Closes the server (connections in progress are ended). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // Appended, not resolved: "//x" is a path here, not a protocol-relative URL to another host.
    const url = new URL(`http://console.invalid${request.url?.startsWith("/") ? request.url : "/"}`);
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.setHeader("Allow", "GET, HEAD");
      send(response, 405, "text/plain", "the console is read-only: GET only\n");
      return;
    }
    if (url.pathname === "/healthz") {
      send(response, 200, "text/plain", "ok\n");
      return;
    }
    if (url.pathname === "/readyz") {
      if (this.notReady === undefined) send(response, 200, "text/plain", "ready\n");
      else send(response, 503, "text/plain", `not ready: ${this.notReady}\n`);
      return;
    }
    // A browser cannot send a bearer header: `?token=` once (the address the agent's owner is given)
    // sets a cookie for the rest, and the token leaves the address bar at once.
    const offered = url.searchParams.get("token");
    if (offered !== null && this.token !== undefined && this.tokenMatches(offered)) {
      url.searchParams.delete("token");
      response.setHeader(
        "Set-Cookie",
        `${TOKEN_COOKIE}=${encodeURIComponent(offered)}; Path=/; HttpOnly; SameSite=Strict${this.options.tls ? "; Secure" : ""}`,
      );
      response.setHeader("Location", `${url.pathname}${url.search}`);
      send(response, 303, "text/plain", "signed in\n");
      return;
    }
    const refusal = this.refusal(request);
    if (refusal !== undefined) {
      if (refusal.status === 401) response.setHeader("WWW-Authenticate", 'Bearer realm="ubicrawl"');
      send(response, refusal.status, "text/plain", `${refusal.message}\n`);
      return;
    }
    if (url.pathname === "/metrics") {
      const { contentType, body } = await this.deps.metrics.exposition();
      send(response, 200, contentType, body);
      return;
    }
    if (url.pathname.startsWith("/api/")) {
      await this.api(url, response);
      return;
    }
    if (await serveReplay(url, request.headers.range, this.replay, response)) return;
    const asset = await consoleAsset(url.pathname);
    if (asset === undefined) {
      send(response, 404, "text/plain", "not found\n");
      return;
    }
    serveAsset(response, asset);
  }

  private async api(url: URL, response: ServerResponse): Promise<void> {
    const source = this.source;
    if (url.pathname !== "/api/stats" && url.pathname !== "/api/activity") {
      send(response, 404, "text/plain", "not found\n");
      return;
    }
    if (source === undefined) {
      send(response, 503, "text/plain", `not ready: ${this.notReady ?? "starting"}\n`);
      return;
    }
    let document: unknown;
    if (url.pathname === "/api/activity") {
      const { activity } = this.deps;
      document = {
        recent: activity.recent().map((fetch) => {
          const capture = fetch.status > 0 ? this.replay?.captures.latest(fetch.url) : undefined;
          const replay = capture === undefined ? undefined : replayLinkOf(capture);
          return replay === undefined ? fetch : { ...fetch, replay };
        }),
        busiestHosts: activity.busiestHosts(),
        slowestHosts: activity.slowestHosts(),
        pagesPerSecond: activity.history(),
        clusterPagesPerSecond: activity.clusterHistory(),
      };
    } else if (["1", "true", "yes"].includes(url.searchParams.get("cluster") ?? "")) {
      const agents = await source.clusterStats();
      document = { agents, totals: clusterTotals(agents) };
    } else {
      document = { agents: [source.stats()] };
    }
    send(response, 200, "application/json", `${JSON.stringify(document)}\n`, { "Cache-Control": "no-store" });
  }

  /** Why `request` may not read the console, or undefined when it may. */
  private refusal(request: IncomingMessage): { status: number; message: string } | undefined {
    if (this.options.tls) {
      const socket = request.socket as TLSSocket;
      if (!socket.authorized) {
        return { status: 401, message: "a client certificate of the cluster CA is required" };
      }
      if (certificateRole(socket.getPeerCertificate()) !== "operator") {
        return { status: 403, message: "an operator certificate is required (ubicrawl certs makes one)" };
      }
    }
    if (this.token) {
      const header = request.headers.authorization ?? "";
      // The scheme is case-insensitive (RFC 9110): "bearer" is "Bearer".
      const bearer = /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
      const cookie = cookieValue(request.headers.cookie, TOKEN_COOKIE);
      if (!this.tokenMatches(bearer ?? cookie ?? "")) {
        return {
          status: 401,
          message:
            "a token is required: Authorization: Bearer …, or open /?token=… once in a browser (it then keeps a cookie)",
        };
      }
    }
    return undefined;
  }

  /** True when `given` is the token (compared in constant time). */
  private tokenMatches(given: string): boolean {
    if (this.token === undefined) return false;
    const bytes = Buffer.from(given);
    return bytes.length === this.token.length && timingSafeEqual(bytes, this.token);
  }
}

/** The cookie a browser keeps the console's token in, after opening `/?token=…` once. */
const TOKEN_COOKIE = "ubicrawl_token";

/** The value of cookie `name` in a `Cookie` header, decoded, or undefined. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq >= 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * Checks a console's options without binding anything: a `HOST:PORT`, a non-empty token, and on a
 * non-loopback address a token or TLS. Throws `InvalidArgument` saying what to give.
 */
export function checkConsoleOptions(options: ConsoleServerOptions): void {
  const address = parseHostPort(options.listen, true);
  if (address === undefined) {
    throw new UbiError(ErrorCode.InvalidArgument, `--http must be HOST:PORT, got "${options.listen}"`);
  }
  if (options.token !== undefined && options.token.length === 0) {
    throw new UbiError(ErrorCode.InvalidArgument, "the console's bearer token is empty");
  }
  if (!isLoopbackHost(address.host) && options.token === undefined && options.tls === undefined) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `--http ${options.listen} is not a loopback address: give --http-token-file, or the cluster's mutual TLS (--tls-*) so that only operator certificates get in`,
    );
  }
}

/** Reads a bearer token file: its first line, trimmed; an empty one is refused. */
export async function readTokenFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `cannot read --http-token-file ${path}: ${(error as Error).message}`,
    );
  }
  const token = (text.split(/\r?\n/)[0] ?? "").trim();
  if (token.length < 16) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `--http-token-file ${path} must hold a token of at least 16 characters on its first line`,
    );
  }
  return token;
}

/** True for a loopback host: `localhost`, `::1` or 127.0.0.0/8. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIPv4(host) && host.startsWith("127."));
}

function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff",
    ...headers,
  });
  response.end(response.req.method === "HEAD" ? undefined : body);
}

function serveAsset(response: ServerResponse, asset: ConsoleAsset): void {
  send(response, 200, asset.contentType, asset.body, {
    "Cache-Control": "no-cache",
    "Content-Security-Policy":
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  });
}
