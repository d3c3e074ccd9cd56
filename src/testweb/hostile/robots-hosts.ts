import { htmlPage, randomBytes } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** The first rules of the huge robots.txt: within any sane size cap. */
const HUGE_ROBOTS_HEAD = "User-agent: *\nDisallow: /private\n";
/** The last rule of the huge robots.txt: past any sane size cap, so a capped parser never sees it. */
const HUGE_ROBOTS_TAIL = "Disallow: /late\n";

function hugeRobotsText(size: number): Buffer {
  const parts = [HUGE_ROBOTS_HEAD];
  let length = HUGE_ROBOTS_HEAD.length + HUGE_ROBOTS_TAIL.length;
  for (let i = 0; length < size; i++) {
    const line = `Disallow: /filler/${i}/\n`;
    parts.push(line);
    length += line.length;
  }
  parts.push(HUGE_ROBOTS_TAIL);
  return Buffer.from(parts.join(""));
}

/** A robots.txt of `hugeRobotsBytes` (10 MB): its head disallows `/private`, its tail `/late`. */
export function robotsHugeHost(): HttpHostileHost {
  let robots: Buffer | undefined;
  return {
    kind: "http",
    label: "robots-huge",
    description: "a 10 MB robots.txt: only its first 500 KiB apply (/private disallowed, /late not)",
    entryPaths: ["/"],
    ownRobots: true,
    handle(req, res, context) {
      const path = req.url ?? "/";
      if (path === "/robots.txt") {
        robots ??= hugeRobotsText(context.options.hugeRobotsBytes);
        res.writeHead(200, { "content-type": "text/plain", "content-length": robots.length }).end(robots);
        return;
      }
      const links = path === "/" ? ["/private/secret", "/late/page", "/open"] : [];
      res.writeHead(200, { "content-type": "text/html" }).end(htmlPage(`robots-huge ${path}`, links));
    },
  };
}

/** A robots.txt of random binary bytes around one valid group (`Disallow: /blocked`). */
export const robotsBinaryHost: HttpHostileHost = {
  kind: "http",
  label: "robots-binary",
  description: "a binary, malformed robots.txt around one valid group: garbage ignored, /blocked disallowed",
  entryPaths: ["/"],
  ownRobots: true,
  handle(req, res, context) {
    const path = req.url ?? "/";
    if (path === "/robots.txt") {
      const body = Buffer.concat([
        randomBytes(context.options.seed, 16_384),
        Buffer.from("\nUser-agent: *\nDisallow: /blocked\n"),
        randomBytes(context.options.seed + 1, 16_384),
      ]);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
      res.end(body);
      return;
    }
    const links = path === "/" ? ["/blocked/page", "/open"] : [];
    res.writeHead(200, { "content-type": "text/html" }).end(htmlPage(`robots-binary ${path}`, links));
  },
};

/** robots.txt never answered (the request is held until the client gives up). */
export const robotsTimeoutHost: HttpHostileHost = {
  kind: "http",
  label: "robots-timeout",
  description: "robots.txt never answers: unavailable (disallow all), retried, then the host is given up",
  entryPaths: ["/"],
  ownRobots: true,
  handle(req, res) {
    if (req.url === "/robots.txt") return; // held; closed with the connection
    res.writeHead(200, { "content-type": "text/html" }).end(htmlPage("must not be fetched", []));
  },
};

/** robots.txt answers 503. */
export const robots5xxHost: HttpHostileHost = {
  kind: "http",
  label: "robots-5xx",
  description: "robots.txt answers 503: unavailable (disallow all), retried, then the host is given up",
  entryPaths: ["/"],
  ownRobots: true,
  handle(req, res) {
    if (req.url === "/robots.txt") {
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "3600" }).end("down\n");
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(htmlPage("must not be fetched", []));
  },
};
