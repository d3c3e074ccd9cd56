/**
 * Which hosts' crawl this agent holds. Each host's crawl is held by one agent at a time: the holder is
 * the only one that may send the host a request, and it passes the crawl on (with the URLs it has done
 * there) to the next owner that claims it, or pushes it to the next owner when it leaves. Owning a host
 * (the consistent hashing says so) is not enough to crawl it: while views differ, two agents may both
 * think they own it, but only one holds it. Kept in memory: a restarted agent holds nothing and claims
 * its hosts again.
 */
export class CrawlTenure {
  private readonly held = new Set<string>();
  /** Hosts this agent passed on in this life, and to whom. */
  private readonly passed = new Map<string, string>();

  /** `onPass` is told each time a host's crawl is passed on (its URLs waiting here stop waiting). */
  constructor(private readonly onPass: () => void = () => {}) {}

  /** True while this agent holds `host`'s crawl. */
  holds(host: string): boolean {
    return this.held.has(host);
  }

  /** This agent holds `host`'s crawl from now on (claimed, handed over, or never held by anyone). */
  take(host: string): void {
    this.held.add(host);
    this.passed.delete(host);
  }

  /** This agent passed `host`'s crawl to agent `to`. */
  pass(host: string, to: string): void {
    this.held.delete(host);
    this.passed.set(host, to);
    this.onPass();
  }

  /** The agent this one passed `host`'s crawl to, in this life; undefined when it did not. */
  passedTo(host: string): string | undefined {
    return this.passed.get(host);
  }

  /** Hosts whose crawl this agent holds. */
  heldHosts(): string[] {
    return [...this.held];
  }
}
