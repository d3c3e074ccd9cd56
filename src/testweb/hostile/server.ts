import { writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type Server, type Socket } from "node:net";
import { ErrorCode, UbiError } from "../../errors.js";
import { createHostileHosts } from "./catalogue.js";
import { CONTROL_LABEL } from "./control.js";
import { type HostileContext, type HostileHost, hostileHostName } from "./hostile-host.js";
import {
  type HostileWebOptions,
  type ResolvedHostileWebOptions,
  resolveHostileWebOptions,
} from "./options.js";
import { readRawRequest } from "./raw-request.js";
import { HostileTraffic } from "./traffic.js";

/** One host of a running hostile web. */
export interface HostileHostInfo {
  /** Short name, e.g. `gzip-bomb`. */
  readonly label: string;
  /** Full host name, e.g. `gzip-bomb.hostile.test`. */
  readonly name: string;
  /** Its own loopback address (127.2.0.x). */
  readonly ip: string;
  /** `raw` hosts write bytes to the socket themselves, to break HTTP. */
  readonly kind: "http" | "raw";
  /** What it does and what a robust crawler makes of it. */
  readonly description: string;
  /** Absolute URLs the seeds and the control home link to. */
  readonly entryUrls: readonly string[];
}

/** A hostile web serving on loopback: one listener per host, each on its own 127.2.0.x, one port. */
export interface RunningHostileWeb {
  readonly options: ResolvedHostileWebOptions;
  /** The port every host listens on. */
  readonly port: number;
  /** Every host, control host first. */
  readonly hosts: readonly HostileHostInfo[];
  /** The control host's home page, then every entry URL of every hostile host. */
  readonly seeds: readonly string[];
  /** What was served, and any overlapping requests to one host. */
  readonly traffic: HostileTraffic;
  /** The host labelled `label` (throws for an unknown label). */
  host(label: string): HostileHostInfo;
  /** The absolute URL of `path` on the host labelled `label`. */
  url(label: string, path: string): string;
  /** The hosts file (`/etc/hosts` format) mapping every host name to its address. */
  hostsFileText(): string;
  /** Writes {@link hostsFileText} to `path`. */
  writeHostsFile(path: string): Promise<void>;
  /** Closes every listener and connection (dripping timers stop with them); idempotent. */
  stop(): Promise<void>;
}

/** First address of the hostile web: apart from the test web's 127.1.x.y. */
const ADDRESS_PREFIX = "127.2.0.";
/** Attempts at finding a port free on every address when the port is picked automatically. */
const LISTEN_ATTEMPTS = 20;

function listen(server: Server, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: address, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Closes `server`, destroys its open connections and resolves once every one of them has closed. */
function close(server: Server, sockets: Set<Socket>): Promise<void> {
  const closed = [...sockets].map(
    (socket) =>
      new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once("close", () => resolve()))),
  );
  for (const socket of sockets) socket.destroy();
  const stopped = new Promise<void>((resolve) =>
    server.listening ? server.close(() => resolve()) : resolve(),
  );
  return Promise.all([stopped, ...closed]).then(() => undefined);
}

/** A listener for `host`, counting its traffic; tracks its sockets so stop() can end them. */
function createListener(
  host: HostileHost,
  name: string,
  context: HostileContext,
  traffic: HostileTraffic,
): { server: Server; sockets: Set<Socket> } {
  const sockets = new Set<Socket>();
  const urlOf = (path: string) => `http://${name}:${context.port}${path}`;
  let server: Server;
  if (host.kind === "http") {
    server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? "/";
      const served = traffic.begin(name, urlOf(path));
      res.once("close", () => traffic.end(served));
      if (path === "/robots.txt" && host.ownRobots !== true) {
        res.writeHead(404, { "content-type": "text/plain", "content-length": 10 }).end("not found\n");
        return;
      }
      host.handle(req, res, context);
    });
  } else {
    server = createNetServer((socket) => {
      readRawRequest(socket, (request) => {
        const served = traffic.begin(name, urlOf(request.path));
        socket.once("close", () => traffic.end(served));
        if (request.path === "/robots.txt") {
          socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
          return;
        }
        host.handle(socket, request, context);
      });
    });
  }
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    // Clients reset and abort on purpose here; a socket error is not the server's failure.
    socket.on("error", () => undefined);
    socket.once("close", () => sockets.delete(socket));
  });
  return { server, sockets };
}

