/** `<meta name="robots">` directives and `rel` tokens: the page-level and link-level opt-outs. */

/** The opt-outs a page declares for itself. */
export interface RobotsDirectives {
  /** The page asks not to be indexed. */
  noindex: boolean;
  /** The page asks that its links not be followed. */
  nofollow: boolean;
}

const SEPARATORS = /[\s,]+/;

/**
 * Reads the `content` of a robots meta tag: `noindex`, `nofollow` and `none` (both), case-insensitive,
 * separated by commas (whitespace tolerated too). Other directives are ignored.
 */
export function parseRobotsContent(content: string): RobotsDirectives {
  const directives = { noindex: false, nofollow: false };
  for (const token of content.toLowerCase().split(SEPARATORS)) {
    if (token === "noindex") directives.noindex = true;
    else if (token === "nofollow") directives.nofollow = true;
    else if (token === "none") {
      directives.noindex = true;
      directives.nofollow = true;
    }
  }
  return directives;
}

const NOFOLLOW_TOKEN = /(?:^|[\t\n\f\r ])nofollow(?:$|[\t\n\f\r ])/;

/** True when a `rel` attribute (a space-separated token list, case-insensitive) contains `nofollow`. */
export function relHasNofollow(rel: string): boolean {
  return NOFOLLOW_TOKEN.test(rel.toLowerCase());
}
