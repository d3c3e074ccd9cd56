import type { ServerResponse } from "node:http";
import { htmlPage } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** Unclosed tags everywhere; the last link's attribute is cut by the end of the file. */
const UNCLOSED =
  '<html><body><div><table><tr><td><a href="/reached/unclosed-1"><b><i><p>text' +
  '<ul><li><a href="/reached/unclosed-2"><span><font><select><option>' +
  "<a href='/reached/unclosed-3'><em>unfinished <div <p <a href=\"/reached/never";

function send(res: ServerResponse, body: Buffer | string): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(200, { "content-type": "text/html", "content-length": bytes.length }).end(bytes);
}

/**
 * Pathological HTML: unclosed tags, a 10 MB attribute, 100,000 links on one page, 100,000-deep
 * nesting. The big pages are built on first request and kept (one instance per web).
 */
export function pathologicalHtmlHost(): HttpHostileHost {
  let bigAttribute: Buffer | undefined;
  let manyLinks: Buffer | undefined;
  let deepNesting: Buffer | undefined;
  return {
    kind: "http",
    label: "pathological-html",
    description:
      "unclosed tags, a 10 MB attribute, 100,000 links, 100,000-deep nesting: parsed in bounded time and memory, links capped",
    entryPaths: ["/"],
    handle(req, res, context) {
      const path = req.url ?? "/";
      const { bigAttributeBytes, manyLinks: linkCount, nestingDepth } = context.options;
      switch (path) {
        case "/":
          send(
            res,
            htmlPage("pathological", ["/unclosed", "/big-attribute", "/deep-nesting", "/many-links"]),
          );
          return;
        case "/unclosed":
          send(res, UNCLOSED);
          return;
        case "/big-attribute":
          bigAttribute ??= Buffer.from(
            `<!doctype html><html><body><div data-x="${"A".repeat(bigAttributeBytes)}"></div>` +
              '<a href="/reached/after-attribute">after</a></body></html>\n',
          );
          send(res, bigAttribute);
          return;
        case "/many-links": {
          if (manyLinks === undefined) {
            const parts: string[] = ["<!doctype html><html><body>\n"];
            for (let i = 0; i < linkCount; i++) parts.push(`<a href="/l/${i}">${i}</a>\n`);
            parts.push("</body></html>\n");
            manyLinks = Buffer.from(parts.join(""));
          }
          send(res, manyLinks);
          return;
        }
        case "/deep-nesting":
          deepNesting ??= Buffer.from(
            `<!doctype html><html><body>${"<div>".repeat(nestingDepth)}` +
              `<a href="/reached/deep">deep</a>${"</div>".repeat(nestingDepth)}</body></html>\n`,
          );
          send(res, deepNesting);
          return;
      }
      if (path.startsWith("/reached/") || path.startsWith("/l/")) {
        send(res, htmlPage(`page ${path}`, []));
        return;
      }
      res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
    },
  };
}
