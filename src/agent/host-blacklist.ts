import { ErrorCode, UbiError } from "../errors.js";

/** Longest pattern accepted, characters (a host key is at most 262). */
const MAX_PATTERN_CHARS = 262;
/** A host name, with an optional port, or a `*.` suffix pattern: lower-case letters, digits, `.-_:[]`. */
const PATTERN_SHAPE = /^(\*\.)?[a-z0-9._\-[\]:]+$/;

/** One pattern and its last change, as agents exchange them (`SyncBlacklist`) and save them. */
export interface BlacklistEntry {
  readonly pattern: string;
  /** True while blacklisted; false once removed (kept, so the removal wins over older adds). */
  readonly blocked: boolean;
  /** When it last changed, ms since the epoch, by the changing agent's clock. */
  readonly changedAtMs: number;
  /** The agent that changed it (breaks ties). */
  readonly changedBy: string;
}

/** Who changes the blacklist, and when (an operator's command, at an agent). */
export interface BlacklistChange {
  readonly atMs: number;
  readonly by: string;
}

/** What a merge changed. */
export interface BlacklistMerge {
  /** Patterns now blacklisted that were not. */
  readonly added: readonly string[];
  /** Patterns no longer blacklisted. */
  readonly removed: readonly string[];
}

/** The change time of entries built without one (tests, the list format saved before changes were kept). */
const NO_CHANGE: BlacklistChange = { atMs: 0, by: "" };

/**
 * The hosts an operator said not to fetch (`ubicrawl ctl blacklist-add`), by pattern: a host key
 * (`example.org:443`: that host on that port), a host name (`example.org`: on any port), or `*.`
 * and a domain (`*.example.org`: every host under it, on any port, not the domain itself). Patterns
 * are kept lower-case.
 *
 * The agents of a cluster converge on one blacklist: each pattern keeps its last change (blocked or
 * not, when, by whom), removals included, and {@link merge} keeps the later change of each pattern
 * (a last-writer-wins set), so the order in which agents hear of changes does not matter. A change
 * made here is dated after every change known here, so it wins over them whatever the clocks say.
 */
export class HostBlacklist {
  private readonly patterns = new Set<string>();
  private readonly changes = new Map<string, BlacklistEntry>();

  /** A blacklist of `patterns`; bad ones are refused. */
  constructor(patterns: readonly string[] = []) {
    for (const pattern of patterns) this.add(pattern);
  }

  /** Adds `pattern` (see the class); false when it was there already. Throws on a malformed one. */
  add(pattern: string, change: BlacklistChange = NO_CHANGE): boolean {
    const normalized = checkPattern(pattern);
    if (this.patterns.has(normalized)) return false;
    this.record(normalized, true, change);
    return true;
  }

  /** Removes `pattern`; false when it was not on the list. */
  remove(pattern: string, change: BlacklistChange = NO_CHANGE): boolean {
    const normalized = pattern.trim().toLowerCase();
    if (!this.patterns.has(normalized)) return false;
    this.record(normalized, false, change);
    return true;
  }

  /**
   * Takes each of `entries` that is later than this blacklist's change of its pattern (at the same
   * time, the larger agent id wins); malformed patterns are skipped.
   */
  merge(entries: readonly BlacklistEntry[]): BlacklistMerge {
    const added: string[] = [];
    const removed: string[] = [];
    for (const entry of entries) {
      let pattern: string;
      try {
        pattern = checkPattern(entry.pattern);
      } catch {
        continue;
      }
      const known = this.changes.get(pattern);
      if (known !== undefined && !isLater(entry, known)) continue;
      const was = this.patterns.has(pattern);
      this.changes.set(pattern, { ...entry, pattern });
      if (entry.blocked) this.patterns.add(pattern);
      else this.patterns.delete(pattern);
      if (entry.blocked && !was) added.push(pattern);
      if (!entry.blocked && was) removed.push(pattern);
    }
    return { added, removed };
  }

  /** Every pattern's last change, removals included, sorted by pattern: what agents exchange and save. */
  entries(): BlacklistEntry[] {
    return [...this.changes.values()].sort((a, b) =>
      a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0,
    );
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

  /** The blacklisted patterns, sorted. */
  toJSON(): string[] {
    return [...this.patterns].sort();
  }

  private record(pattern: string, blocked: boolean, change: BlacklistChange): void {
    const known = this.changes.get(pattern);
    // After every change known here, whatever this agent's clock says.
    const atMs = known === undefined ? change.atMs : Math.max(change.atMs, known.changedAtMs + 1);
    this.changes.set(pattern, { pattern, blocked, changedAtMs: atMs, changedBy: change.by });
    if (blocked) this.patterns.add(pattern);
    else this.patterns.delete(pattern);
  }
}

/** True when change `a` wins over change `b` of the same pattern. */
function isLater(a: BlacklistEntry, b: BlacklistEntry): boolean {
  if (a.changedAtMs !== b.changedAtMs) return a.changedAtMs > b.changedAtMs;
  if (a.changedBy !== b.changedBy) return a.changedBy > b.changedBy;
  // The same change twice, or two at once by one agent: a block wins (the safer side).
  return a.blocked && !b.blocked;
}

/** `pattern` lower-cased and checked; throws `InvalidArgument` saying what a pattern looks like. */
export function checkPattern(pattern: string): string {
  const normalized = pattern.trim().toLowerCase();
  const port = /:(\d+)$/.exec(normalized)?.[1];
  const badPort =
    port !== undefined && normalized.lastIndexOf(":") > normalized.lastIndexOf("]") && Number(port) > 65_535;
  if (
    normalized.length === 0 ||
    normalized.length > MAX_PATTERN_CHARS ||
    !PATTERN_SHAPE.test(normalized) ||
    badPort
  ) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `"${pattern}" is not a host pattern: give a host (example.org), a host and port (example.org:443; ports up to 65535) or *.example.org`,
    );
  }
  return normalized;
}

/** The host name of a host key: `example.org:443` → `example.org`, `[::1]:80` → `[::1]`. */
function hostnameOfKey(host: string): string {
  const colon = host.lastIndexOf(":");
  return colon > host.lastIndexOf("]") ? host.slice(0, colon) : host;
}
