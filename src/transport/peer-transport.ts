/**
 * The seam between an agent and the network: how it reaches its peers and how it is reached. Between
 * processes that is gRPC ({@link GRPC_TRANSPORT}); within one process, a `MemoryNetwork`'s transport.
 */

import { AgentServer, type AgentServerDependencies, type AgentServerOptions } from "./agent-server.js";
import { PeerClient, type PeerClientOptions } from "./peer-client.js";

/** An agent's server on its transport: `start()` then `stop()`, once each. */
export interface PeerServer {
  /** The address served, once started. */
  readonly address: string | undefined;
  /** Serves at `listen` (`host:port`, port 0 picks a free one); resolves to the address served. */
  start(listen: string): Promise<string>;
  /** Stops serving; calls in flight may finish. Idempotent. */
  stop(): Promise<void>;
}

/** How an agent's calls reach its peers, and how its handlers are served to them. */
export interface PeerTransport {
  /** A client of the agent at `address` (a `PeerClientPool` keeps one per address). */
  connect(address: string, options: PeerClientOptions): PeerClient;
  /** A server of `dependencies.handlers`, not started yet. */
  server(options: AgentServerOptions, dependencies: AgentServerDependencies): PeerServer;
}

/** Agents in separate processes or machines: gRPC over HTTP/2, plaintext or mutual TLS. */
export const GRPC_TRANSPORT: PeerTransport = {
  connect: (address, options) => new PeerClient(address, options),
  server: (options, dependencies) => new AgentServer(options, dependencies),
};
