import type { HostInfo, WebModel } from "./model.js";
import { hash4, unit } from "./prng.js";
import {
  ALIASES,
  embedId,
  Kind,
  kindOf,
  MAX_REDIRECT_HOPS,
  sectionOf,
  trapMonthId,
  trapMonthOffset,
} from "./url-space.js";

/**
 * The link structure of every page, derived from hashes of (seed, host, page, slot). The renderer
 * turns these links into HTML and the ground truth walks them directly, so both see the same web.
 */

/** Where a link sits on the page; decides the element and the href form the renderer uses. */
export const Role = {
  Nav: 0,
  Byline: 1,
  Content: 2,
  Iframe: 3,
  Area: 4,
  Frame: 5,
  Partner: 6,
  Pager: 7,
} as const;

/** One of the {@link Role} values. */
export type Role = (typeof Role)[keyof typeof Role];

/**
 * Receives each link of a page: target host index (negative `-1 - k` for gone host `k`, whose id is
 * always 0), target id, whether the anchor has `rel="nofollow"`, a slot number and the role.
 */
export type LinkSink = (host: number, id: number, nofollow: boolean, slot: number, role: Role) => void;

/** Per-article flags (other page kinds never carry them). */
export interface ArticleTraits {
  readonly metaNofollow: boolean;
  readonly metaNoindex: boolean;
  /** Section whose directory is the page's `<base href>`, or -1 for no base element. */
  readonly baseSection: number;
  readonly iframe: boolean;
  readonly area: boolean;
}

const NO_TRAITS: ArticleTraits = {
  metaNofollow: false,
  metaNoindex: false,
  baseSection: -1,
  iframe: false,
  area: false,
};

/** True when article `i` of `host` carries `<meta name="robots" content="nofollow">`. */
export function isMetaNofollow(model: WebModel, host: HostInfo, i: number): boolean {
  // Article 0 stays plain: it is the frame and featured target on every host.
  return i > 0 && unit(hash4(model.seed, host.salt, i, 0x11)) < 0.02;
}

/** Traits of article `i` of `host`. */
export function articleTraits(model: WebModel, host: HostInfo, i: number): ArticleTraits {
  const { seed } = model;
  return {
    metaNofollow: isMetaNofollow(model, host, i),
    metaNoindex: unit(hash4(seed, host.salt, i, 0x12)) < 0.04,
    baseSection: unit(hash4(seed, host.salt, i, 0x13)) < 0.1 ? (sectionOf(host, i) + 1) % host.sections : -1,
    iframe: unit(hash4(seed, host.salt, i, 0x14)) < 0.05,
    area: unit(hash4(seed, host.salt, i, 0x15)) < 0.05,
  };
}

/** Traits of page `id` of a normal host (only articles have non-default ones). */
export function pageTraits(model: WebModel, host: HostInfo, id: number): ArticleTraits {
  if (host.kind !== "normal" || kindOf(host, id) !== Kind.Article) return NO_TRAITS;
  return articleTraits(model, host, id - host.article0);
}

/** A popular article: index skewed towards 0 (Zipf-like in-degree); `power` (2, 2.5 or 3) sets the skew. */
function popularArticle(host: HostInfo, hash: number, power: 2 | 2.5 | 3): number {
  const u = unit(hash);
  // Products instead of `**`: this runs for every link of a million-page truth.
  const skewed = power === 2 ? u * u : power === 3 ? u * u * u : u * u * Math.sqrt(u);
  return Math.min(host.articles - 1, Math.floor(host.articles * skewed));
}

/** A scratch target (host, id) for the pickers, to keep the hot loops allocation-free. */
interface Target {
  host: number;
  id: number;
}

/** A page on another host: a popular host's home, a section or a popular plain article. */
function pickCross(model: WebModel, from: number, a: number, b: number, allowGone: boolean, out: Target) {
  if (allowGone && unit(a) < 0.03) {
    out.host = -1 - (b % model.goneHosts.length);
    out.id = 0;
    return;
  }
  const weights = model.crossWeights;
  const x = unit(b) * (weights[weights.length - 1] as number);
  let low = 0;
  let high = weights.length - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((weights[mid] as number) > x) high = mid;
    else low = mid + 1;
  }
  const host = low === from ? (low + 1) % model.normalHosts : low;
  const target = model.hosts[host] as HostInfo;
  const c = hash4(a, b, host, 0xc1);
  const v = unit(c);
  out.host = host;
  if (v < 0.5) out.id = 0;
  else if (v < 0.65) out.id = target.section0 + (c % target.sections);
  else out.id = plainArticleId(model, target, popularArticle(target, hash4(c, a, 0, 0xc2), 3));
}

