// The share of inter-host links among the links a correct crawl follows on the test web, computed from
// the web's model (the same walk as the ground truth): it sets the expected URL exchange of a cluster.
// Reads internals of dist/testweb (links, url-space): a bench may, the public API has no link walk.
import { buildModel } from "../../dist/testweb/index.js";
import { forEachLink, isMetaNofollow, redirectHops, redirectTarget } from "../../dist/testweb/links.js";
import {
  idOfPath,
  Kind,
  kindOf,
  MAX_REDIRECT_HOPS,
  normalizeEscapes,
  trapIdOfPath,
} from "../../dist/testweb/url-space.js";

/**
 * Counts, over the pages of `truthUrls` (a crawl that fetched exactly them), the links the crawler
 * routes (followed links, deduplicated per page as the link extractor does, plus redirect targets)
 * and those among them that point to another host.
 * @param {{ seed: number, hosts: number, pages: number }} webOptions options of the test web served
 * @param {Iterable<string>} truthUrls the ground truth URLs
 * @returns {{ pages: number, followedLinks: number, interHostLinks: number, interHostShare: number,
 *   interHostLinksPerPage: number }}
 */
export function interHostLinks(webOptions, truthUrls) {
  const model = buildModel(webOptions);
  let pages = 0;
  let followedLinks = 0;
  let interHostLinks = 0;
  const count = (from, to) => {
    followedLinks++;
    if (to !== from) interHostLinks++;
  };
  for (const text of truthUrls) {
    const url = new URL(text);
    const h = model.hostIndexByName.get(url.hostname);
    if (h === undefined) continue;
    pages++;
    const host = model.hosts[h];
    const path = normalizeEscapes(url.pathname + url.search);
    const id = host.kind === "trap" ? trapIdOfPath(path) : idOfPath(host, path);
    if (id < 0) continue;
    if (host.kind === "normal") {
      const kind = kindOf(host, id);
      if (kind === Kind.Redirect) {
        const offset = id - host.redirect0;
        const k = Math.floor(offset / MAX_REDIRECT_HOPS);
        const hop = (offset % MAX_REDIRECT_HOPS) + 1;
        if (hop > redirectHops(model, host, k)) continue;
        count(h, hop > 1 ? h : redirectTarget(model, host, k).host);
        continue;
      }
      if (kind === Kind.Missing || kind === Kind.Media) continue;
      if (kind === Kind.Article && isMetaNofollow(model, host, id - host.article0)) continue;
    }
    // A URL linked twice on a page is extracted once, followed when any of its links is.
    const links = new Map();
    forEachLink(model, h, id, (th, tid, nofollow) => {
      const key = `${th} ${tid}`;
      const before = links.get(key);
      links.set(key, { host: th, followed: (before?.followed ?? false) || !nofollow });
    });
    for (const link of links.values()) if (link.followed) count(h, link.host);
  }
  return {
    pages,
    followedLinks,
    interHostLinks,
    interHostShare: followedLinks === 0 ? 0 : interHostLinks / followedLinks,
    interHostLinksPerPage: pages === 0 ? 0 : interHostLinks / pages,
  };
}
