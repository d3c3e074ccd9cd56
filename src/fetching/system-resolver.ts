import { lookup } from "node:dns/promises";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, invalidArgument, UbiError } from "../errors.js";
import { hostKey, ipLiteral, type Resolver } from "./resolver.js";

/** Options of {@link SystemResolver}. */
export interface SystemResolverOptions {
  /** How long a successful lookup is reused. @default 600000 (10 min) */
  positiveTtlMs?: number;
  /** How long a failed lookup is remembered, so a dead name is not asked again per URL. @default 60000 (1 min) */
  negativeTtlMs?: number;
  /** Cache entries kept; the oldest are dropped first. @default 100000 */
  maxEntries?: number;
}

/** Dependencies of {@link SystemResolver}. */
export interface SystemResolverDeps {
  /** Time source for cache expiry. @default systemClock */
  clock?: Clock;
  /** The OS lookup; replaceable so tests never ask a real DNS server. @default dns.promises.lookup */
  lookup?: (hostname: string) => Promise<{ address: string }>;
}

interface CacheEntry {
  ip: string | undefined;
  error: UbiError | undefined;
  expiresAtMs: number;
}

/**
 * Resolves through the operating system (`dns.lookup`, which honours `/etc/hosts`), with a positive and a
 * negative cache and one lookup in flight per name however many callers ask.
 */
export class SystemResolver implements Resolver {
  readonly #positiveTtlMs: number;
  readonly #negativeTtlMs: number;
  readonly #maxEntries: number;
  readonly #clock: Clock;
  readonly #lookupFn: (hostname: string) => Promise<{ address: string }>;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<string>>();

  /** @throws UbiError InvalidArgument for negative TTLs or a non-positive `maxEntries`. */
  constructor(options: SystemResolverOptions = {}, deps: SystemResolverDeps = {}) {
    this.#positiveTtlMs = options.positiveTtlMs ?? 600_000;
    this.#negativeTtlMs = options.negativeTtlMs ?? 60_000;
    this.#maxEntries = options.maxEntries ?? 100_000;
    if (!(Number.isFinite(this.#positiveTtlMs) && this.#positiveTtlMs >= 0)) {
      invalidArgument(`positiveTtlMs must be a finite number >= 0, got ${this.#positiveTtlMs}`);
    }
    if (!(Number.isFinite(this.#negativeTtlMs) && this.#negativeTtlMs >= 0)) {
      invalidArgument(`negativeTtlMs must be a finite number >= 0, got ${this.#negativeTtlMs}`);
    }
    if (!(Number.isInteger(this.#maxEntries) && this.#maxEntries > 0)) {
      invalidArgument(`maxEntries must be a positive integer, got ${this.#maxEntries}`);
    }
    this.#clock = deps.clock ?? systemClock;
    this.#lookupFn = deps.lookup ?? lookup;
  }

  /** Resolves from the cache, else by one shared `dns.lookup`; IP literals resolve to themselves. */
  resolve(hostname: string, signal?: AbortSignal): Promise<string> {
    const literal = ipLiteral(hostname);
    if (literal !== undefined) return Promise.resolve(literal);
    const key = hostKey(hostname);
    const cached = this.#cache.get(key);
    if (cached !== undefined) {
      if (this.#clock.now() < cached.expiresAtMs) {
        return cached.ip !== undefined ? Promise.resolve(cached.ip) : Promise.reject(cached.error);
      }
      this.#cache.delete(key);
    }
    let pending = this.#inflight.get(key);
    if (pending === undefined) {
      pending = this.#lookup(key);
      this.#inflight.set(key, pending);
    }
    return signal === undefined ? pending : abortable(pending, signal);
  }

  async #lookup(key: string): Promise<string> {
    try {
      const { address } = await this.#lookupFn(key);
      this.#store(key, {
        ip: address,
        error: undefined,
        expiresAtMs: this.#clock.now() + this.#positiveTtlMs,
      });
      return address;
    } catch (cause) {
      const error = new UbiError(ErrorCode.DnsNotFound, `${key} does not resolve`, { cause });
      this.#store(key, { ip: undefined, error, expiresAtMs: this.#clock.now() + this.#negativeTtlMs });
      throw error;
    } finally {
      this.#inflight.delete(key);
    }
  }

  #store(key: string, entry: CacheEntry): void {
    if (this.#cache.size >= this.#maxEntries) {
      // Maps iterate in insertion order, so the first key is the oldest entry.
      const oldest = this.#cache.keys().next();
      if (oldest.done !== true) this.#cache.delete(oldest.value);
    }
    this.#cache.set(key, entry);
  }
}

/** The lookup itself cannot be cancelled; an abort only releases this caller. */
function abortable(pending: Promise<string>, signal: AbortSignal): Promise<string> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    pending.then(
      (ip) => {
        signal.removeEventListener("abort", onAbort);
        resolve(ip);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Every address the operating system resolves `hostname` to (`dns.lookup` with `all`, uncached: for
 * the rare lookups of a `--join` name, whose addresses change as agents come and go); an IP literal
 * resolves to itself. Rejects with `DnsNotFound`.
 */
export async function lookupAllAddresses(hostname: string): Promise<string[]> {
  const literal = ipLiteral(hostname);
  if (literal !== undefined) return [literal];
  try {
    return (await lookup(hostKey(hostname), { all: true })).map((found) => found.address);
  } catch (cause) {
    throw new UbiError(ErrorCode.DnsNotFound, `${hostname} does not resolve`, { cause });
  }
}
