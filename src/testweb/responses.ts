import { redirectHops, redirectStatus, redirectTarget } from "./links.js";
import { type HostInfo, hostOrigin, type WebModel } from "./model.js";
import { hash4 } from "./prng.js";
import { renderHtml, renderNotFound } from "./render.js";
import { robotsAnswer } from "./robots-txt.js";
import {
  aliasTarget,
  idOfPath,
  isPdf,
  Kind,
  kindOf,
  MAX_REDIRECT_HOPS,
  pathOf,
  trapIdOfPath,
} from "./url-space.js";

/** What the test web answers to one request, before it is written to the socket. */
export interface TestWebResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  /** `Location` of a redirect. */
  readonly location?: string;
}

const HTML = "text/html; charset=utf-8";
const CSS = "body{font-family:serif;max-width:42em;margin:auto}nav a{margin-right:.5em}\n";

function notFound(host: HostInfo | undefined): TestWebResponse {
  return { status: 404, contentType: HTML, body: renderNotFound(host) };
}

/** A small deterministic binary body with the right magic bytes (PDF or PNG). */
function mediaBody(model: WebModel, host: HostInfo, k: number): Uint8Array {
  const magic = isPdf(k)
    ? [0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a]
    : [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  const size = 1024 + (hash4(model.seed, host.salt, k, 0x3ed1) % 3072);
  const bytes = new Uint8Array(size);
  bytes.set(magic);
  for (let i = magic.length; i < size; i++) bytes[i] = hash4(host.salt, k, i, 0x3ed2) & 0xff;
  return bytes;
}

/** Where a host with pages only a sitemap lists serves that sitemap (no robots.txt names it). */
export const SITEMAP_PATH = "/sitemap.xml";

/** The pages a host's sitemap lists: its home page, its first article and its hidden pages. */
export function sitemapIds(host: HostInfo): number[] {
  const ids = [0, host.article0];
  for (let k = 0; k < host.hidden; k++) ids.push(host.hidden0 + k);
  return ids;
}

/** The sitemaps.org urlset of a host with hidden pages, each entry with a `lastmod`. */
function sitemapXml(model: WebModel, port: number, host: HostInfo): string {
  const origin = hostOrigin(model, host.name, port);
  const entries = sitemapIds(host).map((id) => {
    const day = 1 + (hash4(model.seed, host.salt, id, 0x5173) % 28);
    return `  <url><loc>${origin}${pathOf(host, id)}</loc><lastmod>2026-10-${String(day).padStart(2, "0")}</lastmod></url>\n`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join("")}</urlset>\n`;
}

/** Absolute or root-relative `Location` for a redirect's final target. */
function locationOf(model: WebModel, port: number, from: HostInfo, host: number, id: number): string {
  if (host < 0) return `${hostOrigin(model, model.goneHosts[-1 - host] as string, port)}/`;
  const target = model.hosts[host] as HostInfo;
  const path = pathOf(target, id) as string;
  return host === from.index ? path : `${hostOrigin(model, target.name, port)}${path}`;
}

/**
 * The answer to `GET target` on host `hostIndex` (-1 for a name the web does not know), where
 * `target` is the canonical path+query (see `canonicalTarget`).
 */
export function respond(model: WebModel, port: number, hostIndex: number, target: string): TestWebResponse {
  const host = model.hosts[hostIndex];
  if (host === undefined) return notFound(undefined);
  // A mirror answers exactly what the host it mirrors answers.
  if (host.mirrorOf !== undefined) return respond(model, port, host.mirrorOf, target);
  if (target === "/robots.txt") {
    const answer = robotsAnswer(host);
    return { status: answer.status, contentType: "text/plain; charset=utf-8", body: answer.body };
  }
  if (host.kind === "trap") {
    const id = trapIdOfPath(target);
    return id < 0
      ? notFound(host)
      : { status: 200, contentType: HTML, body: renderHtml(model, port, host.index, id) };
  }
  if (target === "/static/site.css")
    return { status: 200, contentType: "text/css; charset=utf-8", body: CSS };
  if (target === SITEMAP_PATH && host.hidden > 0) {
    return { status: 200, contentType: "application/xml", body: sitemapXml(model, port, host) };
  }
  const id = idOfPath(host, target);
  switch (kindOf(host, id)) {
    case -1:
    case Kind.Missing:
      return notFound(host);
    case Kind.Media: {
      const k = id - host.media0;
      return {
        status: 200,
        contentType: isPdf(k) ? "application/pdf" : "image/png",
        body: mediaBody(model, host, k),
      };
    }
    case Kind.Redirect: {
      const offset = id - host.redirect0;
      const k = Math.floor(offset / MAX_REDIRECT_HOPS);
      const hop = (offset % MAX_REDIRECT_HOPS) + 1;
      if (hop > redirectHops(model, host, k)) return notFound(host);
      let location: string;
      if (hop > 1) {
        // Relative to the request URL: `/go/7-3` → `/go/7-2`.
        location = `${k}-${hop - 1}`;
      } else {
        const final = redirectTarget(model, host, k);
        location = locationOf(model, port, host, final.host, final.id);
      }
      const body = `<!DOCTYPE html>\n<html><body><p>Moved to <a href="${location}">here</a>.</p></body></html>\n`;
      return { status: redirectStatus(model, host, k), contentType: HTML, body, location };
    }
    case Kind.Alias:
      // The same bytes as the page it aliases (a session id, a tracking parameter, /index.html).
      return respond(model, port, hostIndex, pathOf(host, aliasTarget(host, id)) as string);
    default:
      return { status: 200, contentType: HTML, body: renderHtml(model, port, host.index, id) };
  }
}
