import { normalizePercentEscapes } from "../url/index.js";

/**
 * What robots.txt files say as a careful parser reads them (RFC 9309 and Google's reference parser,
 * checked against google/robotstxt-spec-test), rewritten into the plain form robots-parser reads
 * right: robots-parser matches rules well but reads some lines differently than RFC 9309 asks.
 */

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true }); // not fatal: malformed bytes become U+FFFD

/**
 * The text of a robots.txt body: UTF-8, with a byte-order mark at the start skipped even when only
 * its first byte or two are there (as Google's parser does); malformed bytes become U+FFFD.
 */
export function decodeRobotsTxt(bytes: Uint8Array): string {
  let start = 0;
  while (start < UTF8_BOM.length && bytes[start] === UTF8_BOM[start]) start++;
  return utf8.decode(bytes.subarray(start));
}

/** Directives a line may name without a colon (`user-agent FooBot`), as Google's parser accepts. */
const DIRECTIVES = new Set(["user-agent", "allow", "disallow", "sitemap", "crawl-delay"]);
/** A line's key, its colon when it has one, and the rest. Only ASCII blanks count as white space. */
const LINE = /^[ \t]*([A-Za-z_-]+)[ \t]*(:?)[ \t]*(.*)$/;
/** A user-agent line's product token: letters, `_` and `-` (RFC 9309 §2.2.1), or `*`. */
const PRODUCT_TOKEN = /^(?:[A-Za-z_-]+|\*)/;
/** After the last `/` of an Allow path: Google treats `/dir/index.html` as allowing `/dir/` too. */
const INDEX_PAGE = "/index.htm";

/**
 * Rewrites robots.txt text line by line into what robots-parser reads as RFC 9309 means it:
 * - a line that is not `key[:] value` (a byte-order mark in the middle, pasted HTML, stray text) is
 *   dropped instead of being trimmed into a rule;
 * - a known directive followed by a blank instead of a colon gets its colon (`disallow /`);
 * - a user-agent value is read up to its first character outside a product token (`Foo Bar` and
 *   `FooBot/2.1` and `FooBot*` all name `FooBot`);
 * - an allow or disallow path has its percent escapes in the form the agent's URLs have them
 *   (`%62%61%7A` is `baz`, `%2f` is `%2F`: RFC 9309 §2.2.2 decodes unreserved characters before
 *   matching), so a rule matches the URL it names however either writes it;
 * - `Allow: /dir/index.html` also allows `/dir/` exactly (Google's index-page rule).
 * Comments are left for robots-parser to strip.
 */
export function normalizeRobotsText(text: string): string {
  const out: string[] = [];
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const content = raw.replace(/#.*/, "");
    if (content.trim() === "") {
      out.push(raw);
      continue;
    }
    const line = LINE.exec(content);
    if (line === null) continue; // not a directive at all: ignored, as RFC 9309 ignores unknown lines
    const [, name = "", colon, rest = ""] = line;
    const key = name.toLowerCase();
    if (colon === "" && !(DIRECTIVES.has(key) && rest !== "")) continue;
    const trimmed = rest.trimEnd();
    if (key === "user-agent") {
      out.push(`user-agent: ${PRODUCT_TOKEN.exec(trimmed)?.[0] ?? trimmed}`);
      continue;
    }
    const value = key === "allow" || key === "disallow" ? normalizePercentEscapes(trimmed) : trimmed;
    out.push(`${name}: ${value}`);
    const lastSlash = value.lastIndexOf("/");
    if (key === "allow" && lastSlash !== -1 && value.startsWith(INDEX_PAGE, lastSlash)) {
      out.push(`allow: ${value.slice(0, lastSlash + 1)}$`);
    }
  }
  return out.join("\n");
}
