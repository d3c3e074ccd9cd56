import robotsParserModule from "robots-parser";
import { invalidArgument } from "../errors.js";
import { forEachLink, isMetaNofollow, redirectHops, redirectTarget } from "./links.js";
import { type HostInfo, hostOrigin, type WebModel } from "./model.js";
import { sameHostLinkNamesHost } from "./render.js";
import { SITEMAP_PATH, sitemapIds } from "./responses.js";
import { robotsAnswer } from "./robots-txt.js";
import {
  aliasTarget,
  idOfPath,
  Kind,
  kindOf,
  MAX_REDIRECT_HOPS,
  normalizeEscapes,
  pathOf,
  trapIdOfPath,
  trapPathOf,
} from "./url-space.js";

/** The crawler limits the ground truth assumes. */
export interface TruthLimits {
  /** Largest per-host depth fetched (seeds and cross-host links are depth 0). */
  readonly maxDepth: number;
  /** Largest number of fetches per host, robots.txt excluded. */
  readonly maxPagesPerHost: number;
  /** User agent robots.txt is evaluated for (with robots-parser). */
  readonly userAgent: string;
}

/** What a correct crawler does on the test web. */
export interface Truth {
  /** Canonical URLs a correct crawler fetches (robots.txt excluded), in discovery order. */
  readonly urls: string[];
  /** Distinct discovered URLs not fetched because robots.txt disallows them. */
  readonly robotsDisallowed: number;
  /** Linked host names absent from the hosts file, sorted. */
  readonly unresolvableHosts: string[];
  /** Hosts where `maxPagesPerHost` binds: the truth there (and past there) is inexact. Sorted. */
  readonly cappedHosts: string[];
  /** False when `maxDepth` is below {@link WebModel.exactDepth}: depth may bind on normal hosts. */
  readonly depthExact: boolean;
  /**
   * With {@link TruthOptions.inDegree}: each URL of {@link urls} with the number of links to it on the
   * pages of the truth (redirects count as links; sitemaps do not) — importance as Cho and
   * Garcia-Molina's quality metric ranks pages.
   */
  readonly inDegree?: ReadonlyMap<string, number>;
  /** With {@link TruthOptions.linkGraph}: the crawl's link graph. */
  readonly linkGraph?: LinkGraph;
}

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
  /** Each host's `/sitemap.xml` node, which a crawler queues last on its first visit; −1 if none. */
  readonly sitemapOf: Int32Array;
  /** The links of fetched node i are `linkTargets[linkStart[i] … linkStart[i + 1] − 1]`. */
  readonly linkStart: Int32Array;
  readonly linkTargets: Int32Array;
}

/** What {@link computeTruth} computes besides the URLs. */
export interface TruthOptions {
  /** Count each URL's in-links ({@link Truth.inDegree}). @default false */
  readonly inDegree?: boolean;
  /** Record the link graph ({@link Truth.linkGraph}). @default false */
  readonly linkGraph?: boolean;
}

type RobotsParser = typeof robotsParserModule.default;
// CommonJS package typed as an ES default export: under NodeNext the default import is the function
// itself at run time while TypeScript sees the namespace, so accept either shape.
const robotsParser: RobotsParser =
  typeof robotsParserModule === "function"
    ? (robotsParserModule as RobotsParser)
    : robotsParserModule.default;

type RobotsCheck = (path: string) => boolean;

function robotsCheck(model: WebModel, host: HostInfo, port: number, userAgent: string): RobotsCheck {
  const answer = robotsAnswer(host);
  if (answer.status >= 500) return () => false;
  if (answer.status >= 400) return () => true;
  const origin = hostOrigin(model, host.name, port);
  const robots = robotsParser(`${origin}/robots.txt`, answer.body);
  return (path) => robots.isAllowed(origin + path, userAgent) !== false;
}

function checkLimits(limits: TruthLimits): void {
  if (!Number.isInteger(limits.maxDepth) || limits.maxDepth < 0) {
    invalidArgument(`computeTruth: maxDepth must be a non-negative integer, got ${limits.maxDepth}`);
  }
  if (!Number.isInteger(limits.maxPagesPerHost) || limits.maxPagesPerHost < 1) {
    invalidArgument(
      `computeTruth: maxPagesPerHost must be a positive integer, got ${limits.maxPagesPerHost}`,
    );
  }
}

