import { forEachLink, pageTraits, Role } from "./links.js";
import { type HostInfo, hostOrigin, type WebModel } from "./model.js";
import { hash4 } from "./prng.js";
import { PARAGRAPH_COUNT } from "./text-pool.js";
import { Kind, kindOf, pathOf, trapPathOf } from "./url-space.js";

/**
 * HTML for a page, assembled by concatenating pooled paragraphs around the page's links. Hrefs mix
 * every form a crawler must normalize (relative, dot segments, `%7e`, uppercase host, fragments).
 */

const FORM_SALT = 0xf0e1;

/** Rendering state of one page. */
interface PageContext {
  readonly model: WebModel;
  readonly port: number;
  readonly host: HostInfo;
  readonly id: number;
  /** Directory relative hrefs resolve against: the `<base href>` one or the page's own. */
  readonly baseDir: string;
}

/** Path of the directory of `path` (query ignored), ending in `/`. */
function directoryOf(path: string): string {
  const query = path.indexOf("?");
  const bare = query < 0 ? path : path.slice(0, query);
  return bare.slice(0, bare.lastIndexOf("/") + 1);
}

/** The shortest relative reference from directory `baseDir` to the absolute path `target`. */
export function relativeReference(baseDir: string, target: string): string {
  const query = target.indexOf("?");
  const path = query < 0 ? target : target.slice(0, query);
  const suffix = query < 0 ? "" : target.slice(query);
  const baseSegments = baseDir.split("/").slice(1, -1);
  const targetSegments = path.split("/").slice(1);
  let common = 0;
  while (
    common < baseSegments.length &&
    common < targetSegments.length - 1 &&
    baseSegments[common] === targetSegments[common]
  ) {
    common++;
  }
  const relative = "../".repeat(baseSegments.length - common) + targetSegments.slice(common).join("/");
  // An empty reference would mean "this document", not "this directory".
  return (relative === "" ? "./" : relative) + suffix;
}

/** `target` with one unreserved character percent-encoded (a `~` when there is one). */
function percentEncodeOne(target: string, hash: number): string {
  let at = target.indexOf("~");
  if (at < 0) {
    const match = /[a-z0-9]/.exec(target);
    if (match === null) return target;
    at = match.index;
  }
  const hex = (target.charCodeAt(at) as number).toString(16);
  return `${target.slice(0, at)}%${hash % 2 === 0 ? hex : hex.toUpperCase()}${target.slice(at + 1)}`;
}

function origin(ctx: PageContext, name: string, upper: boolean): string {
  return hostOrigin(ctx.model, name, ctx.port, upper);
}

/** Which href form a link gets (see {@link hrefFor}). */
function formOf(model: WebModel, host: HostInfo, id: number, slot: number, role: Role): number {
  return hash4(model.seed ^ FORM_SALT, host.salt, id, slot * 8 + role);
}

/** Whether page `id` of `host` has a `<base href>` naming the host (else relative, or none). */
function hasAbsoluteBase(model: WebModel, host: HostInfo, id: number): boolean {
  return pageTraits(model, host, id).baseSection >= 0 && hash4(model.seed, host.salt, id, 0x3e7a) % 2 === 0;
}

/**
 * Whether a link of page `id` of `host` to a page of the same host resolves to that host by name (an
 * absolute href, or any href under an absolute `<base>`) rather than to whichever host served the page:
 * on a mirror, such a link leads back to the mirrored host. The ground truth follows links this way.
 */
export function sameHostLinkNamesHost(
  model: WebModel,
  host: HostInfo,
  id: number,
  slot: number,
  role: Role,
): boolean {
  if (hasAbsoluteBase(model, host, id)) return true;
  if (role === Role.Nav || role === Role.Partner || role === Role.Pager) return false;
  const form = formOf(model, host, id, slot, role) % 10;
  return form === 1 || form === 2;
}

