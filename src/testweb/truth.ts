import robotsParserModule from "robots-parser";
import { invalidArgument } from "../errors.js";
import { GraphRecorder, type LinkGraph } from "./link-graph.js";
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
      const oddUrl = `${hostOrigin(model, host.name, port)}${path}`;
      graph?.linkOther(`${h} ${path}`, oddUrl);
      if (allowed(h, path)) {
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
