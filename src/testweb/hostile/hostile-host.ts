import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ResolvedHostileWebOptions } from "./options.js";

/** The domain every hostile host lives under. */
export const HOSTILE_DOMAIN = "hostile.test";

/** The full name of the hostile host labelled `label`. */
export function hostileHostName(label: string): string {
  return `${label}.${HOSTILE_DOMAIN}`;
}

/** What a behaviour's handler may use besides the request. */
export interface HostileContext {
  readonly options: ResolvedHostileWebOptions;
  /** The port every host listens on. */
  readonly port: number;
  /** The absolute URL of `path` on the host labelled `label`. */
  url(label: string, path: string): string;
  /** The entry URLs of every host but the control host (what the control home links to). */
  hostileEntryUrls(): string[];
}

/** The request line of a request read off a raw socket. */
export interface RawRequest {
  readonly method: string;
  /** The request target as sent (`/path?query`). */
  readonly path: string;
}

/** A behaviour answered through `node:http` (well-formed HTTP, hostile content or pacing). */
export interface HttpHostileHost {
  readonly kind: "http";
  /** Label of the host: it is served as `<label>.hostile.test`. */
  readonly label: string;
  /** What the host does and what a robust crawler should make of it. */
  readonly description: string;
  /** Paths the seeds and the control home link to. */
  readonly entryPaths: readonly string[];
  /** True when the handler answers `/robots.txt` itself; otherwise the server answers 404 (allow all). */
  readonly ownRobots?: boolean;
  /** Answers one request; must stop any timer or stream when `res` closes. */
  handle(req: IncomingMessage, res: ServerResponse, context: HostileContext): void;
}

/** A behaviour that writes raw bytes to the socket, to break HTTP itself. */
export interface RawHostileHost {
  readonly kind: "raw";
  /** Label of the host: it is served as `<label>.hostile.test`. */
  readonly label: string;
  /** What the host does and what a robust crawler should make of it. */
  readonly description: string;
  /** Paths the seeds and the control home link to. */
  readonly entryPaths: readonly string[];
  /**
   * Answers one request (`/robots.txt` is answered 404 before this is called); must stop any timer when
   * the socket closes. One request per connection.
   */
  handle(socket: Socket, request: RawRequest, context: HostileContext): void;
}

/** One host of the hostile web. */
export type HostileHost = HttpHostileHost | RawHostileHost;
