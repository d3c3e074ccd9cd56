import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logging/index.js";
import { formatHostPort, parseHostPort } from "../transport/index.js";
import type { SeedProbe } from "./cluster-join.js";

/**
 * `--join` names resolved by the agent itself, to every address they stand for: a Kubernetes headless
 * Service's name resolves to one address per pod, and the agent tries each (gRPC would dial one, and
 * could dial this very agent). The lookup is injected (the system's in production, `--hosts-file`'s
 * when given, so a test never asks a DNS server), this agent's own addresses are left out, and each
 * address keeps the name it came from: the peer's certificate is checked against that name.
 */

/** Every address a host name resolves to; rejects when it resolves to none. */
export type LookupAll = (hostname: string) => Promise<readonly string[]>;

/** What {@link SeedAddresses} needs. */
export interface SeedAddressesDeps {
  readonly lookupAll: LookupAll;
  /** True for an `ip:port` of this agent's own (see {@link selfAddressMatcher}). */
  readonly isSelf: (address: string) => boolean;
  readonly logger: Logger;
}

/** Resolves `--join` addresses to the addresses dialed, remembering the name each came from. */
export class SeedAddresses {
  readonly #serverNames = new Map<string, string>();
  /** What each name resolved to when last said, so a change is logged once. */
  readonly #said = new Map<string, string>();

  constructor(private readonly deps: SeedAddressesDeps) {}

  /** The name each address resolved so far came from, by `ip:port`: what its certificate must show. */
  get serverNames(): ReadonlyMap<string, string> {
    return this.#serverNames;
  }

  /**
   * The addresses `address` stands for: itself for an IP literal; for a name, each of its addresses
   * but this agent's own, looked up now (they change as agents come and go). Rejects with
   * `DnsNotFound` when the name resolves to nothing.
   */
  async expand(address: string): Promise<string[]> {
    const parsed = parseHostPort(address);
    if (parsed === undefined || isIP(parsed.host) !== 0) return [address];
    const ips = await this.deps.lookupAll(parsed.host);
    const addresses = ips.map((ip) => formatHostPort({ host: ip, port: parsed.port }));
    const others = addresses.filter((candidate) => !this.deps.isSelf(candidate));
    for (const other of others) this.#serverNames.set(other, parsed.host);
    const said = addresses.join(", ");
    if (addresses.length > 1 && this.#said.get(address) !== said) {
      this.#said.set(address, said);
      this.deps.logger.info(
        { event: "join-resolved", name: address, addresses },
        `${address} resolves to ${addresses.length} addresses: trying ${others.length === addresses.length ? "each" : "each but this agent's own"}, ${said}`,
      );
    }
    return others;
  }

  /** Every address of `seeds` (see {@link expand}); those that resolve to nothing are left out. */
  async expandAll(seeds: readonly string[]): Promise<string[]> {
    const expanded = await Promise.all(seeds.map((seed) => this.expand(seed).catch((): string[] => [])));
    return [...new Set(expanded.flat())];
  }

  /**
   * Probes `address` through each address it stands for with `probeOne` (given the name the
   * certificate must show): the first that answers wins, else a refusal that cannot pass, else the
   * first silence. A name that does not resolve, or only to this agent, is a silence: it may resolve
   * once its agents are up.
   */
  async probe(
    address: string,
    probeOne: (address: string, serverName?: string) => Promise<SeedProbe>,
  ): Promise<SeedProbe> {
    let addresses: string[];
    try {
      addresses = await this.expand(address);
    } catch (error) {
      const reason = "name not found";
      return { ok: false, reason, message: `${address}: ${errorMessage(error)}`, retryable: true };
    }
    if (addresses.length === 0) {
      const reason = "resolves only to this agent";
      return { ok: false, reason, message: `${address} ${reason}`, retryable: true };
    }
    const found = await Promise.all(addresses.map((one) => probeOne(one, this.#serverNames.get(one))));
    return (
      found.find((probe) => probe.ok) ??
      found.find((probe) => !probe.ok && !probe.retryable) ??
      (found[0] as SeedProbe)
    );
  }
}

const WILDCARDS = new Set(["0.0.0.0", "::"]);

/**
 * Tells whether an `ip:port` is this agent's own: its `listen` or `advertise` address, or, listening
 * on every interface (`0.0.0.0`, `::`), the port on any address of this machine.
 */
export function selfAddressMatcher(
  listen: string,
  advertise: string | undefined,
  localAddresses: () => readonly string[] = machineAddresses,
): (address: string) => boolean {
  const own = new Set(
    [listen, advertise].flatMap((text) => {
      const parsed = text === undefined ? undefined : parseHostPort(text, true);
      return parsed === undefined ? [] : [formatHostPort(parsed)];
    }),
  );
  const bound = parseHostPort(listen, true);
  return (address) => {
    const parsed = parseHostPort(address);
    if (parsed === undefined) return false;
    if (own.has(formatHostPort(parsed))) return true;
    return (
      bound !== undefined &&
      WILDCARDS.has(bound.host) &&
      parsed.port === bound.port &&
      (parsed.host.startsWith("127.") || parsed.host === "::1" || localAddresses().includes(parsed.host))
    );
  };
}

/** The addresses of this machine's network interfaces. */
function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) =>
    (entries ?? []).map((entry) => entry.address),
  );
}
