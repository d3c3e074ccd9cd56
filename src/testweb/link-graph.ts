import { type HostInfo, hostOrigin, type WebModel } from "./model.js";

/**
 * The link graph of a correct crawl of the test web, for a simulated crawl: recorded as
 * {@link computeTruth} walks the web.
 */

/**
 * What a correct crawl of the test web meets, as a graph for a simulated crawl: every URL the crawler
 * discovers and routes (fetched or not), and for each fetched one the distinct URLs it leads the crawler
 * to — a page's followed links, a redirect's target, a sitemap's listed pages. Same-host links past the
 * depth limit are left out (a crawler drops them where it finds them).
 */
export interface LinkGraph {
  /** Each node's canonical URL: the URLs of {@link Truth.urls} first, in the same order. */
  readonly urls: readonly string[];
  /** Nodes `0 … fetchedCount − 1` are fetched; the rest a crawler routes but does not fetch (robots.txt
   * disallows them, their host is gone or its robots.txt unavailable). */
  readonly fetchedCount: number;
  /** Each node's host (an index of {@link hosts}). */
  readonly hostOf: Int32Array;
  /** Host names as URLs carry them (`name` or `name:port`), gone hosts included. */
  readonly hosts: readonly string[];
  /** Each host's `/sitemap.xml` node, which a crawler queues after its host's URLs known when it reads
   * the host's robots.txt; −1 if none. */
  readonly sitemapOf: Int32Array;
  /** The links of fetched node i are `linkTargets[linkStart[i] … linkStart[i + 1] − 1]`. */
  readonly linkStart: Int32Array;
  readonly linkTargets: Int32Array;
}

/**
 * Builds a {@link LinkGraph} as {@link computeTruth} walks the web: nodes keyed by what the walk knows
 * of a URL (`"host id"`), numbered as first met, renumbered at the end so that fetched URLs come first in
 * the truth's order.
 */
export class GraphRecorder {
  /** Node of each URL id of each model host (−1: none yet); the trap host's are in `otherIds`. */
  private readonly pageIds: Array<Int32Array | undefined>;
  private readonly otherIds = new Map<string, number>();
  private readonly urls: string[] = [];
  private readonly hostOfNode: number[] = [];
  /** Each node's index in the truth's URLs, or −1 while not fetched. */
  private readonly fetchedIndex: number[] = [];
  /** The graph's host of each model host, and of each gone host, once met. */
  private readonly hostOfModelHost: Int32Array;
  private readonly hostOfGone = new Map<number, number>();
  private readonly hostIds = new Map<string, number>();
  private readonly hostNames: string[] = [];
  /** The sitemap node of each model host, or −1. */
  private readonly sitemaps: Int32Array;
  private readonly sources: number[] = [];
  private readonly targets: number[] = [];
  /** The fetched node whose links are being walked, or −1 (seeds). */
  private source = -1;

  constructor(
    private readonly model: WebModel,
    private readonly port: number,
    private readonly trapHost: number,
  ) {
    this.pageIds = new Array(model.hosts.length);
    this.hostOfModelHost = new Int32Array(model.hosts.length).fill(-1);
    this.sitemaps = new Int32Array(model.hosts.length).fill(-1);
  }

  /** Links found from now on are page (h, id)'s. */
  enterPage(h: number, id: number): void {
    this.source = this.pageNode(h, id) ?? -1;
  }

  /** Links found from now on are host h's sitemap's; returns the previous page, for {@link leave}. */
  enterSitemap(h: number): number {
    const previous = this.source;
    this.source = this.sitemaps[h] as number;
    return previous;
  }

  leave(previous: number | undefined): void {
    this.source = previous ?? -1;
  }

  /** The walk met page (h, id) as a link of the current page. */
  linkPage(h: number, id: number, pathOf: (host: HostInfo, id: number) => string): void {
    let node = this.pageNode(h, id);
    if (node === undefined) {
      const host = this.model.hosts[h] as HostInfo;
      node = this.addNode(`${this.originOf(h)}${pathOf(host, id)}`, this.modelHost(h));
      if (h === this.trapHost) this.otherIds.set(`${h} ${id}`, node);
      else {
        let ids = this.pageIds[h];
        if (ids === undefined) {
          ids = new Int32Array(host.urlCount).fill(-1);
          this.pageIds[h] = ids;
        }
        ids[id] = node;
      }
    }
    this.edge(node);
  }

