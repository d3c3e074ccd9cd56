import { invalidArgument } from "../errors.js";
import {
  MIN_ARTICLES_PER_HOST,
  type ResolvedTestWebOptions,
  resolveTestWebOptions,
  type TestWebOptions,
} from "./options.js";
import { createRandom, hash4, unit } from "./prng.js";
import { buildTextPool, type TextPool } from "./text-pool.js";
import { type HostLayout, layoutHost, MAX_REDIRECT_HOPS } from "./url-space.js";

/**
 * How a host answers `/robots.txt`: 404 (`none`), rules for `*` (`rules`), rules for `*` plus a
 * `User-agent: ubicrawl` group (`rules-ubicrawl`), 403 (`forbidden`: allow all) or 503
 * (`unavailable`: disallow all).
 */
export type RobotsPolicy = "none" | "rules" | "rules-ubicrawl" | "forbidden" | "unavailable";

/** One existing host of the web: everything the server and the truth need, no per-page data. */
export interface HostInfo extends HostLayout {
  /** Position in {@link WebModel.hosts}. */
  readonly index: number;
  /** Lowercase host name, e.g. `h0042.ubi.test`. */
  readonly name: string;
  /** Loopback address in 127.1.0.0/16; a few hosts share one (virtual hosting). */
  readonly ip: string;
  /**
   * `trap` for the infinite calendar host (its layout fields are unused); `mirror` for a host that
   * serves another's responses byte for byte (its layout, robots and salt are that host's).
   */
  readonly kind: "normal" | "trap" | "mirror";
  /** For a mirror: the index of the host it mirrors. */
  readonly mirrorOf?: number;
  /** For a mirrored host: the index of its mirror (its home page links there). */
  readonly mirroredBy?: number;
  readonly robots: RobotsPolicy;
  /** `Crawl-delay` in the robots.txt groups, in seconds, when set. */
  readonly crawlDelaySeconds: number | undefined;
  /** robots.txt also disallows `/media/*.pdf$` (wildcard rule). */
  readonly disallowPdf: boolean;
  /** The home page links to the trap host's root. */
  readonly linksToTrap: boolean;
  /** Per-host hash salt. */
  readonly salt: number;
}

/** The whole synthetic web, derived from the options alone (pure, cheap: per-host data only). */
export interface WebModel {
  readonly options: ResolvedTestWebOptions;
  readonly seed: number;
  /** Normal hosts first (`h0000`…), then the trap host when enabled, then the mirrors. */
  readonly hosts: readonly HostInfo[];
  /** Indices of the mirror hosts, in order. */
  readonly mirrorHosts: readonly number[];
  /** Number of normal hosts (the trap host, if any, is at this index). */
  readonly normalHosts: number;
  /** Index of the trap host in {@link hosts}, or -1. */
  readonly trapHost: number;
  /** Names linked from pages but absent from the hosts file (e.g. `gone0003.ubi.test`). */
  readonly goneHosts: readonly string[];
  /** Hosts whose home pages are the seeds. */
  readonly seedHosts: readonly number[];
  /** The host answering robots.txt with 403, and the one answering 503. */
  readonly forbiddenRobotsHost: number;
  readonly unavailableRobotsHost: number;
  /** Sum of the normal hosts' id spaces (an upper bound on the URLs a crawler fetches there). */
  readonly totalUrls: number;
  /**
   * Depth reachable within a normal host from any entry page under a breadth-first per-host crawl:
   * with `maxDepth` at least this, depth never binds outside the trap host and the truth is exact.
   */
  readonly exactDepth: number;
  /** Cumulative weights of normal hosts as targets of cross-host links (popular hosts). */
  readonly crossWeights: Float64Array;
  readonly hostIndexByName: ReadonlyMap<string, number>;
  readonly text: TextPool;
  /** Addresses of rate-limited host groups, and the requests each takes per second (see `ipGroups`). */
  readonly rateLimits: ReadonlyMap<string, number>;
}

/** `scheme://name:port` of a host of `model` (the scheme upper-cased with `upper`, as some links write it). */
export function hostOrigin(model: WebModel, name: string, port: number, upper = false): string {
  const origin = `${model.options.scheme}://${name}:${port}`;
  return upper ? origin.toUpperCase() : origin;
}

/** Domain of every host name. */
export const DOMAIN = "ubi.test";
/** Name of mirror `k`. */
export function mirrorName(k: number): string {
  return `mirror${k}.${DOMAIN}`;
}
/** Name of the calendar trap host. */
export const TRAP_HOST_NAME = `calendar.${DOMAIN}`;

/** Share of pages, beyond articles, in a host's id space (sections, lists, dirt): calibrates `pages`. */
const URLS_PER_ARTICLE = 1.2;
const PARETO_ALPHA = 1.2;

function pad(index: number, width: number): string {
  return String(index).padStart(width, "0");
}

