import { ErrorCode, UbiError } from "../errors.js";

/** Longest pattern accepted, characters (a host key is at most 262). */
const MAX_PATTERN_CHARS = 262;
/** A host name, with an optional port, or a `*.` suffix pattern: lower-case letters, digits, `.-_:[]`. */
const PATTERN_SHAPE = /^(\*\.)?[a-z0-9._\-[\]:]+$/;

/**
 * The hosts an operator said not to fetch (`ubicrawl ctl blacklist-add`), by pattern: a host key
 * (`example.org:443`: that host on that port), a host name (`example.org`: on any port), or `*.`
 * and a domain (`*.example.org`: every host under it, on any port, not the domain itself). Patterns
 * are kept lower-case; the set is saved with the agent's state (see {@link toJSON}) so it survives a
 * restart.
 */
export class HostBlacklist {
  private readonly patterns = new Set<string>();

  /** A blacklist of `patterns` (as saved by {@link toJSON}); bad ones are refused. */
  constructor(patterns: readonly string[] = []) {
    for (const pattern of patterns) this.add(pattern);
  }

  /** Adds `pattern` (see the class); false when it was there already. Throws on a malformed one. */
  add(pattern: string): boolean {
    const normalized = normalizePattern(pattern);
    if (this.patterns.has(normalized)) return false;
    this.patterns.add(normalized);
    return true;
  }

  /** Removes `pattern`; false when it was not on the list. */
  remove(pattern: string): boolean {
    return this.patterns.delete(pattern.trim().toLowerCase());
  }

  /** True when the host of host key `host` (`name:port`) matches a pattern. */
  matches(host: string): boolean {
    if (this.patterns.size === 0) return false;
    if (this.patterns.has(host)) return true;
    const name = hostnameOfKey(host);
    if (this.patterns.has(name)) return true;
    for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) {
      if (this.patterns.has(`*${name.slice(dot)}`)) return true;
    }
    return false;
  }

  /** Number of patterns. */
  get size(): number {
    return this.patterns.size;
  }

  /** The patterns, sorted, as saved. */
  toJSON(): string[] {
    return [...this.patterns].sort();
  }
}

/** `pattern` lower-cased and checked; throws `InvalidArgument` saying what a pattern looks like. */
function normalizePattern(pattern: string): string {
  const normalized = pattern.trim().toLowerCase();
  if (normalized.length === 0 || normalized.length > MAX_PATTERN_CHARS || !PATTERN_SHAPE.test(normalized)) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `"${pattern}" is not a host pattern: give a host (example.org), a host and port (example.org:443) or *.example.org`,
    );
  }
  return normalized;
}

/** The host name of a host key: `example.org:443` → `example.org`, `[::1]:80` → `[::1]`. */
function hostnameOfKey(host: string): string {
  const colon = host.lastIndexOf(":");
  return colon > host.lastIndexOf("]") ? host.slice(0, colon) : host;
}
