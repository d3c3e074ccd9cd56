import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { ErrorCode, UbiError } from "../errors.js";
import { hostKey, ipLiteral, type Resolver } from "./resolver.js";

/**
 * Resolves names from an `/etc/hosts`-format table only. A name missing from the table fails at once with
 * `DnsNotFound` and no DNS server is ever asked, which is what keeps a laboratory crawl on loopback.
 */
export class HostsFileResolver implements Resolver {
  /** Each name's addresses, in the order of the lines naming it. */
  readonly #table: Map<string, string[]>;

  /**
   * Parses hosts-file text: `#` comments, one IP then one or more names per line, IPv4 and IPv6.
   * Names are case-insensitive; the first line naming a host is what {@link resolve} answers, as in
   * `/etc/hosts`, and every line naming it what {@link resolveAll} does.
   * @throws UbiError InvalidArgument when a line does not start with a valid IP address.
   */
  constructor(text: string) {
    this.#table = parseHostsText(text);
  }

  /** Reads and parses a hosts file. */
  static async fromFile(path: string): Promise<HostsFileResolver> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw new UbiError(ErrorCode.InvalidArgument, `cannot read hosts file ${path}`, { cause: error });
    }
    return new HostsFileResolver(text);
  }

  /** Number of names in the table. */
  get size(): number {
    return this.#table.size;
  }

  /** Resolves from the table; IP literals resolve to themselves. */
  async resolve(hostname: string): Promise<string> {
    return (await this.resolveAll(hostname))[0] as string;
  }

  /**
   * Every address of `hostname` (one per line naming it, in order: a name standing for several
   * agents, as a headless Service's does); an IP literal resolves to itself.
   */
  resolveAll(hostname: string): Promise<string[]> {
    const literal = ipLiteral(hostname);
    if (literal !== undefined) return Promise.resolve([literal]);
    const ips = this.#table.get(hostKey(hostname));
    if (ips === undefined) {
      return Promise.reject(new UbiError(ErrorCode.DnsNotFound, `${hostname} is not in the hosts file`));
    }
    return Promise.resolve([...ips]);
  }
}

function parseHostsText(text: string): Map<string, string[]> {
  const table = new Map<string, string[]>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const hash = lines[i].indexOf("#");
    const line = (hash === -1 ? lines[i] : lines[i].slice(0, hash)).trim();
    if (line === "") continue;
    const fields = line.split(/\s+/);
    // A zone index (fe80::1%eth0) is valid in hosts files but not for isIP.
    const ip = fields[0];
    if (isIP(ip.split("%")[0]) === 0) {
      throw new UbiError(ErrorCode.InvalidArgument, `hosts file line ${i + 1}: "${ip}" is not an IP address`);
    }
    if (fields.length < 2) {
      throw new UbiError(ErrorCode.InvalidArgument, `hosts file line ${i + 1}: no host name after ${ip}`);
    }
    for (let f = 1; f < fields.length; f++) {
      const name = hostKey(fields[f]);
      const ips = table.get(name);
      if (ips === undefined) table.set(name, [ip]);
      else if (!ips.includes(ip)) ips.push(ip);
    }
  }
  return table;
}
