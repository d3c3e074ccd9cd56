import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { OPEN_SUFFIX, warcFileCompression } from "../storage/warc-file-name.js";
import type { Capture, RecentCaptures } from "./recent-captures.js";

/**
 * The console's replay of recent fetches in ReplayWeb.page, served by the agent itself: a page per
 * capture (`/capture?url=…&ts=…`) embedding `<replay-web-page>`, whose source is that capture's own
 * CDXJ index (`/archive/<ts>/<url, base64url>/index.cdxj`: the capture's line and its host's latest
 * ones, each revisit with its original when this agent stored it lately, so the page's frames render
 * too; see `RecentCaptures.indexOf`); ReplayWeb.page reads the records it names from the WARC files
 * beside it (`/archive/<ts>/<url>/<file name>`, by byte ranges, the live `.open` file included). Only
 * the files that index names are served, read-only. ReplayWeb.page itself (`ui.js`, `sw.js`) comes from
 * the `replaywebpage` package when it is installed (AGPL-3.0, so not a dependency of ubicrawl).
 */

/** Where the capture page is served. */
export const CAPTURE_PAGE = "/capture";
/** The folder of ReplayWeb.page's service worker: its scope, where it serves the replayed pages. */
const REPLAY_BASE = "/replay/";
const ARCHIVE_PREFIX = "/archive/";

/** What the replay reads from the agent. */
export interface CaptureSource {
  /** The folder of the agent's WARC files. */
  readonly folder: string;
  readonly captures: RecentCaptures;
}

/** The console's link to the replay of `capture`, or undefined when ReplayWeb.page cannot read its file. */
export function replayLinkOf(capture: Capture): string | undefined {
  if (warcFileCompression(capture.filename) !== "gzip") return undefined;
  const query = new URLSearchParams({ url: capture.url, ts: capture.timestamp });
  return `${CAPTURE_PAGE}?${query}`;
}

const require = createRequire(import.meta.url);

/** The `replaywebpage` package's file `name`, or undefined when the package is not installed. */
function replayWebPageFile(name: "ui.js" | "sw.js"): string | undefined {
  try {
    // Its exports name no file of the package's root: found from its main module (`dist/index.js`).
    return join(dirname(require.resolve("replaywebpage")), "..", name);
  } catch {
    return undefined;
  }
}

/**
 * Answers `url` when it is one of the replay's paths (returns false otherwise). `source` is undefined
 * while the agent is not crawling yet.
 */
export async function serveReplay(
  url: URL,
  range: string | undefined,
  source: CaptureSource | undefined,
  response: ServerResponse,
): Promise<boolean> {
  const { pathname } = url;
  if (pathname === `${REPLAY_BASE}sw.js` || pathname === `${REPLAY_BASE}ui.js`) {
    const path = replayWebPageFile(pathname === `${REPLAY_BASE}sw.js` ? "sw.js" : "ui.js");
    if (path === undefined) sendText(response, 404, NO_REPLAYWEBPAGE);
    else await sendFile(response, path, "text/javascript; charset=utf-8", range, false);
    return true;
  }
  if (pathname === CAPTURE_PAGE) {
    const target = url.searchParams.get("url") ?? "";
    const ts = url.searchParams.get("ts") ?? "";
    if (replayWebPageFile("ui.js") === undefined) sendText(response, 501, NO_REPLAYWEBPAGE);
    else if (source?.captures.indexOf(target, ts) === undefined) sendText(response, 404, NOT_KEPT);
    else sendHtml(response, capturePage(target, ts));
    return true;
  }
  if (!pathname.startsWith(ARCHIVE_PREFIX)) return false;
  const [ts = "", encodedUrl = "", name = "", ...rest] = pathname.slice(ARCHIVE_PREFIX.length).split("/");
  const captures =
    rest.length === 0
      ? source?.captures.indexOf(Buffer.from(encodedUrl, "base64url").toString(), ts)
      : undefined;
  if (source === undefined || captures === undefined) {
    sendText(response, 404, NOT_KEPT);
  } else if (name === "index.cdxj") {
    sendText(response, 200, captures.map((capture) => capture.line).join(""), "text/x-cdxj; charset=utf-8");
  } else if (captures.some((capture) => capture.filename === name)) {
    await sendWarcFile(response, join(source.folder, name), range);
  } else {
    sendText(response, 404, "not a file of this capture's index\n");
  }
  return true;
}

const NO_REPLAYWEBPAGE =
  "replay needs ReplayWeb.page: install the replaywebpage package beside ubicrawl (npm install replaywebpage)\n";
const NOT_KEPT =
  "no such capture among this agent's recent ones (the console keeps the last few thousand URLs)\n";

/** The page of the capture of `url` at `ts` (14 digits), ReplayWeb.page's chrome hidden. */
function capturePage(url: string, ts: string): string {
  const attribute = (value: string) =>
    value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const source = `${ARCHIVE_PREFIX}${ts}/${Buffer.from(url).toString("base64url")}/index.cdxj`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${attribute(url)} at ${ts} — ubicrawl</title>
<script src="${REPLAY_BASE}ui.js"></script></head>
<body style="margin:0"><replay-web-page style="display:block;height:100vh" source="${attribute(source)}" replaybase="${REPLAY_BASE}" embed="replayonly" url="${attribute(url)}" ts="${attribute(ts)}"></replay-web-page></body></html>
`;
}

/** Serves WARC file `path`, or the live file (`.open`) of that name while it is written. */
async function sendWarcFile(
  response: ServerResponse,
  path: string,
  range: string | undefined,
): Promise<void> {
  for (const candidate of [path, `${path}${OPEN_SUFFIX}`]) {
    if (await sendFile(response, candidate, "application/warc", range, true)) return;
  }
  sendText(response, 404, "the WARC file is no longer in the agent's folder (moved off?)\n");
}

/**
 * Serves file `path` whole or one `bytes=a-b` range of it; resolves false, sending nothing, when it is
 * missing and `missingOk`.
 */
async function sendFile(
  response: ServerResponse,
  path: string,
  contentType: string,
  range: string | undefined,
  missingOk: boolean,
): Promise<boolean> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    if (missingOk && (error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const match = range === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(range);
  let start = 0;
  let end = size - 1;
  if (match) {
    if (match[1] === "") start = Math.max(0, size - Number(match[2]));
    else start = Number(match[1]);
    if (match[1] !== "" && match[2] !== "") end = Math.min(end, Number(match[2]));
    if (start > end) {
      response.writeHead(416, { "Content-Range": `bytes */${size}` }).end();
      return true;
    }
  }
  response.writeHead(match ? 206 : 200, {
    "Content-Type": contentType,
    "Content-Length": String(end - start + 1),
    "Accept-Ranges": "bytes",
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    ...(match ? { "Content-Range": `bytes ${start}-${end}/${size}` } : {}),
  });
  if (response.req.method === "HEAD" || end < start) {
    response.end();
    return true;
  }
  await new Promise<void>((resolve, reject) => {
    const input = createReadStream(path, { start, end });
    input.once("error", reject);
    response.once("close", resolve);
    input.pipe(response);
  });
  return true;
}

function sendText(response: ServerResponse, status: number, body: string, type = "text/plain"): void {
  response.writeHead(status, {
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  response.end(response.req.method === "HEAD" ? undefined : body);
}

function sendHtml(response: ServerResponse, body: string): void {
  response.writeHead(200, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  response.end(response.req.method === "HEAD" ? undefined : body);
}
