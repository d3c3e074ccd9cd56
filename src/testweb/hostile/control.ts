import { htmlPage } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** Label of the well-behaved control host. */
export const CONTROL_LABEL = "control";

const PAGE = /^\/page\/(\d+)$/;

/** The control host's page paths, home first: what a crawler must fetch whatever its neighbours do. */
export function controlPaths(pages: number): string[] {
  const paths = ["/"];
  for (let i = 1; i <= pages; i++) paths.push(`/page/${i}`);
  return paths;
}

/**
 * A well-behaved host beside the hostile ones: its home page links to its own pages and to every
 * hostile entry URL; each page links to the next and home.
 */
export const controlHost: HttpHostileHost = {
  kind: "http",
  label: CONTROL_LABEL,
  description: "a normal site: every page must be fetched, at full speed, whatever the other hosts do",
  entryPaths: ["/"],
  handle(req, res, context) {
    const pages = context.options.controlPages;
    const path = req.url ?? "/";
    if (path === "/") {
      const own = controlPaths(pages).slice(1);
      res.writeHead(200, { "content-type": "text/html" });
      res.end(htmlPage("control home", [...own, ...context.hostileEntryUrls()]));
      return;
    }
    const index = Number(PAGE.exec(path)?.[1] ?? Number.NaN);
    if (!(index >= 1 && index <= pages)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
      return;
    }
    const links = index < pages ? [`/page/${index + 1}`, "/"] : ["/"];
    res.writeHead(200, { "content-type": "text/html" }).end(htmlPage(`control page ${index}`, links));
  },
};