/** Address number `k` in 127.1.0.0/16, skipping .0 and .255 in the last octet. */
function loopbackAddress(k: number): string {
  return `127.1.${Math.floor(k / 254)}.${1 + (k % 254)}`;
}

/** Heavy-tailed article counts summing to about `total`, clamped to [min, max]. */
function hostSizes(random: () => number, hosts: number, total: number, min: number, max: number): number[] {
  return fitSizes(paretoDraws(random, hosts), total, min, max);
}

/** `hosts` Pareto(1, {@link PARETO_ALPHA}) draws: the hosts' relative sizes. */
function paretoDraws(random: () => number, hosts: number): number[] {
  return Array.from({ length: hosts }, () => (1 - random()) ** (-1 / PARETO_ALPHA));
}

/** `raw` scaled so that, rounded and clamped to [min, max], they sum to about `total`. */
function fitSizes(raw: readonly number[], total: number, min: number, max: number): number[] {
  const sizesAt = (scale: number) => raw.map((x) => Math.min(max, Math.max(min, Math.round(x * scale))));
  const sum = (sizes: number[]) => sizes.reduce((a, b) => a + b, 0);
  // The clamped sum grows with the scale: bisect for the scale that hits the total.
  let low = 0;
  let high = (total / raw.length) * 2;
  while (sum(sizesAt(high)) < total && high < 1e12) high *= 2;
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (sum(sizesAt(mid)) < total) low = mid;
    else high = mid;
  }
  return sizesAt(high);
}

/**
 * As {@link hostSizes} (the same draws), but the host of the largest draw gets `percent` % of `total`
 * and the others share the rest, each in [min, min(max, that host's size)].
 */
function sizesWithBiggest(
  random: () => number,
  hosts: number,
  total: number,
  min: number,
  max: number,
  percent: number,
): number[] {
  const raw = paretoDraws(random, hosts);
  const biggest = Math.round((total * percent) / 100);
  const rest = total - biggest;
  const cap = Math.min(max, biggest);
  if (biggest < min || rest < (hosts - 1) * min || rest > (hosts - 1) * cap) {
    invalidArgument(
      `testweb: biggestHostPercent ${percent} leaves ${rest} of ${total} articles to ${hosts - 1} hosts ` +
        `of ${min} to ${cap} articles each`,
    );
  }
  let top = 0;
  for (let i = 1; i < hosts; i++) if ((raw[i] as number) > (raw[top] as number)) top = i;
  const sizes = fitSizes(
    raw.filter((_, i) => i !== top),
    rest,
    min,
    cap,
  );
  sizes.splice(top, 0, biggest);
  return sizes;
}