/**
 * Serves the hostile web on loopback: a control host and one host per hostile behaviour (slow, endless,
 * huge, bombs, lying or broken HTTP, redirect loops, odd charsets, pathological HTML, infinite URL
 * spaces, hostile robots.txt, wrong content types), each on its own 127.2.0.x address.
 */
export async function startHostileWeb(options: HostileWebOptions = {}): Promise<RunningHostileWeb> {
  const resolved = resolveHostileWebOptions(options);
  const hosts = createHostileHosts();
  const traffic = new HostileTraffic();
  let port = 0;
  const url = (label: string, path: string) => `http://${hostileHostName(label)}:${port}${path}`;
  const infos = (): HostileHostInfo[] =>
    hosts.map((host, i) => ({
      label: host.label,
      name: hostileHostName(host.label),
      ip: `${ADDRESS_PREFIX}${i + 1}`,
      kind: host.kind,
      description: host.description,
      entryUrls: host.entryPaths.map((path) => url(host.label, path)),
    }));
  const context: HostileContext = {
    options: resolved,
    get port() {
      return port;
    },
    url,
    hostileEntryUrls: () =>
      hosts
        .filter((host) => host.label !== CONTROL_LABEL)
        .flatMap((host) => host.entryPaths.map((p) => url(host.label, p))),
  };

  let lastError: unknown;
  let listeners: { server: Server; sockets: Set<Socket> }[] = [];
  for (let attempt = 0; attempt < LISTEN_ATTEMPTS; attempt++) {
    listeners = hosts.map((host) => createListener(host, hostileHostName(host.label), context, traffic));
    try {
      const first = listeners[0]?.server as Server;
      await listen(first, resolved.port, `${ADDRESS_PREFIX}1`);
      const address = first.address();
      port = typeof address === "object" && address !== null ? address.port : resolved.port;
      await Promise.all(
        listeners.slice(1).map(({ server }, i) => listen(server, port, `${ADDRESS_PREFIX}${i + 2}`)),
      );
      lastError = undefined;
      break;
    } catch (error) {
      lastError = error;
      await Promise.all(listeners.map(({ server, sockets }) => close(server, sockets)));
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || resolved.port !== 0) break;
    }
  }
  if (lastError !== undefined) {
    throw new UbiError(ErrorCode.ListenFailed, "hostile web: could not listen on every host address", {
      cause: lastError,
    });
  }

  const hostInfos = infos();
  const byLabel = new Map(hostInfos.map((info) => [info.label, info]));
  const hostsText = `${["# ubicrawl hostile web", ...hostInfos.map((info) => `${info.ip} ${info.name}`)].join("\n")}\n`;
  let stopped: Promise<void> | undefined;
  return {
    options: resolved,
    port,
    hosts: hostInfos,
    seeds: [url(CONTROL_LABEL, "/"), ...context.hostileEntryUrls()],
    traffic,
    host(label) {
      const info = byLabel.get(label);
      if (info === undefined)
        throw new UbiError(ErrorCode.InvalidArgument, `hostile web: no host "${label}"`);
      return info;
    },
    url,
    hostsFileText: () => hostsText,
    writeHostsFile: (path) => writeFile(path, hostsText),
    stop() {
      stopped ??= (async () => {
        await Promise.all(listeners.map(({ server, sockets }) => close(server, sockets)));
        traffic.close();
      })();
      return stopped;
    },
  };
}