/** Id of article `i`, or of the home page when `i` has meta nofollow (entry pages must lead on). */
function plainArticleId(model: WebModel, host: HostInfo, i: number): number {
  return isMetaNofollow(model, host, i) ? 0 : host.article0 + i;
}

/** Number of hops of redirect `k` (1, sometimes 2 or 3). */
export function redirectHops(model: WebModel, host: HostInfo, k: number): number {
  const u = unit(hash4(model.seed, host.salt, k, 0x4ed0));
  return u < 0.7 ? 1 : u < 0.88 ? 2 : MAX_REDIRECT_HOPS;
}

/** HTTP status of redirect `k`. */
export function redirectStatus(model: WebModel, host: HostInfo, k: number): 301 | 302 {
  return hash4(model.seed, host.salt, k, 0x4ed2) % 2 === 0 ? 301 : 302;
}

/** Final target of redirect `k`: mostly a same-host article, sometimes another host, rarely a gone one. */
export function redirectTarget(model: WebModel, host: HostInfo, k: number): { host: number; id: number } {
  const r = hash4(model.seed, host.salt, k, 0x4ed1);
  const u = unit(r);
  const out: Target = { host: host.index, id: 0 };
  if (u < 0.75) out.id = plainArticleId(model, host, popularArticle(host, hash4(r, k, 1, 0x4ed3), 2));
  else if (u < 0.97) pickCross(model, host.index, hash4(r, k, 2, 0x4ed4), hash4(r, k, 3, 0x4ed5), false, out);
  else out.host = -1 - (r % model.goneHosts.length);
  return out;
}

/** Id of the first URL of redirect `k` (the one pages link to). */
export function redirectHeadId(model: WebModel, host: HostInfo, k: number): number {
  return host.redirect0 + k * MAX_REDIRECT_HOPS + redirectHops(model, host, k) - 1;
}

function navLinks(host: HostInfo, sink: LinkSink) {
  sink(host.index, 0, false, 0, Role.Nav);
  for (let s = 0; s < host.sections; s++) sink(host.index, host.section0 + s, false, s + 1, Role.Nav);
}

const scratch: Target = { host: 0, id: 0 };

function articleLinks(model: WebModel, host: HostInfo, id: number, sink: LinkSink) {
  const { seed } = model;
  const h = host.index;
  const i = id - host.article0;
  const traits = articleTraits(model, host, i);
  navLinks(host, sink);
  sink(h, host.author0 + (i % host.authors), false, 0, Role.Byline);
  const scale = model.options.linksPerPage;
  const count = Math.max(1, Math.round(scale * (0.75 + 0.5 * unit(hash4(seed, host.salt, id, 0x20)))));
  // Navigation links are same-host too: raise the content cross share so ~crossLinkPercent% of all
  // links leave.
  const leaving = model.options.crossLinkPercent / 100;
  const crossShare = Math.min(0.9, (leaving * (count + host.sections + 2)) / count);
  for (let j = 0; j < count; j++) {
    const r1 = hash4(seed, host.salt, id, j);
    const r2 = hash4(seed ^ 0x9e3779b9, host.salt, id, j);
    const u = unit(r1);
    if (u < crossShare) {
      pickCross(model, h, hash4(r1, r2, j, 0x21), r2, true, scratch);
      sink(scratch.host, scratch.id, false, j, Role.Content);
      continue;
    }
    const v = (u - crossShare) / (1 - crossShare);
    let target: number;
    let nofollow = false;
    if (v < 0.025) target = host.missing0 + (r2 % host.missing);
    else if (v < 0.045) target = redirectHeadId(model, host, r2 % host.redirects);
    else if (v < 0.065) target = host.media0 + (r2 % host.media);
    else if (v < 0.075) target = host.private0 + (r2 % (3 * host.privates));
    else if (v < 0.08) {
      target = host.nofollow0 + (r2 % host.nofollowOnly);
      nofollow = true;
    } else if (v < 0.1) target = host.list0 + (r2 % host.lists);
    else {
      target = host.article0 + popularArticle(host, r2, 2.5);
      nofollow = unit(hash4(r2, r1, j, 0x22)) < 0.03;
    }
    sink(h, target, nofollow, j, Role.Content);
  }
  // Embed pages are linked only from these elements: a crawler that skips one kind misses them.
  if (traits.iframe)
    sink(h, embedId(host, 0, hash4(seed, host.salt, id, 0x23) % host.embeds), false, 0, Role.Iframe);
  if (traits.area)
    sink(h, embedId(host, 1, hash4(seed, host.salt, id, 0x24) % host.embeds), false, 0, Role.Area);
}

