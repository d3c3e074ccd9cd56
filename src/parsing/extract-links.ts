/**
 * Link extraction on parse5's tokenizer: only start tags matter, so no DOM is built. The tokenizer is
 * switched into the text states the tree builder would choose (`<script>`, `<style>`, `<title>`, …), so
 * markup-looking text inside them yields no links.
 */

import { type Token, type TokenHandler, type Tokenizer, TokenizerMode } from "parse5";
import { ErrorCode, UbiError } from "../errors.js";
import { normalizeUrl } from "../url/normalize.js";
import { decodeHtml } from "./decode.js";
import { LinkTokenizer } from "./link-tokenizer.js";
import { parseRobotsContent, relHasNofollow } from "./robots-meta.js";
import type { ExtractedLink, ExtractedPage, ExtractLinksOptions } from "./types.js";

/** Default of {@link ExtractLinksOptions.maxLinks}. */
export const DEFAULT_MAX_LINKS = 10_000;

function attribute(token: Token.TagToken, name: string): string | undefined {
  for (const attr of token.attrs) if (attr.name === name) return attr.value;
  return undefined;
}

/** Collects raw link targets, the first `<base href>` and robots meta flags while tokenizing. */
class LinkScanner implements TokenHandler {
  readonly rawUrls: string[] = [];
  readonly rawNofollow: boolean[] = [];
  baseHref: string | undefined;
  noindex = false;
  nofollow = false;
  tokenizer: Tokenizer | undefined;

  constructor(private readonly robotsNames: readonly string[]) {}

  onStartTag(token: Token.TagToken): void {
    switch (token.tagName) {
      case "a":
      case "area": {
        const href = attribute(token, "href");
        if (href === undefined) return;
        const rel = attribute(token, "rel");
        this.rawUrls.push(href);
        this.rawNofollow.push(rel !== undefined && relHasNofollow(rel));
        return;
      }
      case "iframe":
        this.addSource(token);
        this.setState(TokenizerMode.RAWTEXT);
        return;
      case "frame":
        this.addSource(token);
        return;
      case "base":
        // Only the first <base> with an href counts (HTML's frozen base URL).
        if (this.baseHref === undefined) this.baseHref = attribute(token, "href");
        return;
      case "meta":
        this.readMeta(token);
        return;
      case "script":
        this.setState(TokenizerMode.SCRIPT_DATA);
        return;
      case "style":
      case "xmp":
      case "noembed":
      case "noframes":
        this.setState(TokenizerMode.RAWTEXT);
        return;
      case "title":
      case "textarea":
        this.setState(TokenizerMode.RCDATA);
        return;
      case "plaintext":
        this.setState(TokenizerMode.PLAINTEXT);
        return;
      default:
      // <noscript> stays ordinary markup: a crawler runs no scripts, so it sees what scriptless browsers see.
    }
  }

  private addSource(token: Token.TagToken): void {
    const src = attribute(token, "src");
    if (src === undefined) return;
    this.rawUrls.push(src);
    this.rawNofollow.push(false);
  }

  private readMeta(token: Token.TagToken): void {
    const name = attribute(token, "name");
    const content = attribute(token, "content");
    if (name === undefined || content === undefined) return;
    if (!this.robotsNames.includes(name.trim().toLowerCase())) return;
    const directives = parseRobotsContent(content);
    // The most restrictive directive wins across several tags.
    this.noindex ||= directives.noindex;
    this.nofollow ||= directives.nofollow;
  }

  private setState(state: (typeof TokenizerMode)[keyof typeof TokenizerMode]): void {
    if (this.tokenizer !== undefined) this.tokenizer.state = state;
  }

  // The remaining tokens carry nothing a crawler needs.
  onEndTag(): void {}
  onComment(): void {}
  onDoctype(): void {}
  onEof(): void {}
  onCharacter(): void {}
  onNullCharacter(): void {}
  onWhitespaceCharacter(): void {}
}

function checkOptions(options: ExtractLinksOptions): { maxLinks: number; robotsNames: string[] } {
  const maxLinks = options.maxLinks ?? DEFAULT_MAX_LINKS;
  if (!Number.isSafeInteger(maxLinks) || maxLinks < 0) {
    throw new UbiError(ErrorCode.InvalidArgument, `maxLinks must be a non-negative integer, got ${maxLinks}`);
  }
  const robotsNames = ["robots"];
  const token = options.userAgentToken;
  if (token !== undefined) {
    if (typeof token !== "string" || token.trim().length === 0) {
      throw new UbiError(ErrorCode.InvalidArgument, "userAgentToken must be a non-empty string");
    }
    robotsNames.push(token.trim().toLowerCase());
  }
  if (options.transportCharset !== undefined && typeof options.transportCharset !== "string") {
    throw new UbiError(ErrorCode.InvalidArgument, "transportCharset must be a string");
  }
  return { maxLinks, robotsNames };
}

/**
 * Extracts the links of an HTML page (`<a href>`, `<area href>`, `<frame src>`, `<iframe src>`) as
 * canonical URLs, unique, in document order, plus the page's robots meta flags. Links that do not
 * normalize (javascript:, mailto:, data:, invalid) are skipped. All links resolve against the first
 * `<base href>` wherever it appears (HTML freezes the base for the whole document); a base that is not a
 * valid http(s) URL is ignored. Malformed HTML never throws; `pageUrl` must be a valid http(s) URL.
 */
export function extractLinks(
  html: string | Uint8Array,
  pageUrl: string,
  options: ExtractLinksOptions = {},
): ExtractedPage {
  const { maxLinks, robotsNames } = checkOptions(options);
  const page = normalizeUrl(pageUrl);
  if (page === null)
    throw new UbiError(ErrorCode.InvalidUrl, `page URL is not a valid http(s) URL: ${pageUrl}`);
  const text = typeof html === "string" ? html : decodeHtml(html, options.transportCharset);

  const scanner = new LinkScanner(robotsNames);
  const tokenizer = new LinkTokenizer({ sourceCodeLocationInfo: false }, scanner);
  scanner.tokenizer = tokenizer;
  tokenizer.write(text, true);

  const baseUrl = scanner.baseHref === undefined ? page : (normalizeUrl(scanner.baseHref, page) ?? page);
  const links: ExtractedLink[] = [];
  const indexOf = new Map<string, number>();
  let truncated = false;
  const { rawUrls, rawNofollow } = scanner;
  for (let i = 0; i < rawUrls.length; i++) {
    const url = normalizeUrl(rawUrls[i] as string, baseUrl);
    if (url === null) continue;
    const nofollow = scanner.nofollow || (rawNofollow[i] as boolean);
    const seen = indexOf.get(url);
    if (seen !== undefined) {
      // A link is followable if any of its occurrences is.
      if (!nofollow) (links[seen] as ExtractedLink).nofollow = false;
      continue;
    }
    if (links.length >= maxLinks) {
      truncated = true;
      break;
    }
    indexOf.set(url, links.length);
    links.push({ url, nofollow });
  }
  return { links, noindex: scanner.noindex, nofollow: scanner.nofollow, baseUrl, truncated };
}
