import { htmlPage } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** Every page links to five more, each with a session id never seen before. */
export function sessionIdsHost(): HttpHostileHost {
  let next = 0;
  return {
    kind: "http",
    label: "session-ids",
    description: "a fresh session id in every link: an infinite URL space, bounded by the crawler's limits",
    entryPaths: ["/"],
    handle(req, res) {
      const path = (req.url ?? "/").split("?")[0] as string;
      if (path !== "/" && !/^\/page\/\d+$/.test(path)) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
        return;
      }
      const links: string[] = [];
      for (let i = 0; i < 5; i++)
        links.push(`/page/${i}?sid=${(next++).toString(36)}x${Date.now().toString(36)}`);
      res.writeHead(200, { "content-type": "text/html" }).end(htmlPage(`session page ${path}`, links));
    },
  };
}

const DAY = /^\/cal\/(\d{1,6})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

function dayPath(ms: number): string {
  return `/cal/${new Date(ms).toISOString().slice(0, 10)}`;
}

/** An endless calendar: every day links to the next and previous day, month and year. */
export const calendarHost: HttpHostileHost = {
  kind: "http",
  label: "calendar",
  description: "an endless calendar (next/previous day, month, year): bounded by the crawler's limits",
  entryPaths: ["/cal/2024-01-01"],
  handle(req, res) {
    const match = DAY.exec(req.url ?? "");
    const ms =
      match === null ? Number.NaN : Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
    if (!Number.isFinite(ms)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
      return;
    }
    const links = [ms + DAY_MS, ms - DAY_MS, ms + 30 * DAY_MS, ms - 30 * DAY_MS, ms + 365 * DAY_MS].map(
      dayPath,
    );
    res.writeHead(200, { "content-type": "text/html" }).end(htmlPage(dayPath(ms), links));
  },
};
