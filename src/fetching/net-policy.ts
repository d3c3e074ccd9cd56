import { BlockList, isIP, isIPv4 } from "node:net";
import { ErrorCode, invalidArgument, UbiError } from "../errors.js";

/** Options of {@link NetPolicy}. */
export interface NetPolicyOptions {
  /**
   * CIDRs (`127.0.0.0/8`, `::1/128`) that may be reached even though they are private, loopback or
   * otherwise special: the `--allow-net` flag. A bare address means a single host. @default []
   */
  allow?: readonly string[];
}

/** Ranges a crawler must not reach unless allowed: not public unicast. */
const FORBIDDEN_V4: readonly [string, number][] = [
  ["0.0.0.0", 8], // unspecified, "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local
  ["172.16.0.0", 12], // private
  ["192.168.0.0", 16], // private
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
];
const FORBIDDEN_V6: readonly [string, number][] = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
];

/**
 * Decides which addresses the fetcher may connect to. Public addresses pass; private, loopback,
 * link-local, unspecified, multicast and broadcast addresses (also as IPv4-mapped IPv6) are refused
 * unless an allowed CIDR contains them.
 */
export class NetPolicy {
  readonly #forbidden = new BlockList();
  readonly #allowed = new BlockList();
  /** The allowed CIDRs as given, for logs. */
  readonly allowCidrs: readonly string[];

  /** @throws UbiError InvalidArgument for a malformed CIDR. */
  constructor(options: NetPolicyOptions = {}) {
    for (const [net, prefix] of FORBIDDEN_V4) this.#forbidden.addSubnet(net, prefix, "ipv4");
    for (const [net, prefix] of FORBIDDEN_V6) this.#forbidden.addSubnet(net, prefix, "ipv6");
    this.allowCidrs = [...(options.allow ?? [])];
    for (const cidr of this.allowCidrs) {
      const [net, prefix, family] = parseCidr(cidr);
      this.#allowed.addSubnet(net, prefix, family);
    }
  }

  /** True when `ip` may be reached. Node's BlockList also matches IPv4-mapped IPv6 against IPv4 rules. */
  isAllowed(ip: string): boolean {
    const family = isIP(ip);
    if (family === 0) return false;
    const type = family === 4 ? "ipv4" : "ipv6";
    return !this.#forbidden.check(ip, type) || this.#allowed.check(ip, type);
  }

  /** @throws UbiError AddressForbidden when {@link NetPolicy.isAllowed} is false. */
  check(ip: string): void {
    if (!this.isAllowed(ip)) {
      throw new UbiError(ErrorCode.AddressForbidden, `${ip} is not a public address and not in --allow-net`);
    }
  }
}

/** Parses `addr/prefix` (or a bare address) and validates both parts. */
export function parseCidr(cidr: string): [string, number, "ipv4" | "ipv6"] {
  const slash = cidr.indexOf("/");
  const net = (slash === -1 ? cidr : cidr.slice(0, slash)).trim();
  const family = isIP(net);
  if (family === 0) {
    invalidArgument(`--allow-net "${cidr}": "${net}" is not an IPv4 or IPv6 address`);
  }
  const maxPrefix = isIPv4(net) ? 32 : 128;
  let prefix = maxPrefix;
  if (slash !== -1) {
    const text = cidr.slice(slash + 1).trim();
    prefix = /^\d{1,3}$/.test(text) ? Number(text) : Number.NaN;
    if (!(prefix >= 0 && prefix <= maxPrefix)) {
      invalidArgument(`--allow-net "${cidr}": prefix length must be an integer from 0 to ${maxPrefix}`);
    }
  }
  return [net, prefix, family === 4 ? "ipv4" : "ipv6"];
}