  /** The walk met gone host k's home page (named `name`) as a link of the current page. */
  linkGone(k: number, name: string): void {
    const key = `gone ${k}`;
    let node = this.otherIds.get(key);
    if (node === undefined) {
      const url = `${hostOrigin(this.model, name, this.port)}/`;
      let host = this.hostOfGone.get(k);
      if (host === undefined) {
        host = this.hostId(new URL(url).host);
        this.hostOfGone.set(k, host);
      }
      node = this.addNode(url, host);
      this.otherIds.set(key, node);
    }
    this.edge(node);
  }

  /** The walk met `url`, which names no page of the model (a seed), under `key`. */
  linkOther(key: string, url: string): void {
    let node = this.otherIds.get(key);
    if (node === undefined) {
      node = this.addNode(url, this.hostId(new URL(url).host));
      this.otherIds.set(key, node);
    }
    this.edge(node);
  }

  /** Page (h, id), met before, is fetched as the truth's URL `index`. */
  fetchedPage(h: number, id: number, index: number): void {
    const node = this.pageNode(h, id);
    if (node !== undefined) this.fetchedIndex[node] = index;
  }

  /** The URL met under `key` is fetched as the truth's URL `index`. */
  fetchedOther(key: string, index: number): void {
    const node = this.otherIds.get(key);
    if (node !== undefined) this.fetchedIndex[node] = index;
  }

  /** Host `h`'s `/sitemap.xml` (`url`) is fetched as the truth's URL `index`. */
  fetchedSitemap(h: number, url: string, index: number): void {
    const node = this.addNode(url, this.modelHost(h));
    this.fetchedIndex[node] = index;
    this.sitemaps[h] = node;
  }

  finish(fetchedCount: number): LinkGraph {
    const n = this.urls.length;
    const final = new Int32Array(n);
    let next = fetchedCount;
    for (let id = 0; id < n; id++) {
      const index = this.fetchedIndex[id] as number;
      final[id] = index >= 0 ? index : next++;
    }
    const urls = new Array<string>(n);
    const hostOf = new Int32Array(n);
    for (let id = 0; id < n; id++) {
      urls[final[id] as number] = this.urls[id] as string;
      hostOf[final[id] as number] = this.hostOfNode[id] as number;
    }
    // Each page's targets, distinct (a page names a URL once for a crawler), packed in page order.
    const byPage: number[][] = Array.from({ length: fetchedCount }, () => []);
    this.sources.forEach((source, k) => {
      byPage[final[source] as number]?.push(final[this.targets[k] as number] as number);
    });
    const linkStart = new Int32Array(fetchedCount + 1);
    const packed: number[] = [];
    byPage.forEach((targets, page) => {
      for (const target of new Set(targets)) packed.push(target);
      linkStart[page + 1] = packed.length;
    });
    const sitemapOf = new Int32Array(this.hostNames.length).fill(-1);
    for (const node of this.sitemaps) {
      if (node >= 0) sitemapOf[this.hostOfNode[node] as number] = final[node] as number;
    }
    const linkTargets = Int32Array.from(packed);
    return { urls, fetchedCount, hostOf, hosts: this.hostNames, sitemapOf, linkStart, linkTargets };
  }

  private pageNode(h: number, id: number): number | undefined {
    if (h === this.trapHost) return this.otherIds.get(`${h} ${id}`);
    const node = this.pageIds[h]?.[id];
    return node === undefined || node < 0 ? undefined : node;
  }

  private addNode(url: string, host: number): number {
    const node = this.urls.length;
    this.urls.push(url);
    this.hostOfNode.push(host);
    this.fetchedIndex.push(-1);
    return node;
  }

  private edge(target: number): void {
    if (this.source >= 0) {
      this.sources.push(this.source);
      this.targets.push(target);
    }
  }

  private originOf(h: number): string {
    return hostOrigin(this.model, (this.model.hosts[h] as HostInfo).name, this.port);
  }

  /** The graph's host of model host `h`. */
  private modelHost(h: number): number {
    let host = this.hostOfModelHost[h] as number;
    if (host < 0) {
      host = this.hostId(new URL(this.originOf(h)).host);
      this.hostOfModelHost[h] = host;
    }
    return host;
  }

  private hostId(host: string): number {
    let id = this.hostIds.get(host);
    if (id === undefined) {
      id = this.hostNames.length;
      this.hostIds.set(host, id);
      this.hostNames.push(host);
    }
    return id;
  }
}
