import robotsParserModule from "robots-parser";
import { request } from "undici";
import type { RunningTestWeb } from "../../src/testweb/index.js";

/** A response read fully. */
export interface Fetched {
  status: number;
  contentType: string;
  location: string | undefined;
  body: Buffer;
}

/** Parses the web's hosts file into name → address (the only name resolution tests use). */
export function parseHostsFile(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [ip, name] = line.trim().split(/\s+/);
    if (ip === undefined || name === undefined || ip.startsWith("#")) continue;
    map.set(name, ip);
  }
  return map;
}

/** GET (or HEAD) `path` on `host` by connecting to `ip` with a Host header: never DNS. */
export async function fetchVia(
  ip: string,
  port: number,
  host: string,
  path: string,
  method: "GET" | "HEAD" = "GET",
): Promise<Fetched> {
  const response = await request(`http://${ip}:${port}${path}`, {
    method,
    headers: { host: `${host}:${port}` },
  });
  const body = Buffer.from(await response.body.arrayBuffer());
  const header = (name: string) => {
    const value = response.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    status: response.statusCode,
    contentType: header("content-type") ?? "",
    location: header("location"),
    body,
  };
}

/** GET `path` on the web's host `host`, at the address the hosts file gives. */
export function fetchHost(web: RunningTestWeb, host: string, path: string, method?: "GET" | "HEAD") {
  const ip = web.model.hosts[web.model.hostIndexByName.get(host) ?? -1]?.ip;
  if (ip === undefined) throw new Error(`unknown host ${host}`);
  return fetchVia(ip, web.port, host, path, method);
}

/** Canonical URL per the crawler's rules: WHATWG, no fragment, unreserved escapes decoded, others uppercased. */
export function canonical(href: string, base: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const rest = (url.pathname + url.search).replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  return `${url.protocol}//${url.host}${rest}`;
}

/** A link found by the minimal extractor. */
export interface ExtractedLink {
  url: string;
  nofollow: boolean;
}

/** Minimal regex link extractor (the web writes double-quoted attributes): a, area, frame, iframe. */
export function extractLinks(
  html: string,
  pageUrl: string,
): { links: ExtractedLink[]; metaNofollow: boolean } {
  const meta = /<meta name="robots" content="([^"]*)"/i.exec(html);
  const metaNofollow = meta !== null && /\bnofollow\b/i.test(meta[1] ?? "");
  const baseHref = /<base href="([^"]*)"/i.exec(html)?.[1];
  const base = baseHref === undefined ? pageUrl : (canonical(baseHref, pageUrl) ?? pageUrl);
  const links: ExtractedLink[] = [];
  for (const match of html.matchAll(/<(a|area|frame|iframe)\b([^>]*)>/gi)) {
    const attributes = match[2] ?? "";
    const tag = (match[1] ?? "").toLowerCase();
    const value = new RegExp(`\\b${tag === "a" || tag === "area" ? "href" : "src"}="([^"]*)"`).exec(
      attributes,
    )?.[1];
    if (value === undefined) continue;
    const url = canonical(value, base);
    if (url === undefined) continue;
    const rel = /\brel="([^"]*)"/.exec(attributes)?.[1] ?? "";
    links.push({ url, nofollow: rel.split(/\s+/).includes("nofollow") });
  }
  return { links, metaNofollow };
}

type RobotsParser = typeof robotsParserModule.default;
/** robots-parser's function (a CommonJS default export that TypeScript sees as a namespace under NodeNext). */
export const parseRobots: RobotsParser =
  typeof robotsParserModule === "function"
    ? (robotsParserModule as RobotsParser)
    : robotsParserModule.default;
