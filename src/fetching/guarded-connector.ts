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

/**
 * Builds undici's connector so that EVERY new connection first resolves its host through `resolver`
 * and checks the address against `netPolicy`; the socket then connects to that IP, never to a name.
 * The IP and protocol in use per origin are written to `byOrigin` (the fetcher keeps one connection
 * per origin). With `allowH2`, TLS offers HTTP/2 besides HTTP/1.1 and the server chooses.
 */
export function guardedConnector(
  resolver: Resolver,
  netPolicy: NetPolicy,
  connectOptions: {
    readonly timeout: number;
    readonly secureContext: SecureContext | undefined;
    readonly allowH2: boolean;
  },
  byOrigin: Map<string, OriginConnection>,
): buildConnector.connector {
  const { timeout, secureContext, allowH2 } = connectOptions;
  const connect = buildConnector(
    secureContext === undefined ? { timeout, allowH2 } : { timeout, secureContext, allowH2 },
  );
  return (options, callback) => {
    const hostname = options.hostname;
    resolver.resolve(hostname).then(
      (ip) => {
        try {
          netPolicy.check(ip);
        } catch (error) {
          callback(error as Error, null);
          return;
        }
        const origin = `${options.protocol}//${options.host ?? hostname}`;
        byOrigin.set(origin, { ip, protocol: "http/1.1" });
        connect(
          {
            ...options,
            hostname: ip,
            // TLS still names the host (SNI, certificate check) although the socket dials the IP.
            servername: options.servername ?? (ipLiteral(hostname) === undefined ? hostname : undefined),
          },
          (error, socket) => {
            if ((socket as { alpnProtocol?: unknown } | null | undefined)?.alpnProtocol === "h2") {
              byOrigin.set(origin, { ip, protocol: "h2" });
            }
            callback(error as Error, socket as never);
          },
        );
      },
      (error: Error) => callback(error, null),
    );
  };
}
