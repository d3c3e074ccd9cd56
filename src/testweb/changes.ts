import { createHash } from "node:crypto";

/** Pages of the test web that change over time (see {@link TestWebOptions.changes}). */
export interface PageChanges {
  /** A changing page gets a new version this often, ms. */
  readonly everyMs: number;
  /** About this percentage of the HTML pages change (chosen by their path); the others never do. */
  readonly percent: number;
}

/** One page as served at a given time: its body, and the validators a conditional GET is checked against. */
export interface PageVersion {
  readonly body: Uint8Array;
  /** Versions since the web started: 0 for a page that never changes. */
  readonly version: number;
  /** A strong ETag of the body. */
  readonly etag: string;
  /** When this version appeared (the web's start for a page that never changes), as an HTTP date. */
  readonly lastModified: string;
}

/** True when the page at `target` (path and query) is one of the changing ones. */
export function isChanging(changes: PageChanges, target: string): boolean {
  return createHash("sha1").update(target).digest().readUInt32BE(0) % 100 < changes.percent;
}

/**
 * The page at `target` as served at `nowMs`, the web having started at `startedAtMs`: a changing HTML
 * page's body ends with a comment naming its version (so its payload digest changes), any other body
 * is as given.
 */
export function pageVersion(
  changes: PageChanges,
  startedAtMs: number,
  target: string,
  response: { readonly body: Uint8Array; readonly contentType: string },
  nowMs: number,
): PageVersion {
  const html = response.contentType.startsWith("text/html");
  const version =
    html && isChanging(changes, target)
      ? Math.max(0, Math.floor((nowMs - startedAtMs) / changes.everyMs))
      : 0;
  const body =
    version === 0
      ? response.body
      : Buffer.concat([response.body, Buffer.from(`\n<!-- version ${version} -->\n`)]);
  const etag = `"${createHash("sha1").update(body).digest("hex").slice(0, 20)}"`;
  // HTTP dates have whole seconds: a version's date is the second it appeared in.
  const lastModified = new Date(startedAtMs + version * changes.everyMs).toUTCString();
  return { body, version, etag, lastModified };
}

/**
 * Whether a GET with these conditional headers is answered `304 Not Modified` for `page` (RFC 9110
 * §13.2.2): `If-None-Match` when given (a weak comparison, `*` matching any), else `If-Modified-Since`
 * no earlier than the page's `Last-Modified`.
 */
export function notModified(
  page: Pick<PageVersion, "etag" | "lastModified">,
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
): boolean {
  if (ifNoneMatch !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
    return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(page.etag));
  }
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return !Number.isNaN(since) && since >= Date.parse(page.lastModified);
}
