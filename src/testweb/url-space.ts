/**
 * The URL space of a host: every URL the synthetic web knows maps to a dense integer id, so the ground
 * truth keeps one byte per URL per host and the server maps a request back to the page it names.
 */

/** Kinds of resources; numeric so hot loops compare integers. */
export const Kind = {
  Home: 0,
  Section: 1,
  Article: 2,
  List: 3,
  Author: 4,
  Missing: 5,
  Redirect: 6,
  Media: 7,
  Private: 8,
  Open: 9,
  Draft: 10,
  NofollowOnly: 11,
  Frames: 12,
  TrapRoot: 13,
  TrapMonth: 14,
  Embed: 15,
  Alias: 16,
  Hidden: 17,
} as const;

/** One of the {@link Kind} values. */
export type Kind = (typeof Kind)[keyof typeof Kind];

/** Embed families by the element linking them: `i` iframe, `m` image-map area, `f` frame. */
export const EMBED_FAMILIES = ["i", "m", "f"] as const;

/** Id of embed `k` of family `family` (index into {@link EMBED_FAMILIES}). */
export function embedId(l: HostLayout, family: number, k: number): number {
  return l.embed0 + k * EMBED_FAMILIES.length + family;
}

/**
 * URL aliases every normal host has, each serving another page's bytes exactly: `/index.html` (the
 * home page), the first article with a session id, the first section with a tracking parameter.
 */
export const ALIASES = 3;

/** Path of alias `k` (see {@link ALIASES}). */
function aliasPath(l: HostLayout, k: number): string {
  switch (k) {
    case 0:
      return "/index.html";
    case 1:
      return `${pathOf(l, l.article0)}?sessionid=${(l.articles * 7919).toString(36)}`;
    default:
      return `${pathOf(l, l.section0)}?utm_source=newsletter`;
  }
}

/** The page alias id `id` serves (home, first article, first section). */
export function aliasTarget(l: HostLayout, id: number): number {
  const k = id - l.alias0;
  return k === 0 ? 0 : k === 1 ? l.article0 : l.section0;
}

/** Longest redirect chain: a link to `/go/K-3` redirects to `/go/K-2`, then `/go/K-1`, then the target. */
export const MAX_REDIRECT_HOPS = 3;

