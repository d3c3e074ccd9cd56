/** One record of the agent's WARC files as the console replays it: a line of their CDXJ index. */
export interface Capture {
  readonly url: string;
  /** The URL's `host[:port]`. */
  readonly host: string;
  /** `WARC-Date` as 14 digits (the CDXJ timestamp). */
  readonly timestamp: string;
  /** The WARC file's (finished) name. */
  readonly filename: string;
  /** The payload digest, `sha1:` and base32 as the index writes it. */
  readonly digest: string;
  readonly revisit: boolean;
  /** The index line itself, newline included. */
  readonly line: string;
}

/** Options of {@link RecentCaptures}. */
export interface RecentCapturesOptions {
  /**
   * URLs whose last capture is kept, and payloads whose first stored response is (revisits' originals).
   * @default 5000
   */
  readonly capacity?: number;
}

/**
 * The last captures of the agent's WARC files, by URL, for the console's replay links: fed with the
 * index lines as records are written, bounded by `capacity` (oldest forgotten first), so memory does
 * not grow with the crawl. Also keeps, by payload digest, the response that stored each recent
 * payload, so a revisit replays with its original when this agent stored it lately.
 */
export class RecentCaptures {
  private readonly capacity: number;
  private readonly byUrl = new Map<string, Capture>();
  private readonly originals = new Map<string, Capture>();

  constructor(options: RecentCapturesOptions = {}) {
    this.capacity = options.capacity ?? 5000;
  }

  /** Takes in one CDXJ line (`SURT TIMESTAMP {json}`); ignores one it cannot read. */
  record(line: string): void {
    const capture = parseCaptureLine(line);
    if (capture === undefined) return;
    remember(this.byUrl, capture.url, capture, this.capacity);
    if (!capture.revisit && !this.originals.has(capture.digest)) {
      remember(this.originals, capture.digest, capture, this.capacity);
    }
  }

  /** The last capture of `url` kept, if any. */
  latest(url: string): Capture | undefined {
    return this.byUrl.get(url);
  }

  /**
   * The CDXJ index to replay the capture of `url` at `timestamp` from, sorted: the capture, then the
   * latest kept captures of its host, newest first, up to {@link MAX_INDEX_LINES} (so its frames and
   * iframes, and any link followed in the replay, render from the archive too), each revisit with its
   * original when kept; undefined when that capture is no longer kept.
   */
  indexOf(url: string, timestamp: string): Capture[] | undefined {
    const capture = this.byUrl.get(url);
    if (capture === undefined || capture.timestamp !== timestamp) return undefined;
    const chosen = new Set<Capture>();
    const add = (one: Capture): void => {
      chosen.add(one);
      const original = one.revisit ? this.originals.get(one.digest) : undefined;
      if (original !== undefined) chosen.add(original);
    };
    add(capture);
    const newestFirst = [...this.byUrl.values()].reverse();
    for (const other of newestFirst) {
      if (chosen.size >= MAX_INDEX_LINES) break;
      if (other.host === capture.host) add(other);
    }
    return [...chosen].sort((a, b) => (a.line < b.line ? -1 : a.line > b.line ? 1 : 0));
  }
}

/** Lines of one capture's replay index at most (ReplayWeb.page loads the whole index at once). */
export const MAX_INDEX_LINES = 1000;

/** Sets `key` to `value` as the newest entry of `map`, forgetting the oldest past `capacity`. */
function remember(map: Map<string, Capture>, key: string, value: Capture, capacity: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= capacity) break;
    map.delete(oldest);
  }
}

/** The capture a CDXJ line of ours describes, or undefined for a line that is not one. */
function parseCaptureLine(line: string): Capture | undefined {
  const match = /^\S+ (\d{14}) (\{.*\})\s*$/.exec(line);
  if (match === null) return undefined;
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(match[2] as string) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { url, filename, digest, mime } = fields;
  if (typeof url !== "string" || typeof filename !== "string" || typeof digest !== "string") return undefined;
  const host = URL.canParse(url) ? new URL(url).host : undefined;
  if (host === undefined) return undefined;
  return {
    url,
    host,
    timestamp: match[1] as string,
    filename,
    digest,
    revisit: mime === "warc/revisit",
    line: line.endsWith("\n") ? line : `${line}\n`,
  };
}