/** Fisher–Yates permutation of 0..n-1. */
function permutation(random: () => number, n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

/** Builds the web for `options`: pure and deterministic, no I/O; cheap even for 1,000,000 pages. */
export function buildModel(options: TestWebOptions = {}): WebModel {
  const resolved = resolveTestWebOptions(options);
  const { seed, hosts: count } = resolved;
  const random = createRandom(seed);
  const width = Math.max(4, String(count - 1).length);
  const articles = Math.round(resolved.pages / URLS_PER_ARTICLE);
  const sizes =
    resolved.biggestHostPercent === undefined
      ? hostSizes(random, count, articles, MIN_ARTICLES_PER_HOST, resolved.maxArticlesPerHost)
      : sizesWithBiggest(
          random,
          count,
          articles,
          MIN_ARTICLES_PER_HOST,
          resolved.maxArticlesPerHost,
          resolved.biggestHostPercent,
        );

  // Roles by a seeded permutation: two robots specials, then guaranteed rule hosts and the seeds.
  const order = permutation(random, count);
  const role = new Map<number, RobotsPolicy>([
    [order[0] as number, "forbidden"],
    [order[1] as number, "unavailable"],
  ]);
  if (count > 2) role.set(order[2] as number, "rules-ubicrawl");
  if (count > 3) role.set(order[3] as number, "rules");
  const seedHosts = order.slice(2, 2 + resolved.seedCount);

  // Virtual hosting: about `sharedAddressPercent` of hosts reuse the previous host's address (at least
  // one pair unless none should). One draw a host whatever the share, so the rest of the web stays.
  const shared = resolved.sharedAddressPercent / 100;
  const shares = Array.from({ length: count }, (_, i) => i > 0 && random() < shared);
  if (count >= 4 && shared > 0 && !shares.includes(true)) shares[1] = true;

  // Shared hosting: the first hosts in groups on one address each (`ipGroups`).
  const groupOf: number[] = [];
  for (const [g, group] of resolved.ipGroups.entries()) for (let i = 0; i < group.hosts; i++) groupOf.push(g);
  const groupIps: string[] = [];
  const rateLimits = new Map<string, number>();
  /** Groups whose Crawl-delay host is chosen already. */
  const delayAsked = new Set<number>();

  const hosts: HostInfo[] = [];
  const hostIndexByName = new Map<string, number>();
  let addresses = 0;
  let lastIp = "";
  for (let index = 0; index < count; index++) {
    const salt = hash4(seed, index, 0x5a17, 0);
    const u = unit(hash4(seed, index, 0x0b07, 1));
    let robots = role.get(index);
    const group = groupOf[index];
    const groupDelayS = group === undefined ? undefined : resolved.ipGroups[group]?.crawlDelaySeconds;
    const asksGroupDelay =
      groupDelayS !== undefined && robots === undefined && group !== undefined && !delayAsked.has(group);
    if (asksGroupDelay) delayAsked.add(group);
    if (asksGroupDelay) robots = "rules";
    if (robots === undefined) robots = u < 0.1 ? "rules-ubicrawl" : u < 0.25 ? "rules" : "none";
    const ruled = robots === "rules" || robots === "rules-ubicrawl";
    let ip: string;
    if (group !== undefined) {
      ip = groupIps[group] ??= loopbackAddress(addresses++);
      const limit = resolved.ipGroups[group]?.requestsPerSecond;
      if (limit !== undefined) rateLimits.set(ip, limit);
    } else {
      // A host after a group does not join it.
      ip = shares[index] && groupOf[index - 1] === undefined ? lastIp : loopbackAddress(addresses++);
    }
    lastIp = ip;
    const name = `h${pad(index, width)}.${DOMAIN}`;
    hostIndexByName.set(name, index);
    hosts.push({
      ...layoutHost(
        sizes[index] as number,
        unit(hash4(seed, index, 0xf4a3, 2)) < 0.3,
        // About one host in eight has a sitemap listing pages no link reaches.
        unit(hash4(seed, index, 0x517e, 6)) < 0.125
          ? Math.min(25, Math.max(3, Math.round((sizes[index] as number) * 0.05)))
          : 0,
      ),
      index,
      name,
      ip,
      kind: "normal",
      robots,
      crawlDelaySeconds: asksGroupDelay
        ? groupDelayS
        : ruled && unit(hash4(seed, index, 0xde1a, 3)) < 0.5
          ? 0.01
          : undefined,
      disallowPdf: ruled && unit(hash4(seed, index, 0x0bdf, 4)) < 0.5,
      linksToTrap: resolved.trap && (index === seedHosts[0] || unit(hash4(seed, index, 0x7a1, 5)) < 0.02),
      salt,
    });
  }

  let trapHost = -1;
  if (resolved.trap) {
    trapHost = hosts.length;
    hostIndexByName.set(TRAP_HOST_NAME, trapHost);
    hosts.push({
      ...layoutHost(5, false),
      index: trapHost,
      name: TRAP_HOST_NAME,
      ip: loopbackAddress(addresses++),
      kind: "trap",
      robots: "none",
      crawlDelaySeconds: undefined,
      disallowPdf: false,
      linksToTrap: false,
      salt: hash4(seed, trapHost, 0x5a17, 0),
    });
  }

  // Mirrors of the smallest ordinary hosts (cheap to crawl twice), each on an address of its own.
  const special = new Set([order[0], order[1], ...seedHosts]);
  const mirrored = hosts
    .filter((host) => host.kind === "normal" && !special.has(host.index))
    .sort((a, b) => a.urlCount - b.urlCount || a.index - b.index)
    .slice(0, resolved.mirrors)
    .map((host) => host.index)
    .sort((a, b) => a - b);
  const mirrorHosts: number[] = [];
  for (const [k, of] of mirrored.entries()) {
    const original = hosts[of] as HostInfo;
    const index = hosts.length;
    const name = mirrorName(k);
    hostIndexByName.set(name, index);
    hosts.push({ ...original, index, name, ip: loopbackAddress(addresses++), kind: "mirror", mirrorOf: of });
    hosts[of] = { ...original, mirroredBy: index };
    mirrorHosts.push(index);
  }

  const goneHosts = Array.from({ length: resolved.goneHosts }, (_, k) => `gone${pad(k, 4)}.${DOMAIN}`);

  const crossWeights = new Float64Array(count);
  let cumulative = 0;
  let totalUrls = 0;
  for (let index = 0; index < count; index++) {
    const host = hosts[index] as HostInfo;
    cumulative += Math.sqrt(host.articles);
    crossWeights[index] = cumulative;
    totalUrls += host.urlCount;
  }

  return {
    options: resolved,
    seed,
    hosts,
    normalHosts: count,
    trapHost,
    mirrorHosts,
    goneHosts,
    seedHosts,
    forbiddenRobotsHost: order[0] as number,
    unavailableRobotsHost: order[1] as number,
    totalUrls,
    // Entry → section (1) → article (2) → redirect head or other leaf (3) → further hops.
    exactDepth: 2 + MAX_REDIRECT_HOPS,
    crossWeights,
    hostIndexByName,
    text: buildTextPool(seed),
    rateLimits,
  };
}
