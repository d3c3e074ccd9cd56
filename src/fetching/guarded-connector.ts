import type { Socket } from "node:net";
import type { SecureContext } from "node:tls";
import { buildConnector } from "undici";
import type { NetPolicy } from "./net-policy.js";
import { ipLiteral, type Resolver } from "./resolver.js";

/** What the fetcher learns of each origin's live connection. */
export interface OriginConnection {
  /** The address the socket dialled. */
  readonly ip: string;
  /** `h2` when the TLS handshake chose HTTP/2 (ALPN), else `http/1.1`. */
  readonly protocol: "h2" | "http/1.1";
}

/** A live connection and its socket. */
interface LiveConnection extends OriginConnection {
  readonly socket: Socket;
}

/** The address an origin's requests go to now, and how many are under way. */
interface Pin {
  readonly ip: string;
  requests: number;
}

/**
 * Each origin's live connection (the fetcher keeps one per origin) and the address its requests go to:
 * a request is dialled at the address it was counted at, and a connection kept alive to another address
 * (the host's address changed meanwhile) is closed before the request goes out, so the address a
 * request is counted at and the one its connection goes to never differ. The agent sends one request
 * at a time to a host, so the connection closed is idle; a request still on it would fail (and be
 * retried as a transient failure).
 */
export class OriginConnections {
  readonly #live = new Map<string, LiveConnection>();
  readonly #pins = new Map<string, Pin>();

  /**
   * A request to `origin` at `ip` is about to be sent: a connection kept alive elsewhere is closed
   * first, and new connections dial `ip` until the returned function (called when the request ends).
   */
  async begin(origin: string, ip: string): Promise<() => void> {
    const live = this.#live.get(origin);
    if (live !== undefined && live.ip !== ip) await closed(live.socket);
    let pin = this.#pins.get(origin);
    if (pin?.ip !== ip) {
      pin = { ip, requests: 0 };
      this.#pins.set(origin, pin);
    }
    pin.requests++;
    const mine = pin;
    return () => {
      if (--mine.requests === 0 && this.#pins.get(origin) === mine) this.#pins.delete(origin);
    };
  }

  /** The address a new connection to `origin` dials: its requests' (undefined: none under way, resolve). */
  addressOf(origin: string): string | undefined {
    return this.#pins.get(origin)?.ip;
  }

  /** The live connection of `origin`, if any. */
  connectionOf(origin: string): OriginConnection | undefined {
    return this.#live.get(origin);
  }

  /** `origin`'s new connection. */
  connected(origin: string, connection: LiveConnection): void {
    this.#live.set(origin, connection);
  }

  /** A connection of `origin` ended (or never opened): forgotten unless a newer one is live. */
  disconnected(origin: string): void {
    if (this.#live.get(origin)?.socket.destroyed !== false) this.#live.delete(origin);
  }
}

/** Destroys `socket`; resolves once it is closed (undici has seen it go, and will dial anew). */
function closed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once("close", () => resolve());
    socket.destroy();
  });
}

/**
 * Builds undici's connector so that EVERY new connection dials the address its origin's requests are
 * counted at (`connections`), or else resolves its host through `resolver`, and checks the address
 * against `netPolicy`; the socket then connects to that IP, never to a name. Each origin's connection
 * is noted in `connections`. With `allowH2`, TLS offers HTTP/2 besides HTTP/1.1 and the server chooses.
 */
export function guardedConnector(
  resolver: Resolver,
  netPolicy: NetPolicy,
  connectOptions: {
    readonly timeout: number;
    readonly secureContext: SecureContext | undefined;
    readonly allowH2: boolean;
  },
  connections: OriginConnections,
): buildConnector.connector {
  const { timeout, secureContext, allowH2 } = connectOptions;
  const connect = buildConnector(
    secureContext === undefined ? { timeout, allowH2 } : { timeout, secureContext, allowH2 },
  );
  return (options, callback) => {
    const hostname = options.hostname;
    const origin = `${options.protocol}//${options.host ?? hostname}`;
    const pinned = connections.addressOf(origin);
    (pinned === undefined ? resolver.resolve(hostname) : Promise.resolve(pinned)).then(
      (ip) => {
        try {
          netPolicy.check(ip);
        } catch (error) {
          callback(error as Error, null);
          return;
        }
        connect(
          {
            ...options,
            hostname: ip,
            // TLS still names the host (SNI, certificate check) although the socket dials the IP.
            servername: options.servername ?? (ipLiteral(hostname) === undefined ? hostname : undefined),
          },
          (error, socket) => {
            if (socket !== null && socket !== undefined) {
              const h2 = (socket as { alpnProtocol?: unknown }).alpnProtocol === "h2";
              connections.connected(origin, {
                ip,
                protocol: h2 ? "h2" : "http/1.1",
                socket: socket as Socket,
              });
            }
            callback(error as Error, socket as never);
          },
        );
      },
      (error: Error) => callback(error, null),
    );
  };
}