function homeLinks(model: WebModel, host: HostInfo, sink: LinkSink) {
  const h = host.index;
  navLinks(host, sink);
  const featured = Math.min(10, host.articles);
  for (let t = 0; t < featured; t++) sink(h, host.article0 + t, false, t, Role.Content);
  for (let k = 0; k < host.lists; k++) sink(h, host.list0 + k, false, featured + k, Role.Content);
  if (host.hasFrames) sink(h, host.frames, false, featured + host.lists, Role.Content);
  // Aliases of pages the home page links anyway: the same bytes under other URLs.
  for (let k = 0; k < ALIASES; k++) sink(h, host.alias0 + k, false, 50 + k, Role.Content);
  for (let j = 0; j < 3; j++) {
    pickCross(
      model,
      h,
      hash4(model.seed, host.salt, 0x30, j),
      hash4(model.seed, host.salt, 0x31, j),
      true,
      scratch,
    );
    sink(scratch.host, scratch.id, false, 40 + j, Role.Content);
  }
  // The ring of partner links makes every host reachable from any seed, even past the robots-503 host.
  const n = model.normalHosts;
  sink((h + 1) % n, 0, false, 0, Role.Partner);
  if ((h + 2) % n !== h) sink((h + 2) % n, 0, false, 1, Role.Partner);
  if (host.linksToTrap && model.trapHost >= 0) sink(model.trapHost, 0, false, 2, Role.Partner);
  if (host.mirroredBy !== undefined) sink(host.mirroredBy, 0, false, 3, Role.Partner);
}

/** Calls `sink` for every link of page `id` on host `hostIndex`, in document order by role. */
export function forEachLink(model: WebModel, hostIndex: number, id: number, sink: LinkSink): void {
  const host = model.hosts[hostIndex] as HostInfo;
  const h = host.index;
  const { seed } = model;
  if (host.kind === "trap") {
    if (id === 0) {
      sink(h, trapMonthId(0), false, 0, Role.Content);
      return;
    }
    const k = trapMonthOffset(id);
    sink(h, trapMonthId(k - 1), false, 0, Role.Content);
    sink(h, trapMonthId(k + 1), false, 1, Role.Content);
    sink(h, 0, false, 0, Role.Nav);
    return;
  }
  switch (kindOf(host, id)) {
    case Kind.Home:
      homeLinks(model, host, sink);
      return;
    case Kind.Article:
      articleLinks(model, host, id, sink);
      return;
    case Kind.Section: {
      navLinks(host, sink);
      const s = id - host.section0;
      const end = Math.min(host.articles, (s + 1) * host.sectionSize);
      for (let i = s * host.sectionSize; i < end; i++) sink(h, host.article0 + i, false, i, Role.Content);
      return;
    }
    case Kind.List: {
      navLinks(host, sink);
      const k = id - host.list0;
      for (let t = 0; t < 15; t++)
        sink(h, host.article0 + ((k * 15 + t) % host.articles), false, t, Role.Content);
      if (k > 0) sink(h, id - 1, false, 0, Role.Pager);
      if (k + 1 < host.lists) sink(h, id + 1, false, 1, Role.Pager);
      return;
    }
    case Kind.Author: {
      navLinks(host, sink);
      const a = id - host.author0;
      for (let i = a, t = 0; i < host.articles && t < 8; i += host.authors, t++) {
        sink(h, host.article0 + i, false, t, Role.Content);
      }
      return;
    }
    case Kind.Private:
    case Kind.Open:
    case Kind.Draft:
    case Kind.Embed:
    case Kind.Hidden:
      navLinks(host, sink);
      for (let t = 0; t < 3; t++) {
        sink(
          h,
          host.article0 + (hash4(seed, host.salt, id, 0x40 + t) % host.articles),
          false,
          t,
          Role.Content,
        );
      }
      return;
    case Kind.NofollowOnly: {
      navLinks(host, sink);
      const k = id - host.nofollow0;
      // A plain link onwards: only a crawler that wrongly follows nofollow ever gets here and further.
      sink(h, host.nofollow0 + ((k + 1) % host.nofollowOnly), false, 0, Role.Content);
      sink(h, host.article0 + (hash4(seed, host.salt, id, 0x50) % host.articles), false, 1, Role.Content);
      return;
    }
    case Kind.Frames:
      sink(h, embedId(host, 2, 0), false, 0, Role.Frame);
      sink(h, embedId(host, 2, 1), false, 1, Role.Frame);
      return;
    default:
      // 404s, redirects and media have no parsed links.
      return;
  }
}
