/**
 * One {@link PeerClient} per peer address, created on first use and shared, so an agent keeps one
 * HTTP/2 connection per peer however many components talk to it.
 */

import { ErrorCode, UbiError } from "../errors.js";
import { type PeerClient, type PeerClientOptions, resolvePeerClientOptions } from "./peer-client.js";
import { GRPC_TRANSPORT, type PeerTransport } from "./peer-transport.js";

/** Get-or-create clients by peer address; `closeAll()` on shutdown. */
export class PeerClientPool {
  readonly #options: PeerClientOptions;
  readonly #transport: PeerTransport;
  readonly #clients = new Map<string, PeerClient>();
  #closed = false;

  /** @param transport what the clients' calls travel on */
  constructor(options: PeerClientOptions = {}, transport: PeerTransport = GRPC_TRANSPORT) {
    // Checked once here so a bad option fails at startup, not at the first peer.
    this.#options = resolvePeerClientOptions(options);
    this.#transport = transport;
  }

  /** The client of `address` (`host:port`), created if needed. */
  get(address: string): PeerClient {
    if (this.#closed) throw new UbiError(ErrorCode.PeerUnreachable, "peer client pool is closed");
    let client = this.#clients.get(address);
    if (client === undefined) {
      client = this.#transport.connect(address, this.#options);
      this.#clients.set(address, client);
    }
    return client;
  }

  /** True when a client of `address` is open. */
  has(address: string): boolean {
    return this.#clients.has(address);
  }

  /** Number of open clients. */
  get size(): number {
    return this.#clients.size;
  }

  /** Closes and forgets the client of `address` (e.g. the peer left); no-op when absent. */
  remove(address: string): void {
    this.#clients.get(address)?.close();
    this.#clients.delete(address);
  }

  /** Closes every client; later `get()` calls throw. Idempotent. */
  closeAll(): void {
    this.#closed = true;
    for (const client of this.#clients.values()) client.close();
    this.#clients.clear();
  }
}
