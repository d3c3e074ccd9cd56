import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createSecureServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import { createServer as createTlsServer } from "node:https";
import type { Server as NetServer } from "node:net";
import { ErrorCode, invalidArgument, UbiError } from "../errors.js";
import { notModified, pageVersion } from "./changes.js";
import { hostsFileText, listenAddresses, seedUrls } from "./hosts-file.js";
import { buildModel, hostOrigin, type WebModel } from "./model.js";
import type { TestWebOptions } from "./options.js";
import { ServedRecorder } from "./recorder.js";
import { respond } from "./responses.js";
import { hostRate, sendThrottled } from "./throttle.js";
import { canonicalTarget } from "./url-space.js";

/** A test web serving on loopback: one listener per distinct host address, all on one port. */
export interface RunningTestWeb {
  readonly model: WebModel;
  /** The port every host listens on. */
  readonly port: number;
  /** Seed URLs (home pages) from which the whole web is reachable. */
  readonly seeds: string[];
  readonly recorder: ServedRecorder;
  /** When the web started, ms since the epoch: changing pages count their versions from then (see `changeTimes`). */
  readonly startedAtMs: number;
  /** The hosts file (`/etc/hosts` format) a crawler must use to resolve the web's names. */
  hostsFileText(): string;
  /** Writes {@link hostsFileText} to `path`. */
  writeHostsFile(path: string): Promise<void>;
  /**
   * Answers host `name` at address `ip` (one of the web's) as well as at its own, as a site moving to
   * another server is answered by both while resolvers still give the old address: a crawler that
   * moves with its resolver's answer is served at either. Elsewhere a host is answered 421.
   */
  serveHostAt(name: string, ip: string): void;
  /** Holds every response until the returned function is called (for deterministic concurrency tests). */
  holdResponses(): () => void;
  /** Closes every listener and connection and the served log; idempotent. */
  stop(): Promise<void>;
}

/** The certificate and key an `https` test web serves (one certificate naming every host). */
export interface TestWebTls {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A request and its response, over HTTP/1.1 or HTTP/2 (node:http2's compatibility API). */
type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** A listening server, and how to close its connections at once. */
interface Server {
  readonly net: NetServer;
  closeConnections(): void;
}

/** What serves the requests: plain HTTP, TLS, or TLS offering HTTP/2 as well. */
type ServerFactory = (handler: Handler) => Server;

/** An HTTP/1.1 server (plain or TLS). */
function http1Server(server: NetServer & { closeAllConnections(): void }): Server {
  return { net: server, closeConnections: () => server.closeAllConnections() };
}

/** A TLS server that offers HTTP/2 and HTTP/1.1 (ALPN). */
function http2Server(tls: TestWebTls, handler: Handler): Server {
  const sessions = new Set<Http2Session>();
  const server = createHttp2Server({ cert: tls.certPem, key: tls.keyPem, allowHTTP1: true }, handler);
  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return {
    net: server,
    closeConnections: () => {
      for (const session of sessions) session.destroy();
    },
  };
}

/** Attempts at finding a port free on every address when the port is picked automatically. */
const LISTEN_ATTEMPTS = 20;

function listen({ net: server }: Server, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: address, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function closeAll(servers: readonly Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          if (!server.net.listening) {
            resolve();
            return;
          }
          server.net.close(() => resolve());
          server.closeConnections();
        }),
    ),
  );
}

/** Binds `handler` on every address on one common port (the first bind picks it, unless given). */
async function listenEverywhere(
  addresses: readonly string[],
  requestedPort: number,
  handler: Handler,
  serve: ServerFactory,
): Promise<{ servers: Server[]; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < LISTEN_ATTEMPTS; attempt++) {
    const servers = addresses.map(() => serve(handler));
    try {
      await listen(servers[0] as Server, requestedPort, addresses[0] as string);
      const address = (servers[0] as Server).net.address();
      const port = typeof address === "object" && address !== null ? address.port : requestedPort;
      await Promise.all(
        servers.slice(1).map((server, i) => listen(server, port, addresses[i + 1] as string)),
      );
      return { servers, port };
    } catch (error) {
      lastError = error;
      await closeAll(servers);
      const inUse = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
      if (!inUse || requestedPort !== 0) break;
    }
  }
  throw new UbiError(ErrorCode.ListenFailed, "testweb: could not listen on every host address", {
    cause: lastError,
  });
}

/** Makes the certificate an `https` web serves, once its hosts are known (see certificates.ts). */
export type TestWebTlsProvider = (model: WebModel) => Promise<TestWebTls>;

/**
 * Builds the web for `options` and serves it on loopback (127.1.x.y, never 127.0.0.1 or 0.0.0.0); an
 * `https` web serves the certificate `tls` makes for it.
 */
