/**
 * Hosts waiting for a visit slot, longest queue first. A polite crawl visits each host one request at a
 * time, so its end is set by its biggest hosts: starting them first (longest-processing-time first)
 * ends it soonest, where round robin would leave the biggest host crawling alone long after the others.
 *
 * Hosts are kept in classes by the power of two of their queue length, first come, first served within a
 * class: every operation costs O(1) whatever the number of hosts, the host served is within a factor of
 * two of the longest queue, and hosts of one class take turns. A host not visited yet ranks as if it
 * held `unvisitedRank` URLs: its queue (often one home page) says nothing of its size until its first
 * pages are fetched, so it goes before every host known to hold about that many or fewer, and the
 * biggest host of a crawl is found no later than the others; but a host known to hold more (at least
 * twice as many) goes first, or the hosts discovered all through a crawl would keep the biggest one
 * waiting until nearly the end.
 */
export class ReadyHosts {
  /** Hosts not visited yet, in arrival order: served before every class. */
  private readonly unvisited = new Set<string>();
  /** Index k holds the hosts with 2^k to 2^(k+1) − 1 queued URLs (k = 0 for 0 or 1), in arrival order. */
  private readonly classes: Set<string>[] = [];
  private readonly classOf = new Map<string, number>();
  /** No class above this index holds a host. */
  private top = -1;
  /** Classes above this one go before unvisited hosts. */
  private readonly unvisitedClass: number;

  /**
   * @param unvisitedRank the queue length a host not visited yet counts as (the scheduler passes a
   *   visit's quantum: a host with more than one quantum's worth left is known to be longer)
   */
  constructor(unvisitedRank: number) {
    this.unvisitedClass = queueClass(unvisitedRank);
  }

  /** Hosts waiting. */
  get size(): number {
    return this.classOf.size + this.unvisited.size;
  }

  /** True when `host` is waiting. */
  has(host: string): boolean {
    return this.classOf.has(host) || this.unvisited.has(host);
  }

  /** Adds `host`, never visited yet: it is served before any host of a class. */
  addUnvisited(host: string): void {
    if (!this.classOf.has(host)) this.unvisited.add(host);
  }

  /**
   * Adds `host` with `queued` URLs, or moves it to the class of its new length when it waits already
   * (a queue that grew while it waited); a host that keeps its class keeps its place.
   */
  set(host: string, queued: number): void {
    // An unvisited host keeps its place at the front whatever its queue.
    if (this.unvisited.has(host)) return;
    const target = queueClass(queued);
    const current = this.classOf.get(host);
    if (current === target) return;
    if (current !== undefined) this.classes[current]?.delete(host);
    this.classOf.set(host, target);
    let members = this.classes[target];
    if (members === undefined) {
      for (let k = this.classes.length; k <= target; k++) this.classes.push(new Set());
      members = this.classes[target] as Set<string>;
    }
    members.add(host);
    if (target > this.top) this.top = target;
  }

  /**
   * Removes and returns the first host of the longest class when it is longer than an unvisited host
   * counts, or else the first unvisited host, or else the first host of the longest class; undefined
   * when none waits.
   */
  shift(): string | undefined {
    if (this.unvisited.size > 0) {
      this.settleTop();
      if (this.top <= this.unvisitedClass) {
        const first = this.unvisited.values().next().value as string;
        this.unvisited.delete(first);
        return first;
      }
    }
    return this.shiftLongest();
  }

  /** Lowers {@link top} past empty classes. */
  private settleTop(): void {
    while (this.top >= 0 && (this.classes[this.top] as Set<string>).size === 0) this.top--;
  }

  private shiftLongest(): string | undefined {
    for (; this.top >= 0; this.top--) {
      const members = this.classes[this.top] as Set<string>;
      const first = members.values().next();
      if (first.done) continue;
      members.delete(first.value);
      this.classOf.delete(first.value);
      return first.value;
    }
    return undefined;
  }

  /** Removes every host. */
  clear(): void {
    for (const members of this.classes) members.clear();
    this.classOf.clear();
    this.unvisited.clear();
    this.top = -1;
  }

  /** Unvisited hosts waiting. */
  get unvisitedHosts(): number {
    return this.unvisited.size;
  }

  /** The fewest queued URLs a host of the longest class has (0 when none is in a class). */
  get longestClassFloor(): number {
    for (let k = this.top; k >= 0; k--)
      if ((this.classes[k] as Set<string>).size > 0) return k === 0 ? 1 : 2 ** k;
    return 0;
  }
}

/** The class of a queue of `queued` URLs: ⌊log2(queued)⌋, 0 for 0 or 1. */
export function queueClass(queued: number): number {
  return queued <= 1 ? 0 : 31 - Math.clz32(Math.min(queued, 0x7fffffff));
}
