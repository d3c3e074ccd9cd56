import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import { runUbicrawl } from "./harness.js";

/**
 * The two last robots.txt cases of Google's conformance suite (google/robotstxt-spec-test) that an
 * agent answered the other way, seen from the server: what a real agent requests. Its User-Agent is
 * `Foo Bar`, which names no product token (RFC 9309 §2.2.1), so it obeys only the `*` groups.
 */

/** robots.txt of each host: the suite's two cases, and a rule whose path is written with an escape. */
const ROBOTS: Readonly<Record<string, string>> = {
  // user-agent-name.textproto: the `Foo Bar` group is read as `Foo`, which a `Foo Bar` crawler is not.
  "named.robots.test": "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n",
  // non-ascii-paths.textproto: an escaped unreserved path allows the URL it names.
  "escaped.robots.test": "User-agent: *\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n",
  // The other way: a Disallow written with `%7E` keeps the agent from `/~user/`, as it requests it.
  "tilde.robots.test": "User-agent: *\nDisallow: /%7Euser/\n",
};

let dir: string;
let server: Server;
let port: number;
const served: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-robots-server-side-"));
  server = createServer((request, response) => {
    const host = (request.headers.host ?? "").split(":")[0] ?? "";
    served.push(`${host}${request.url ?? "/"}`);
    const robots = ROBOTS[host];
    if (request.url === "/robots.txt" && robots !== undefined) {
      response.writeHead(200, { "content-type": "text/plain" }).end(robots);
      return;
    }
    response.writeHead(200, { "content-type": "text/html" }).end("<html><body>page</body></html>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(
    join(dir, "hosts"),
    Object.keys(ROBOTS).map((host) => `127.0.0.1 ${host}\n`),
  );
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("an agent whose User-Agent is Foo Bar, on the suite's last two differences", () => {
  it("keeps out of /x/y (the Foo Bar group is not its), fetches /foo/bar/%62%61%7A, and not /~user/", async () => {
    const result = await runUbicrawl(
      agentArgv({
        ...testWebAgentFlags(join(dir, "hosts")),
        sitemaps: "off",
        id: "foo-bar",
        data: join(dir, "data"),
        "user-agent": "Foo Bar",
        seeds: [
          `http://named.robots.test:${port}/x/y`,
          `http://escaped.robots.test:${port}/foo/bar/%62%61%7A`,
          `http://tilde.robots.test:${port}/~user/page`,
          `http://tilde.robots.test:${port}/open`,
        ],
      }),
    ).waitForExit(60_000);
    expect(result.code, result.stderr).toBe(0);
    // An agent requests URLs in their canonical form: `%62%61%7A` is `baz` (RFC 3986 §6.2.2.2).
    expect(served.filter((request) => !request.endsWith("/robots.txt")).sort()).toEqual([
      "escaped.robots.test/foo/bar/baz",
      "tilde.robots.test/open",
    ]);
  }, 90_000);
});