/** Counts and id offsets of a normal host's resources (ids are contiguous per kind, home is 0). */
export interface HostLayout {
  readonly articles: number;
  readonly sections: number;
  /** Articles per section (the last section may hold fewer). */
  readonly sectionSize: number;
  readonly lists: number;
  readonly authors: number;
  readonly missing: number;
  readonly redirects: number;
  readonly media: number;
  /** Count of each of the three robots-test kinds (private, private/open, drafts). */
  readonly privates: number;
  readonly nofollowOnly: number;
  /** Count of each of the three embed families (linked only from iframe, area and frame elements). */
  readonly embeds: number;
  readonly hasFrames: boolean;
  readonly section0: number;
  readonly article0: number;
  readonly list0: number;
  readonly author0: number;
  readonly missing0: number;
  readonly redirect0: number;
  readonly media0: number;
  readonly private0: number;
  readonly open0: number;
  readonly draft0: number;
  readonly nofollow0: number;
  readonly embed0: number;
  readonly frames: number;
  /** First of the {@link ALIASES} alias ids (after the frames page, when there is one). */
  readonly alias0: number;
  /** Pages only the host's sitemap lists (`/archive/aK.html`); 0 for a host without a sitemap. */
  readonly hidden: number;
  readonly hidden0: number;
  /** Size of the id space (includes ids never linked, e.g. unused redirect hops). */
  readonly urlCount: number;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/**
 * Derives a host's layout from its article count (small counts of dirt scale with the host), with
 * `hidden` pages that no link reaches, listed in its sitemap.
 */
export function layoutHost(articles: number, hasFrames: boolean, hidden = 0): HostLayout {
  const wanted = clamp(Math.ceil(articles / 40), 1, 8);
  const sectionSize = Math.ceil(articles / wanted);
  const sections = Math.ceil(articles / sectionSize);
  const lists = clamp(Math.ceil(articles / 60), 1, 3);
  const authors = clamp(Math.ceil(articles / 40), 1, 12);
  const missing = Math.max(1, Math.round(articles * 0.03));
  const redirects = Math.max(1, Math.round(articles * 0.02));
  const media = Math.max(2, Math.round(articles * 0.02));
  const privates = Math.max(1, Math.round(articles * 0.01));
  const nofollowOnly = Math.max(1, Math.round(articles * 0.01));
  const embeds = Math.max(2, Math.round(articles * 0.01));
  const section0 = 1;
  const article0 = section0 + sections;
  const list0 = article0 + articles;
  const author0 = list0 + lists;
  const missing0 = author0 + authors;
  const redirect0 = missing0 + missing;
  const media0 = redirect0 + redirects * MAX_REDIRECT_HOPS;
  const private0 = media0 + media;
  const open0 = private0 + privates;
  const draft0 = open0 + privates;
  const nofollow0 = draft0 + privates;
  const embed0 = nofollow0 + nofollowOnly;
  const frames = embed0 + EMBED_FAMILIES.length * embeds;
  const alias0 = frames + (hasFrames ? 1 : 0);
  const hidden0 = alias0 + ALIASES;
  const urlCount = hidden0 + hidden;
  return {
    articles,
    sections,
    sectionSize,
    lists,
    authors,
    missing,
    redirects,
    media,
    privates,
    nofollowOnly,
    embeds,
    hasFrames,
    section0,
    article0,
    list0,
    author0,
    missing0,
    redirect0,
    media0,
    private0,
    open0,
    draft0,
    nofollow0,
    embed0,
    frames,
    alias0,
    hidden,
    hidden0,
    urlCount,
  };
}

/** The kind of id `id` on a host with layout `l` (ids at or past `urlCount` are invalid: -1). */
export function kindOf(l: HostLayout, id: number): Kind | -1 {
  if (id < 0 || id >= l.urlCount) return -1;
  if (id === 0) return Kind.Home;
  if (id < l.article0) return Kind.Section;
  if (id < l.list0) return Kind.Article;
  if (id < l.author0) return Kind.List;
  if (id < l.missing0) return Kind.Author;
  if (id < l.redirect0) return Kind.Missing;
  if (id < l.media0) return Kind.Redirect;
  if (id < l.private0) return Kind.Media;
  if (id < l.open0) return Kind.Private;
  if (id < l.draft0) return Kind.Open;
  if (id < l.nofollow0) return Kind.Draft;
  if (id < l.embed0) return Kind.NofollowOnly;
  if (id < l.frames) return Kind.Embed;
  if (id < l.alias0) return Kind.Frames;
  if (id < l.hidden0) return Kind.Alias;
  return Kind.Hidden;
}

/** Section of article number `article` (0-based within the host). */
export function sectionOf(l: HostLayout, article: number): number {
  return Math.floor(article / l.sectionSize);
}

/** True when media number `k` is a PDF (even) rather than a PNG (odd). */
export function isPdf(k: number): boolean {
  return k % 2 === 0;
}

/** Canonical path (with query) of id `id` on a normal host; `undefined` for an invalid id. */
export function pathOf(l: HostLayout, id: number): string | undefined {
  switch (kindOf(l, id)) {
    case Kind.Home:
      return "/";
    case Kind.Section:
      return `/s${id - l.section0}/`;
    case Kind.Article: {
      const i = id - l.article0;
      return `/s${sectionOf(l, i)}/p${i}.html`;
    }
    case Kind.List:
      return `/list?page=${id - l.list0 + 1}`;
    case Kind.Author:
      return `/~a${id - l.author0}/`;
    case Kind.Missing: {
      const k = id - l.missing0;
      return `/s${k % l.sections}/gone${k}.html`;
    }
    case Kind.Redirect: {
      const offset = id - l.redirect0;
      return `/go/${Math.floor(offset / MAX_REDIRECT_HOPS)}-${(offset % MAX_REDIRECT_HOPS) + 1}`;
    }
    case Kind.Media: {
      const k = id - l.media0;
      return `/media/f${k}.${isPdf(k) ? "pdf" : "png"}`;
    }
    case Kind.Private:
      return `/private/p${id - l.private0}.html`;
    case Kind.Open:
      return `/private/open${id - l.open0}.html`;
    case Kind.Draft:
      return `/drafts/d${id - l.draft0}.html`;
    case Kind.NofollowOnly:
      return `/nf/${id - l.nofollow0}.html`;
    case Kind.Embed: {
      const offset = id - l.embed0;
      return `/embed/${EMBED_FAMILIES[offset % EMBED_FAMILIES.length]}${Math.floor(offset / EMBED_FAMILIES.length)}.html`;
    }
    case Kind.Frames:
      return "/frames.html";
    case Kind.Alias:
      return aliasPath(l, id - l.alias0);
    case Kind.Hidden:
      return `/archive/a${id - l.hidden0}.html`;
    default:
      return undefined;
  }
}

const N = "(0|[1-9][0-9]*)";
const PATTERNS: ReadonlyArray<readonly [RegExp, (l: HostLayout, m: RegExpExecArray) => number]> = [
  [new RegExp(`^/s${N}/$`), (l, m) => l.section0 + Number(m[1])],
  [new RegExp(`^/s${N}/p${N}\\.html$`), (l, m) => l.article0 + Number(m[2])],
  [new RegExp(`^/list\\?page=${N}$`), (l, m) => l.list0 + Number(m[1]) - 1],
  [new RegExp(`^/~a${N}/$`), (l, m) => l.author0 + Number(m[1])],
  [new RegExp(`^/s${N}/gone${N}\\.html$`), (l, m) => l.missing0 + Number(m[2])],
  [
    new RegExp(`^/go/${N}-([1-9])$`),
    (l, m) => l.redirect0 + Number(m[1]) * MAX_REDIRECT_HOPS + Number(m[2]) - 1,
  ],
  [new RegExp(`^/media/f${N}\\.(pdf|png)$`), (l, m) => l.media0 + Number(m[1])],
  [new RegExp(`^/private/p${N}\\.html$`), (l, m) => l.private0 + Number(m[1])],
  [new RegExp(`^/private/open${N}\\.html$`), (l, m) => l.open0 + Number(m[1])],
  [new RegExp(`^/drafts/d${N}\\.html$`), (l, m) => l.draft0 + Number(m[1])],
  [new RegExp(`^/nf/${N}\\.html$`), (l, m) => l.nofollow0 + Number(m[1])],
  [new RegExp(`^/archive/a${N}\\.html$`), (l, m) => l.hidden0 + Number(m[1])],
  [
    new RegExp(`^/embed/([${EMBED_FAMILIES.join("")}])${N}\\.html$`),
    (l, m) => embedId(l, EMBED_FAMILIES.indexOf(m[1] as (typeof EMBED_FAMILIES)[number]), Number(m[2])),
  ],
];

/** The id named by a canonical path+query on a normal host, or -1 when no such resource exists. */
export function idOfPath(l: HostLayout, target: string): number {
  if (target === "/") return 0;
  if (target === "/frames.html") return l.hasFrames ? l.frames : -1;
  for (let k = 0; k < ALIASES; k++) if (target === aliasPath(l, k)) return l.alias0 + k;
  for (const [pattern, toId] of PATTERNS) {
    const match = pattern.exec(target);
    if (match === null) continue;
    const id = toId(l, match);
    // Round-trip check: rejects out-of-range numbers, a wrong section or a wrong extension.
    return pathOf(l, id) === target ? id : -1;
  }
  return -1;
}

/** First month of the calendar trap (offset 0 is January 2026). */
const TRAP_BASE_YEAR = 2026;

/** Id of the trap page at month offset `k` from January 2026 (zig-zag, root is 0). */
export function trapMonthId(k: number): number {
  return 1 + (k >= 0 ? 2 * k : -2 * k - 1);
}

/** Month offset of a trap month id (inverse of {@link trapMonthId}). */
export function trapMonthOffset(id: number): number {
  const z = id - 1;
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

/** Canonical path of a trap id: `/` or `/calendar/YYYY/MM`. */
export function trapPathOf(id: number): string {
  if (id === 0) return "/";
  const k = trapMonthOffset(id);
  const year = TRAP_BASE_YEAR + Math.floor(k / 12);
  const month = (((k % 12) + 12) % 12) + 1;
  return `/calendar/${year}/${month < 10 ? "0" : ""}${month}`;
}

/** Id of a canonical path on the trap host, or -1 (years 1000–9999 exist: "forever" for a crawler). */
export function trapIdOfPath(target: string): number {
  if (target === "/") return 0;
  const match = /^\/calendar\/([1-9][0-9]{3})\/(0[1-9]|1[0-2])$/.exec(target);
  if (match === null) return -1;
  return trapMonthId((Number(match[1]) - TRAP_BASE_YEAR) * 12 + Number(match[2]) - 1);
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Decodes percent-escapes of unreserved characters and uppercases the others (`%7e`→`~`, `%2f`→`%2F`). */
export function normalizeEscapes(text: string): string {
  if (!text.includes("%")) return text;
  return text.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/** Canonical path+query of a request target (dot segments removed, escapes normalized, no fragment). */
export function canonicalTarget(requestTarget: string): string {
  // A fixed dummy origin: only the path and query are read, and nothing is ever looked up.
  const url = requestTarget.startsWith("/")
    ? new URL(`http://canonical.invalid${requestTarget}`)
    : new URL(requestTarget, "http://canonical.invalid/");
  return normalizeEscapes(url.pathname + url.search);
}
