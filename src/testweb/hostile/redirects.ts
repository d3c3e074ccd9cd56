import { htmlPage } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** Redirects that loop: a → b → a, and a page redirecting to itself. */
export const redirectLoopHost: HttpHostileHost = {
  kind: "http",
  label: "redirect-loop",
  description: "/loop/a → /loop/b → /loop/a and /self → /self: each URL fetched once, the loop ends",
  entryPaths: ["/loop/a", "/self"],
  handle(req, res) {
    const location =
      req.url === "/loop/a"
        ? "/loop/b"
        : req.url === "/loop/b"
          ? "/loop/a"
          : req.url === "/self"
            ? "/self"
            : "";
    if (location === "") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
      return;
    }
    res.writeHead(302, { location, "content-length": 0 }).end();
  },
};

const CHAIN = /^\/chain\/(\d+)$/;

/** `/chain/0` → `/chain/1` → … → `/chain/<hops>`, an ordinary page. */
export const redirectChainHost: HttpHostileHost = {
  kind: "http",
  label: "redirect-chain",
  description: "a chain of redirectChainHops 301s ending at a page: every hop fetched once, the end reached",
  entryPaths: ["/chain/0"],
  handle(req, res, context) {
    const hop = Number(CHAIN.exec(req.url ?? "")?.[1] ?? Number.NaN);
    const hops = context.options.redirectChainHops;
    if (!(hop >= 0 && hop <= hops)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
      return;
    }
    if (hop < hops) {
      res.writeHead(301, { location: `/chain/${hop + 1}`, "content-length": 0 }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(htmlPage("end of the chain", []));
  },
};