export async function startTestWeb(
  options: TestWebOptions = {},
  tls?: TestWebTlsProvider,
): Promise<RunningTestWeb> {
  const model = buildModel(options);
  let serve: ServerFactory = (handler) => http1Server(createServer(handler));
  if (model.options.scheme === "https") {
    if (tls === undefined) invalidArgument("testweb: an https web needs a certificate");
    const certificate = await tls(model);
    serve = model.options.http2
      ? (handler) => http2Server(certificate, handler)
      : (handler) =>
          http1Server(createTlsServer({ cert: certificate.certPem, key: certificate.keyPem }, handler));
  }
  const { responseDelayMs, servedLogPath, changes } = model.options;
  const startedAtMs = Date.now();
  const recorder = new ServedRecorder({ servedLogPath });
  let port = 0;
  let holds = 0;
  let held: Array<() => void> = [];
  /** Addresses each host is answered at besides its own (see `serveHostAt`). */
  const alsoAt = new Map<string, Set<string>>();
  /** Start times of the last second's requests at each rate-limited address. */
  const recentStarts = new Map<string, number[]>();
  /** True when a request starting now at `ip` is beyond its group's rate (see `ipGroups`). */
  const overRate = (ip: string): boolean => {
    const limit = model.rateLimits.get(ip);
    if (limit === undefined) return false;
    const now = performance.now();
    const starts = (recentStarts.get(ip) ?? []).filter((atMs) => now - atMs < 1000);
    recentStarts.set(ip, starts);
    if (starts.length >= limit) return true;
    starts.push(now);
    return false;
  };

  const handler: Handler = (req, res) => {
    const local = (req.socket.localAddress ?? "").replace(/^::ffff:/, "");
    const authority = req.headers.host ?? req.headers[":authority"];
    const name = (typeof authority === "string" ? authority : local).toLowerCase().replace(/:\d+$/, "");
    const rawTarget = req.url ?? "/";
    const url = `${hostOrigin(model, name, port)}${rawTarget}`;
    const served = recorder.begin(name, local, url, req.httpVersion);
    res.once("close", () => recorder.end(served, res.statusCode));
    if (overRate(local)) {
      recorder.refused(served);
      res.writeHead(429, { "retry-after": "1", "content-type": "text/plain" }).end("Too Many Requests\n");
      return;
    }
    const answer = () => {
      if ("stream" in res ? res.stream.destroyed : res.destroyed) return;
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("Method Not Allowed\n");
        return;
      }
      const hostIndex = model.hostIndexByName.get(name) ?? -1;
      if (hostIndex >= 0 && model.hosts[hostIndex]?.ip !== local && alsoAt.get(name)?.has(local) !== true) {
        // The name is served on another address: the client resolved it wrongly.
        res.writeHead(421, { "content-type": "text/plain" }).end("Misdirected Request\n");
        return;
      }
      let target: string;
      try {
        target = canonicalTarget(rawTarget);
      } catch {
        res.writeHead(400, { "content-type": "text/plain" }).end("Bad Request\n");
        return;
      }
      const response = respond(model, port, hostIndex, target);
      let body: Uint8Array = typeof response.body === "string" ? Buffer.from(response.body) : response.body;
      const ifNoneMatch = req.headers["if-none-match"];
      const ifModifiedSince = req.headers["if-modified-since"];
      if (ifNoneMatch !== undefined || ifModifiedSince !== undefined) recorder.noteConditional(url);
      let status = response.status;
      const validators: Record<string, string> = {};
      if (changes !== undefined && status === 200) {
        const page = pageVersion(
          changes,
          startedAtMs,
          target,
          { body, contentType: response.contentType },
          Date.now(),
        );
        validators.etag = page.etag;
        validators["last-modified"] = page.lastModified;
        body = page.body;
        if (notModified(page, ifNoneMatch, ifModifiedSince)) status = 304;
      }
      // A 304 has no body, nor the headers that describe one.
      const headers: Record<string, string | number> =
        status === 304 ? {} : { "content-type": response.contentType, "content-length": body.byteLength };
      if (status === 304) body = new Uint8Array(0);
      if (response.location !== undefined) headers.location = response.location;
      Object.assign(headers, validators);
      res.writeHead(status, headers);
      const host = model.hosts[hostIndex];
      const rate = host === undefined ? undefined : hostRate(model, host);
      if (req.method === "HEAD") res.end();
      else if (rate === undefined || body.byteLength === 0) res.end(body);
      else
        sendThrottled(
          {
            // Both response kinds (HTTP/1.1 and the HTTP/2 compatibility API) take a chunk alone.
            write: (chunk) => (res as { write(chunk: Uint8Array): boolean }).write(chunk),
            end: () => res.end(),
            get destroyed() {
              return "stream" in res ? res.stream.destroyed : res.destroyed;
            },
          },
          body,
          rate,
        );
    };
    if (holds > 0) held.push(answer);
    else if (responseDelayMs > 0) setTimeout(answer, responseDelayMs);
    else answer();
  };

  const listening = await listenEverywhere(listenAddresses(model), model.options.port, handler, serve);
  port = listening.port;
  let stopped: Promise<void> | undefined;

  return {
    model,
    startedAtMs,
    port,
    seeds: seedUrls(model, port),
    recorder,
    hostsFileText: () => hostsFileText(model),
    writeHostsFile: (path) => writeFile(path, hostsFileText(model)),
    serveHostAt(name, ip) {
      const key = name.toLowerCase();
      if (!model.hostIndexByName.has(key)) invalidArgument(`testweb: no host ${name}`);
      if (!listenAddresses(model).includes(ip)) invalidArgument(`testweb: the web does not listen on ${ip}`);
      alsoAt.set(key, new Set([...(alsoAt.get(key) ?? []), ip]));
    },
    holdResponses() {
      holds++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds--;
        if (holds > 0) return;
        const queued = held;
        held = [];
        for (const answer of queued) answer();
      };
    },
    stop() {
      stopped ??= (async () => {
        for (const answer of held) answer();
        held = [];
        await closeAll(listening.servers);
        recorder.close();
      })();
      return stopped;
    },
  };
}
