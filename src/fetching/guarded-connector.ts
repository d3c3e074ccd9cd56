import type { SecureContext } from "node:tls";
import { buildConnector } from "undici";
import type { NetPolicy } from "./net-policy.js";
import { ipLiteral, type Resolver } from "./resolver.js";

/**
 * Builds undici's connector so that EVERY new connection first resolves its host through `resolver`
 * and checks the address against `netPolicy`; the socket then connects to that IP, never to a name.
 * The IP in use per origin is written to `ipByOrigin` (the fetcher keeps one connection per origin).
 */
export function guardedConnector(
  resolver: Resolver,
  netPolicy: NetPolicy,
  connectOptions: { readonly timeout: number; readonly secureContext: SecureContext | undefined },
  ipByOrigin: Map<string, string>,
): buildConnector.connector {
  const { timeout, secureContext } = connectOptions;
  const connect = buildConnector(secureContext === undefined ? { timeout } : { timeout, secureContext });
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
        ipByOrigin.set(`${options.protocol}//${options.host ?? hostname}`, ip);
        connect(
          {
            ...options,
            hostname: ip,
            // TLS still names the host (SNI, certificate check) although the socket dials the IP.
            servername: options.servername ?? (ipLiteral(hostname) === undefined ? hostname : undefined),
          },
          callback,
        );
      },
      (error: Error) => callback(error, null),
    );
  };
}
