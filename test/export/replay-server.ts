import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { REPO_ROOT } from "../agent/harness.js";

/**
 * A loopback HTTP server for replaying a WACZ package in ReplayWeb.page: the `replaywebpage` package's
 * `ui.js` and service worker `sw.js` (at `/replay/sw.js`, the folder it serves), the
 * package itself with byte ranges (ReplayWeb.page reads a WACZ by ranges), and an embedding page,
 * `/?url=URL&ts=TIMESTAMP`, holding one `<replay-web-page>` for that capture.
 */

/** The folder of the `replaywebpage` package. */
const REPLAYWEBPAGE = join(REPO_ROOT, "node_modules", "replaywebpage");

/** A started replay server. */
export interface ReplayServer {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  /** Every path asked of it, in order. */
  readonly requested: string[];
  close(): Promise<void>;
}

/** Serves `waczPath` as `/crawl.wacz` with ReplayWeb.page on 127.0.0.1. */
export async function startReplayServer(waczPath: string): Promise<ReplayServer> {
  const files: Record<string, { path: string; type: string }> = {
    "/ui.js": { path: join(REPLAYWEBPAGE, "ui.js"), type: "application/javascript" },
    "/replay/sw.js": { path: join(REPLAYWEBPAGE, "sw.js"), type: "application/javascript" },
    "/crawl.wacz": { path: waczPath, type: "application/wacz+zip" },
  };
  const requested: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    requested.push(url.pathname);
    if (url.pathname === "/") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(embeddingPage(url.searchParams.get("url") ?? "", url.searchParams.get("ts") ?? ""));
      return;
    }
    const file = files[url.pathname];
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    void serveFile(file, request.headers.range, request.method === "HEAD", response).catch(() => {
      response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requested,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The page embedding the capture of `url` at `ts` (14 digits), ReplayWeb.page's chrome hidden. */
function embeddingPage(url: string, ts: string): string {
  const attribute = (value: string) =>
    value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>replay</title><script src="/ui.js"></script></head>
<body><replay-web-page style="display:block;height:90vh" source="/crawl.wacz" replaybase="/replay/" embed="replayonly" url="${attribute(url)}" ts="${attribute(ts)}"></replay-web-page></body></html>
`;
}

/** Serves a file whole or one `bytes=a-b` range of it. */
async function serveFile(
  file: { path: string; type: string },
  range: string | undefined,
  headOnly: boolean,
  response: import("node:http").ServerResponse,
): Promise<void> {
  const size = (await stat(file.path)).size;
  const match = range === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(range);
  let start = 0;
  let end = size - 1;
  if (match) {
    if (match[1] === "") {
      start = Math.max(0, size - Number(match[2]));
    } else {
      start = Number(match[1]);
      if (match[2] !== "") end = Math.min(end, Number(match[2]));
    }
    if (start > end) {
      response.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
  }
  const headers = {
    "content-type": file.type,
    "content-length": String(end - start + 1),
    "accept-ranges": "bytes",
    ...(match ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
  };
  response.writeHead(match ? 206 : 200, headers);
  if (headOnly) {
    response.end();
    return;
  }
  createReadStream(file.path, { start, end }).pipe(response);
}
