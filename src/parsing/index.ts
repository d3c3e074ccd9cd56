/** Link extraction from HTML: `<base href>`, `rel=nofollow`, robots meta tags, charset decoding. */

export { decodeHtml } from "./decode.js";
export { DEFAULT_MAX_LINKS, extractLinks } from "./extract-links.js";
export type { ExtractedLink, ExtractedPage, ExtractLinksOptions } from "./types.js";
