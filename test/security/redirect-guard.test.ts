import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { readCrawlLogOf, runUbicrawl } from "../agent/harness.js";

/**
 * A redirect is queued as a new URL and fetched through the same connect-time address check as any
 * link: a public-looking name that redirects to a name (or IP) outside --allow-net must not be reached.
 */

interface Recorder {
  readonly server: Server;
  readonly port: number;
  readonly paths: string[];
}

async function serve(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? "");
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, paths } satisfies Recorder;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

let dir: string;
let allowed: Recorder;
let forbidden: Recorder;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-redirect-"));
  // Outside --allow-net 127.1.0.0/16: the agent must never connect here.
  forbidden = await serve("127.3.0.1", (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<a href='/deeper'>secret</a>");
  });
  const redirects: Record<string, string> = {
    "/to-forbidden-name": `http://intranet.example:${forbidden.port}/secret`,
    "/to-forbidden-ip": `http://127.3.0.1:${forbidden.port}/literal`,
    "/to-file": "file:///etc/passwd",
    "/to-javascript": "javascript:alert(1)",
  };
  allowed = await serve("127.1.0.1", (req, res) => {
    const path = req.url ?? "";
    const target = redirects[path];
    if (target !== undefined) {
      res.writeHead(302, { location: target }).end();
    } else if (path === "/to-allowed") {
      res.writeHead(301, { location: `http://www.public.example:${allowed.port}/landing` }).end();
    } else if (path === "/") {
      const links = [...Object.keys(redirects), "/to-allowed"].map((href) => `<a href="${href}">x</a>`);
      res.writeHead(200, { "content-type": "text/html" }).end(`<html><body>${links.join("")}</body></html>`);
    } else if (path === "/landing") {
      res.writeHead(200, { "content-type": "text/html" }).end("<p>landed</p>");
    } else {
      res.writeHead(404).end();
    }
  });
  await writeFile(
    join(dir, "hosts"),
    [
      "127.1.0.1 public.example www.public.example",
      // A public-looking name that resolves to a forbidden address: the check is after resolution.
      "127.3.0.1 intranet.example",
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  await Promise.all([close(allowed.server), close(forbidden.server)]);
  await rm(dir, { recursive: true, force: true });
});

describe("redirects and --allow-net", () => {
  it("follows a redirect to an allowed address but never connects to a forbidden one", async () => {
    const data = join(dir, "data");
    const result = await runUbicrawl(
      [
        "agent",
        "--id",
        "r1",
        "--data",
        data,
        "--seeds",
        `http://public.example:${allowed.port}/`,
        "--hosts-file",
        join(dir, "hosts"),
        "--allow-net",
        "127.1.0.0/16",
        "--delay-ms",
        "0",
        "--robots-retry-ms",
        "50",
        "--max-robots-attempts",
        "1",
        "--exit-when-done",
        "--progress",
        "off",
      ],
      { cwd: dir },
    ).waitForExit(30_000);
    expect(result.code, result.stderr).toBe(0);

    expect(forbidden.paths).toEqual([]);
    const log = await readCrawlLogOf(data);
    const byUrl = new Map(log.map((entry) => [entry.url, entry]));
    const base = `http://public.example:${allowed.port}`;
    for (const path of ["/to-forbidden-name", "/to-forbidden-ip", "/to-file", "/to-javascript"]) {
      expect(byUrl.get(`${base}${path}`)?.status, path).toBe(302);
    }
    // The allowed redirect was followed: the mechanism works, so the refusals below are the policy's.
    expect(byUrl.get(`http://www.public.example:${allowed.port}/landing`)?.status).toBe(200);
    expect(allowed.paths).toContain("/landing");

    const refused = log.filter((entry) => entry.url.includes(`:${forbidden.port}/`));
    expect(refused.map((entry) => entry.url).sort()).toEqual([
      `http://127.3.0.1:${forbidden.port}/literal`,
      `http://intranet.example:${forbidden.port}/secret`,
    ]);
    for (const entry of refused) {
      expect(entry.status).toBe(0);
      expect(entry.error).toBe(ErrorCode.AddressForbidden);
    }
    // Non-http(s) targets are dropped at normalization: never queued, never fetched.
    expect(log.some((entry) => !/^https?:\/\//.test(entry.url))).toBe(false);
  });
});
