import type { HostInfo } from "./model.js";

/** User agent token of the host-specific robots.txt group (what ubicrawl's user agent starts with). */
export const ROBOTS_AGENT_TOKEN = "ubicrawl";

/** How `/robots.txt` of a host answers: a status and, for 200, the file. */
export interface RobotsAnswer {
  readonly status: number;
  readonly body: string;
}

function rules(host: HostInfo, extra: string): string {
  let text = `Disallow: /private/\nAllow: /private/open\n${extra}`;
  if (host.disallowPdf) text += "Disallow: /media/*.pdf$\n";
  if (host.crawlDelaySeconds !== undefined) text += `Crawl-delay: ${host.crawlDelaySeconds}\n`;
  return text;
}

/** The robots.txt answer of `host` (404 when it has none, 403 = allow all, 503 = disallow all). */
export function robotsAnswer(host: HostInfo): RobotsAnswer {
  switch (host.robots) {
    case "forbidden":
      return { status: 403, body: "Forbidden\n" };
    case "unavailable":
      return { status: 503, body: "Service Unavailable\n" };
    case "rules":
      return { status: 200, body: `# robots.txt for ${host.name}\nUser-agent: *\n${rules(host, "")}` };
    case "rules-ubicrawl":
      return {
        status: 200,
        body:
          `# robots.txt for ${host.name}\nUser-agent: *\n${rules(host, "")}\n` +
          `User-agent: ${ROBOTS_AGENT_TOKEN}\n${rules(host, "Disallow: /drafts/\n")}`,
      };
    default:
      return { status: 404, body: "Not Found\n" };
  }
}
