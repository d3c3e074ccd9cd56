/** One request seen by the hostile web. */
export interface HostileRequest {
  readonly host: string;
  readonly url: string;
  /** `performance.now()` when the request head arrived. */
  readonly beganAtMs: number;
  /** When the response ended or the connection closed; undefined while in flight. */
  endedAtMs: number | undefined;
}

/** Two requests to one host in flight at the same time. */
export interface HostileOverlap {
  readonly host: string;
  readonly first: string;
  readonly second: string;
}

/**
 * A client may open its next connection to a host a moment before this server has read the close of the
 * previous one (a request it aborted); a request counts as overlapping only if the earlier one is still
 * open this long after the later one began.
 */
const OVERLAP_GRACE_MS = 50;

/**
 * What the hostile web served: counts per URL, every request, and requests that overlapped on one host
 * (a polite crawler never has two requests in flight to one host).
 */
export class HostileTraffic {
  readonly #requests: HostileRequest[] = [];
  readonly #inFlight = new Map<string, Set<HostileRequest>>();
  readonly #overlaps: HostileOverlap[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();

  /** Records the start of a request; call {@link end} with the result when it is over. */
  begin(host: string, url: string): HostileRequest {
    const request: HostileRequest = { host, url, beganAtMs: performance.now(), endedAtMs: undefined };
    this.#requests.push(request);
    let open = this.#inFlight.get(host);
    if (open === undefined) {
      open = new Set();
      this.#inFlight.set(host, open);
    }
    if (open.size > 0) {
      const earlier = [...open];
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        for (const other of earlier) {
          if (other.endedAtMs === undefined) this.#overlaps.push({ host, first: other.url, second: url });
        }
      }, OVERLAP_GRACE_MS);
      timer.unref();
      this.#timers.add(timer);
    }
    open.add(request);
    return request;
  }

  /** Marks `request` over (idempotent). */
  end(request: HostileRequest): void {
    if (request.endedAtMs !== undefined) return;
    request.endedAtMs = performance.now();
    this.#inFlight.get(request.host)?.delete(request);
  }

  /** Every request so far, in arrival order. */
  get requests(): readonly HostileRequest[] {
    return this.#requests;
  }

  /** Requests that overlapped another request to the same host. */
  get overlaps(): readonly HostileOverlap[] {
    return this.#overlaps;
  }

  /** How many times each URL was requested. */
  servedCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { url } of this.#requests) counts.set(url, (counts.get(url) ?? 0) + 1);
    return counts;
  }

  /** The URLs requested from `host`, in order (repeats included). */
  urlsOf(host: string): string[] {
    return this.#requests.filter((request) => request.host === host).map((request) => request.url);
  }

  /** Cancels pending overlap checks. */
  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}
