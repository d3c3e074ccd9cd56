/** Link extraction from HTML (`<base href>`, `rel=nofollow`, robots meta tags, charset decoding) and sitemaps. */

export { decodeHtml } from "./decode.js";
export { DEFAULT_MAX_LINKS, extractLinks } from "./extract-links.js";
export {
  parseSitemap,
  SITEMAP_MAX_BYTES,
  SITEMAP_MAX_ENTRIES,
  type Sitemap,
  type SitemapLimits,
  type SitemapUrl,
} from "./sitemap.js";
export type { ExtractedLink, ExtractedPage, ExtractLinksOptions } from "./types.js";
