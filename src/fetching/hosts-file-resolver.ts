import { readFile, stat } from "node:fs/promises";
import { isIP } from "node:net";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, invalidArgument, UbiError } from "../errors.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import { hostKey, ipLiteral, type Resolver } from "./resolver.js";

/** @default of {@link HostsFileOptions.checkEveryMs}: a hosts file's edits are seen within a second. */
export const DEFAULT_HOSTS_FILE_CHECK_MS = 1000;

/** Options of a {@link HostsFileResolver} read from a file. */
export interface HostsFileOptions {
  /** How often at most the file is looked at again (its modification time, size and inode), ms. @default 1000 */
  checkEveryMs?: number;
}

/** Dependencies of a {@link HostsFileResolver} read from a file. */
export interface HostsFileDeps {
  /** When the file is due to be looked at again. @default systemClock */
  clock?: Clock;
  /** Where reloads and refused versions are told. @default defaultLogger() */
  logger?: Logger;
}

/** What identifies one version of the file on disk. */
interface FileStamp {
  readonly mtimeMs: number;
  readonly size: number;
  readonly ino: number;
}

/** The file a table was read from, and when and how it was last looked at. */
interface WatchedFile {
  readonly path: string;
  readonly checkEveryMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The version last read (a refused one included, so it is read and told once). */
  stamp: FileStamp;
  nextCheckAtMs: number;
  /** The last problem told (unreadable, refused), so each is told once. */
  told: string | undefined;
}

/**
 * Resolves names from an `/etc/hosts`-format table only. A name missing from the table fails at once with
 * `DnsNotFound` and no DNS server is ever asked, which is what keeps a laboratory crawl on loopback.
 * Read from a file ({@link fromFile}), the table follows the file's edits as `/etc/hosts` readers do: the
 * file is looked at again at most every `checkEveryMs` when a name is asked, and read again when it
 * changed; a version that cannot be read or parsed, or names no host, is refused (said once) and the last
 * good table kept. Write the file whole (another file renamed over it), as for `/etc/hosts`.
 */
export class HostsFileResolver implements Resolver {
  /** Each name's addresses, in the order of the lines naming it. */
  #table: Map<string, string[]>;
  /** The file it follows; undefined for a table made from text. */
  #file: WatchedFile | undefined;

  /**
   * Parses hosts-file text: `#` comments, one IP then one or more names per line, IPv4 and IPv6.
   * Names are case-insensitive; the first line naming a host is what {@link resolve} answers, as in
   * `/etc/hosts`, and every line naming it what {@link resolveAll} does.
   * @throws UbiError InvalidArgument when a line does not start with a valid IP address.
   */
  constructor(text: string) {
    this.#table = parseHostsText(text);
  }

  /**
   * Reads and parses a hosts file, and follows its edits (see the class).
   * @throws UbiError InvalidArgument when it cannot be read or parsed, or `checkEveryMs` is not positive.
   */
  static async fromFile(
    path: string,
    options: HostsFileOptions = {},
    deps: HostsFileDeps = {},
  ): Promise<HostsFileResolver> {
    const checkEveryMs = options.checkEveryMs ?? DEFAULT_HOSTS_FILE_CHECK_MS;
    if (!(Number.isFinite(checkEveryMs) && checkEveryMs > 0)) {
      invalidArgument(`checkEveryMs must be a positive number of ms, got ${checkEveryMs}`);
    }
    const clock = deps.clock ?? systemClock;
    let version: { readonly text: string; readonly stamp: FileStamp };
    try {
      version = await readVersion(path);
    } catch (error) {
      throw new UbiError(ErrorCode.InvalidArgument, `cannot read hosts file ${path}`, { cause: error });
    }
    const resolver = new HostsFileResolver(version.text);
    resolver.#file = {
      path,
      checkEveryMs,
      clock,
      logger: deps.logger ?? defaultLogger(),
      stamp: version.stamp,
      nextCheckAtMs: clock.now() + checkEveryMs,
      told: undefined,
    };
    return resolver;
  }

  /** Number of names in the table. */
  get size(): number {
    return this.#table.size;
  }

  /** Resolves from the table: the first address of the name (its first line); IP literals resolve to themselves. */
  async resolve(hostname: string): Promise<string> {
    return (await this.resolveAll(hostname))[0] as string;
  }

  /**
   * Every address of `hostname` (one per line naming it, in order: a name standing for several
   * agents, as a headless Service's does); an IP literal resolves to itself.
   */
  async resolveAll(hostname: string): Promise<string[]> {
    const literal = ipLiteral(hostname);
    if (literal !== undefined) return [literal];
    const file = this.#file;
    if (file !== undefined && file.clock.now() >= file.nextCheckAtMs) {
      file.nextCheckAtMs = file.clock.now() + file.checkEveryMs;
      // Callers meanwhile answer from the table as it is: it is at most a check old.
      await this.#reloadIfChanged(file);
    }
    const ips = this.#table.get(hostKey(hostname));
    if (ips === undefined) {
      throw new UbiError(ErrorCode.DnsNotFound, `${hostname} is not in the hosts file`);
    }
    return [...ips];
  }

  /** Reads the file again when its version changed; a version refused keeps the table as it is. */
  async #reloadIfChanged(file: WatchedFile): Promise<void> {
    let version: { readonly text: string; readonly stamp: FileStamp } | undefined;
    try {
      if (sameStamp(await stampOf(file.path), file.stamp)) return;
      version = await readVersion(file.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      tellOnce(file, `unreadable ${code}`, { code }, `cannot read the hosts file ${file.path} (${code})`);
      return;
    }
    file.stamp = version.stamp;
    let table: Map<string, string[]>;
    try {
      table = parseHostsText(version.text);
      if (table.size === 0) invalidArgument("it names no host");
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      tellOnce(
        file,
        `refused ${JSON.stringify(version.stamp)}`,
        { reason },
        `the hosts file ${file.path} was edited but ${reason}`,
      );
      return;
    }
    this.#table = table;
    file.told = undefined;
    file.logger.info(
      { event: "hosts-file-reloaded", path: file.path, names: table.size },
      `the hosts file ${file.path} changed: ${table.size} names read again`,
    );
  }
}

/** Warns of a problem with the file unless it is the one told last; the last good table stays in use. */
function tellOnce(
  file: WatchedFile,
  problem: string,
  fields: Record<string, unknown>,
  message: string,
): void {
  if (file.told === problem) return;
  file.told = problem;
  file.logger.warn(
    { event: "hosts-file-refused", path: file.path, ...fields },
    `${message}: the names it held before are kept`,
  );
}

async function stampOf(path: string): Promise<FileStamp> {
  const { mtimeMs, size, ino } = await stat(path);
  return { mtimeMs, size, ino };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** Reads of a file that keeps changing while it is read, before it is refused for now. */
const READ_ATTEMPTS = 3;

/**
 * The file's text and the version it is: looked at before and after reading, so a file being written
 * meanwhile is read again rather than taken half-written.
 */
async function readVersion(path: string): Promise<{ readonly text: string; readonly stamp: FileStamp }> {
  for (let attempt = 1; ; attempt++) {
    const before = await stampOf(path);
    const bytes = await readFile(path);
    const after = await stampOf(path);
    if (sameStamp(before, after) && bytes.byteLength === after.size) {
      return { text: bytes.toString("utf8"), stamp: after };
    }
    if (attempt === READ_ATTEMPTS) {
      throw Object.assign(new Error(`${path} kept changing while read`), { code: "EAGAIN" });
    }
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