/** The href of a link from the page in `ctx` to (`targetHost`, `targetId`). */
function hrefFor(ctx: PageContext, targetHost: number, targetId: number, slot: number, role: Role): string {
  const { model, port } = ctx;
  const form = formOf(model, ctx.host, ctx.id, slot, role);
  if (targetHost < 0) return `${origin(ctx, model.goneHosts[-1 - targetHost] as string, form % 4 === 0)}/`;
  const target = model.hosts[targetHost] as HostInfo;
  const path = (target.kind === "trap" ? trapPathOf(targetId) : pathOf(target, targetId)) as string;
  if (targetHost !== ctx.host.index) {
    const variant = form % 3;
    if (variant === 2) return `//${target.name}:${port}${path}`;
    return origin(ctx, target.name, variant === 1) + path;
  }
  if (role === Role.Nav || role === Role.Partner) return path;
  if (role === Role.Pager) return path.slice(path.indexOf("?"));
  switch (form % 10) {
    case 1:
      return origin(ctx, target.name, false) + path;
    case 2:
      return origin(ctx, target.name, true) + path;
    case 3:
      return relativeReference(ctx.baseDir, path);
    case 4: {
      const relative = relativeReference(ctx.baseDir, path);
      return relative.startsWith(".") ? relative : `./${relative}`;
    }
    case 5:
      return `/s0/..${path}`;
    case 6:
      return percentEncodeOne(path, form >>> 8);
    case 7:
      return `${path}#sec${slot % 5}`;
    case 8:
      return `${relativeReference(ctx.baseDir, path)}#top`;
    default:
      return path;
  }
}