/**
 * Every URL reachable from `seeds` (default: the web's seed home pages) under the crawler's rules:
 * links per the parsing rules, redirects as discovered links, per-host depth, robots.txt, hosts file.
 */
export function computeTruth(
  model: WebModel,
  port: number,
  limits: TruthLimits,
  seeds?: string[],
  options: TruthOptions = {},
): Truth {
  checkLimits(limits);
  const { hosts, trapHost } = model;
  // One bit per URL id per host; the unbounded trap host gets a set (depth bounds its size).
  const seen: Array<Uint8Array | undefined> = new Array(hosts.length);
  const trapSeen = new Set<number>();
  const oddSeen = new Set<string>();
  const robots: Array<RobotsCheck | undefined> = new Array(hosts.length);
  const fetched = new Int32Array(hosts.length);
  const gone = new Set<string>();
  const urls: string[] = [];
  // With in-degrees: links counted by target ("host id"), and each URL's target, in step with `urls`.
  const inLinks = options.inDegree ? new Map<string, number>() : undefined;
  const targets: string[] = [];
  const queueHost: number[] = [];
  const queueId: number[] = [];
  const queueDepth: number[] = [];
  let robotsDisallowed = 0;
  const graph = options.linkGraph ? new GraphRecorder(model, port, trapHost) : undefined;

  const pathOfId = (host: HostInfo, id: number) =>
    (host.kind === "trap" ? trapPathOf(id) : pathOf(host, id)) as string;

  /** Marks (h, id) seen; false when it already was. */
  const markSeen = (h: number, id: number): boolean => {
    if (h === trapHost) {
      if (trapSeen.has(id)) return false;
      trapSeen.add(id);
      return true;
    }
    let bits = seen[h];
    if (bits === undefined) {
      bits = new Uint8Array(((hosts[h] as HostInfo).urlCount + 7) >>> 3);
      seen[h] = bits;
    }
    const mask = 1 << (id & 7);
    if (((bits[id >>> 3] as number) & mask) !== 0) return false;
    bits[id >>> 3] = (bits[id >>> 3] as number) | mask;
    return true;
  };

  const allowed = (h: number, path: string): boolean => {
    let check = robots[h];
    if (check === undefined) {
      check = robotsCheck(model, hosts[h] as HostInfo, port, limits.userAgent);
      robots[h] = check;
    }
    return check(path);
  };

  /**
   * The host's first URL was queued: the crawler visits it, reads its robots.txt and, as no test web
   * robots.txt names a sitemap, tries `/sitemap.xml`, which robots.txt may disallow. Most hosts answer
   * 404; those with hidden pages serve a sitemap listing them (with the home page and first article),
   * which the crawler queues at depth 1. A mirror's sitemap lists its host's URLs, not its own: a
   * crawler drops them.
   */
  const visited = new Uint8Array(hosts.length);
  const visit = (h: number) => {
    if (visited[h] === 1) return;
    visited[h] = 1;
    const host = hosts[h] as HostInfo;
    if (robotsAnswer(host).status >= 500) return;
    if (!allowed(h, SITEMAP_PATH)) {
      robotsDisallowed++;
      return;
    }
    fetched[h] = (fetched[h] as number) + 1;
    const sitemapUrl = `${hostOrigin(model, host.name, port)}${SITEMAP_PATH}`;
    graph?.fetchedSitemap(h, sitemapUrl, urls.length);
    urls.push(sitemapUrl);
    if (inLinks) targets.push("");
    if (host.kind === "normal" && host.hidden > 0) {
      const page = graph?.enterSitemap(h);
      for (const id of sitemapIds(host)) discover(h, id, 1);
      graph?.leave(page);
    }
  };

  const discover = (h: number, id: number, depth: number) => {
    if (h < 0) {
      const name = model.goneHosts[-1 - h] as string;
      gone.add(name);
      graph?.linkGone(-1 - h, name);
      return;
    }
    // Too deep: not queued and not remembered, as in a crawler that checks depth at discovery.
    if (depth > limits.maxDepth) return;
    const host = hosts[h] as HostInfo;
    graph?.linkPage(h, id, pathOfId);
    if (!markSeen(h, id)) return;
    visit(h);
    const path = pathOfId(host, id);
    if (!allowed(h, path)) {
      robotsDisallowed++;
      return;
    }
    graph?.fetchedPage(h, id, urls.length);
    fetched[h] = (fetched[h] as number) + 1;
    urls.push(`${hostOrigin(model, host.name, port)}${path}`);
    if (inLinks) targets.push(`${h} ${id}`);
    queueHost.push(h);
    queueId.push(id);
    queueDepth.push(depth);
  };

  for (const seed of seeds ??
    model.seedHosts.map((h) => `${hostOrigin(model, hosts[h]?.name ?? "", port)}/`)) {
    const url = new URL(seed);
    const h = model.hostIndexByName.get(url.hostname) ?? -1;
    if (h < 0) {
      gone.add(url.hostname);
      graph?.linkOther(`seed ${seed}`, seed);
      continue;
    }
    const host = hosts[h] as HostInfo;
    const path = normalizeEscapes(url.pathname + url.search);
    const id = host.kind === "trap" ? trapIdOfPath(path) : idOfPath(host, path);
    if (id >= 0) {
      discover(h, id, 0);
    } else if (!oddSeen.has(`${h} ${path}`)) {
      // A seed naming no page: fetched once (a 404), leads nowhere.
      oddSeen.add(`${h} ${path}`);
      visit(h);
      if (allowed(h, path)) {
        const oddUrl = `${hostOrigin(model, host.name, port)}${path}`;
        graph?.linkOther(`${h} ${path}`, oddUrl);
        graph?.fetchedOther(`${h} ${path}`, urls.length);
        fetched[h] = (fetched[h] as number) + 1;
        urls.push(oddUrl);
        if (inLinks) targets.push("");
      } else robotsDisallowed++;
    }
  }

  for (let head = 0; head < queueHost.length; head++) {
    const h = queueHost[head] as number;
    const id = queueId[head] as number;
    const depth = queueDepth[head] as number;
    graph?.enterPage(h, id);
    // A mirror serves another host's bytes: links are that host's, and those naming no host (relative
    // ones, and root-relative ones without an absolute <base>) stay on the mirror.
    const host = hosts[hosts[h]?.mirrorOf ?? h] as HostInfo;
    const onMirror = host.index !== h;
    const follow = (th: number, tid: number) => {
      if (inLinks) {
        const target = `${th} ${tid}`;
        inLinks.set(target, (inLinks.get(target) ?? 0) + 1);
      }
      discover(th, tid, th === h ? depth + 1 : 0);
    };
    // An alias serves another page's bytes: that page's links.
    const page = host.kind === "normal" && kindOf(host, id) === Kind.Alias ? aliasTarget(host, id) : id;
    if (host.kind === "normal") {
      const kind = kindOf(host, page);
      if (kind === Kind.Redirect) {
        const offset = id - host.redirect0;
        const k = Math.floor(offset / MAX_REDIRECT_HOPS);
        const hop = (offset % MAX_REDIRECT_HOPS) + 1;
        if (hop > redirectHops(model, host, k)) continue;
        if (hop > 1) follow(h, id - 1);
        else {
          // A same-host Location is root-relative: on a mirror, it stays there.
          const target = redirectTarget(model, host, k);
          follow(target.host === host.index ? h : target.host, target.id);
        }
        continue;
      }
      if (kind === Kind.Missing || kind === Kind.Media) continue;
      if (kind === Kind.Article && isMetaNofollow(model, host, page - host.article0)) continue;
    }
    forEachLink(model, host.index, page, (th, tid, nofollow, slot, role) => {
      if (nofollow) return;
      const stays = onMirror && th === host.index && !sameHostLinkNamesHost(model, host, page, slot, role);
      follow(stays ? h : th, tid);
    });
  }

  const cappedHosts: string[] = [];
  for (let h = 0; h < hosts.length; h++) {
    if ((fetched[h] as number) > limits.maxPagesPerHost) cappedHosts.push((hosts[h] as HostInfo).name);
  }
  return {
    urls,
    robotsDisallowed,
    unresolvableHosts: [...gone].sort(),
    cappedHosts: cappedHosts.sort(),
    depthExact: limits.maxDepth >= model.exactDepth,
    ...(inLinks
      ? { inDegree: new Map(urls.map((url, i) => [url, inLinks.get(targets[i] as string) ?? 0])) }
      : {}),
    ...(graph ? { linkGraph: graph.finish(urls.length) } : {}),
  };
}

/**
 * Builds a {@link LinkGraph} as {@link computeTruth} walks the web: nodes keyed by what the walk knows
 * of a URL (`"host id"`), numbered as first met, renumbered at the end so that fetched URLs come first in
 * the truth's order.
 */
class GraphRecorder {
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
