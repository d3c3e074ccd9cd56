import type { UrlTraits } from "../storage/index.js";

/** A link this agent queued for one of its own hosts, found on a page of another host. */
export interface FoundLink {
  readonly url: string;
  readonly depth: number;
  /** The host of `url` (this agent's when it was found). */
  readonly host: string;
  readonly traits: UrlTraits;
}

/** @default of how many links {@link LinkOrigins} keeps at most. */
export const DEFAULT_MAX_FOUND_LINKS = 100_000;

/**
 * The links this agent queued for its own hosts from pages of other hosts, by the host of the page they
 * were found on, until each is done or handed over. A host handed to another agent goes with its done
 * set, so a page of it fetched here is never fetched again; a link found there and still waiting here
 * is then known to this agent alone, and its crash would lose it (its page, done, is not fetched again
 * to find it anew). Handing a host over, the agent gives such links to another agent to keep
 * ({@link take}), and notes them by that keeper ({@link keep}): should the keeper leave or crash, those
 * still waiting go to another ({@link takeKeptBy}). At most `maxLinks` are kept (past it, links are
 * counted, not kept): the memory stays bounded in a big crawl, and beyond the bound a crash right after
 * a hand-over may lose links as before.
 */
export class LinkOrigins {
  /** The links noted, by group (`found:<host>` or `kept:<agent>`), by URL. */
  private readonly groups = new Map<string, Map<string, FoundLink>>();
  /** The group of each link noted. */
  private readonly groupOf = new Map<string, string>();
  /** Links not kept: past the bound. */
  beyondBound = 0;

  /** `onFull`: told once, when the first link past `maxLinks` is only counted (for a warning). */
  constructor(
    private readonly maxLinks = DEFAULT_MAX_FOUND_LINKS,
    private readonly onFull?: (maxLinks: number) => void,
  ) {}

  /** Links kept now. */
  get size(): number {
    return this.groupOf.size;
  }

  /** `link` was queued here, found on a page of `source` (another host). */
  note(source: string, link: FoundLink): void {
    this.add(`found:${source}`, link);
  }

  /** `url` left its queue here: done, or handed to its host's new owner. */
  settled(url: string): void {
    const group = this.groupOf.get(url);
    if (group === undefined) return;
    this.groupOf.delete(url);
    const links = this.groups.get(group);
    links?.delete(url);
    if (links?.size === 0) this.groups.delete(group);
  }

  /** The links found on `source`'s pages still waiting here (or in flight), forgotten here. */
  take(source: string): FoundLink[] {
    return this.takeGroup(`found:${source}`);
  }

  /** `links`, taken here, were given to agent `keeper` to keep: noted by it until each leaves its queue. */
  keep(keeper: string, links: Iterable<FoundLink>): void {
    for (const link of links) this.add(`kept:${keeper}`, link);
  }

  /** The links given to agent `keeper` to keep and still waiting here, forgotten here (it is gone). */
  takeKeptBy(keeper: string): FoundLink[] {
    return this.takeGroup(`kept:${keeper}`);
  }

  /** Every link noted, forgotten here (this agent leaves: see `entrustToKeepers`). */
  takeAll(): FoundLink[] {
    const links = [...this.groups.values()].flatMap((group) => [...group.values()]);
    this.groups.clear();
    this.groupOf.clear();
    return links;
  }

  private add(group: string, link: FoundLink): void {
    if (this.groupOf.has(link.url)) return;
    if (this.groupOf.size >= this.maxLinks) {
      if (this.beyondBound++ === 0) this.onFull?.(this.maxLinks);
      return;
    }
    this.groupOf.set(link.url, group);
    let links = this.groups.get(group);
    if (links === undefined) {
      links = new Map();
      this.groups.set(group, links);
    }
    links.set(link.url, link);
  }

  private takeGroup(group: string): FoundLink[] {
    const links = this.groups.get(group);
    if (links === undefined) return [];
    this.groups.delete(group);
    for (const url of links.keys()) this.groupOf.delete(url);
    return [...links.values()];
  }
}