function words(model: WebModel, hash: number, count: number): string {
  const vocabulary = model.text.words;
  const out: string[] = [];
  let h = hash;
  for (let i = 0; i < count; i++) {
    h = hash4(h, i, 0x77, 0);
    out.push(vocabulary[h % vocabulary.length] as string);
  }
  return out.join(" ");
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Title of a page (without the site name). */
function titleOf(model: WebModel, host: HostInfo, id: number): string {
  if (host.kind === "trap") return id === 0 ? "Calendar" : `Calendar ${trapPathOf(id).slice(10)}`;
  switch (kindOf(host, id)) {
    case Kind.Home:
      return "Home";
    case Kind.Section:
      return `Section ${id - host.section0}`;
    case Kind.List:
      return `All articles, page ${id - host.list0 + 1}`;
    case Kind.Author:
      return `Author ${id - host.author0}`;
    default: {
      const h = hash4(model.seed, host.salt, id, 0x7171);
      return capitalized(words(model, h, 3 + (h % 4)));
    }
  }
}

/** Collected links of one page, already rendered to HTML, by where they go on the page. */
interface Parts {
  nav: string[];
  byline: string[];
  content: string[];
  embeds: string[];
  frames: string[];
  partners: string[];
  pager: string[];
}

function collectLinks(ctx: PageContext): Parts {
  const parts: Parts = { nav: [], byline: [], content: [], embeds: [], frames: [], partners: [], pager: [] };
  const { model, host, id } = ctx;
  forEachLink(model, host.index, id, (targetHost, targetId, nofollow, slot, role) => {
    const href = hrefFor(ctx, targetHost, targetId, slot, role);
    const h = hash4(model.seed, host.salt, id, slot * 8 + role + 0x1000);
    let rel = "";
    if (nofollow) rel = h % 2 === 0 ? ' rel="nofollow"' : ' rel="external nofollow"';
    else if (targetHost !== host.index && h % 5 === 0) rel = ' rel="noopener"';
    const text =
      role === Role.Nav
        ? targetId === 0
          ? "Home"
          : `Section ${targetId - host.section0}`
        : capitalized(words(model, h, 2 + (h % 3)));
    switch (role) {
      case Role.Nav:
        parts.nav.push(`<a href="${href}">${text}</a>`);
        return;
      case Role.Byline:
        parts.byline.push(`<a href="${href}" class="author">${text}</a>`);
        return;
      case Role.Iframe:
        parts.embeds.push(`<iframe src="${href}" title="${text}" width="600" height="200"></iframe>`);
        return;
      case Role.Area:
        parts.embeds.push(
          `<img src="/media/f1.png" usemap="#m${id}" alt="map"><map name="m${id}">` +
            `<area shape="rect" coords="0,0,64,64" href="${href}" alt="${text}"></map>`,
        );
        return;
      case Role.Frame:
        parts.frames.push(`<frame src="${href}" name="f${slot}">`);
        return;
      case Role.Partner:
        parts.partners.push(`<a href="${href}"${rel}>${text}</a>`);
        return;
      case Role.Pager:
        parts.pager.push(`<a href="${href}">${slot === 0 ? "Previous" : "Next"}</a>`);
        return;
      default:
        parts.content.push(`<a href="${href}"${rel}>${text}</a>`);
    }
  });
  return parts;
}

/** Target size of a page in bytes: 11–28 KB, so with the last paragraph it stays within 10–30 KB. */
function targetBytes(model: WebModel, host: HostInfo, id: number): number {
  return 11_000 + (hash4(model.seed, host.salt, id, 0x5123) % 17_000);
}

/** The full HTML of page `id` on host `hostIndex` (any 200 HTML kind, including trap pages). */
export function renderHtml(model: WebModel, port: number, hostIndex: number, id: number): string {
  const host = model.hosts[hostIndex] as HostInfo;
  const path = (host.kind === "trap" ? trapPathOf(id) : pathOf(host, id)) as string;
  const traits = pageTraits(model, host, id);
  const baseDir = traits.baseSection >= 0 ? `/s${traits.baseSection}/` : directoryOf(path);
  const ctx: PageContext = { model, port, host, id, baseDir };
  const parts = collectLinks(ctx);
  const title = titleOf(model, host, id);
  const h = hash4(model.seed, host.salt, id, 0x3e7a);
  const head: string[] = [
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    `<title>${title} &mdash; ${host.name}</title>\n`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
    `<meta name="description" content="${model.text.paragraphs[h % PARAGRAPH_COUNT]?.slice(0, 140)}">\n`,
  ];
  if (traits.metaNofollow || traits.metaNoindex) {
    const content = [traits.metaNoindex ? "noindex" : "", traits.metaNofollow ? "nofollow" : ""];
    head.push(`<meta name="robots" content="${content.filter((x) => x !== "").join(", ")}">\n`);
  }
  if (traits.baseSection >= 0) {
    const base = hasAbsoluteBase(model, host, id)
      ? `${hostOrigin(model, host.name, port)}${baseDir}`
      : baseDir;
    head.push(`<base href="${base}">\n`);
  }
  head.push('<link rel="stylesheet" href="/static/site.css">\n</head>\n');
  if (parts.frames.length > 0) {
    return `${head.join("")}<frameset cols="50%,50%">\n${parts.frames.join("\n")}\n</frameset>\n</html>\n`;
  }
  const out = head;
  out.push(`<body>\n<header><nav>${parts.nav.join(" | ")}</nav></header>\n<main>\n<article>\n`);
  out.push(`<h1>${title}</h1>\n`);
  if (parts.byline.length > 0) out.push(`<p class="byline">By ${parts.byline[0]}</p>\n`);
  let size = out.reduce((total, chunk) => total + chunk.length, 0);
  // Trap pages stay small so a runaway crawler is cheap to serve.
  const target = host.kind === "trap" ? 1_500 : targetBytes(model, host, id) - 400;
  const links = parts.content;
  let next = 0;
  for (let p = 0; size < target || next < Math.min(links.length, 12); p++) {
    const paragraph = model.text.paragraphs[hash4(h, p, 0x9a7a, 0) % PARAGRAPH_COUNT] as string;
    let chunk = `<p>${paragraph}</p>\n`;
    if (next < links.length) {
      const group = links.slice(next, next + 3);
      next += group.length;
      chunk += `<p>See also ${group.join(", ")}.</p>\n`;
    }
    out.push(chunk);
    size += chunk.length;
  }
  if (next < links.length) {
    out.push(`<ul class="related">\n<li>${links.slice(next).join("</li>\n<li>")}</li>\n</ul>\n`);
  }
  if (parts.pager.length > 0) out.push(`<p class="pager">${parts.pager.join(" ")}</p>\n`);
  if (parts.embeds.length > 0) out.push(`${parts.embeds.join("\n")}\n`);
  out.push("</article>\n</main>\n<footer>\n");
  if (parts.partners.length > 0) out.push(`<p>Friends of this site: ${parts.partners.join(", ")}</p>\n`);
  const logo = host.kind === "trap" ? "" : ' <img src="/media/f1.png" alt="" width="16" height="16">';
  out.push(`<p>&copy; 2026 ${host.name}${logo}</p>\n</footer>\n</body>\n</html>\n`);
  return out.join("");
}

/** A small 404 body; its link catches crawlers that parse error pages (it leads to a nofollow-only page). */
export function renderNotFound(host: HostInfo | undefined): string {
  const hint = host?.kind === "normal" ? '<p>Perhaps <a href="/nf/0.html">this page</a> helps.</p>' : "";
  return `<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>${hint}</body></html>\n`;
}
