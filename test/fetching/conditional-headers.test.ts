import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { Fetcher, HostsFileResolver, NetPolicy } from "../../src/fetching/index.js";
import { startServer } from "./loopback.js";

const LOOPBACK = new NetPolicy({ allow: ["127.0.0.0/8"] });
const HOSTS = new HostsFileResolver("127.0.0.1 a.test\n");

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("Fetcher: further request headers (a recrawl's conditional GET)", () => {
  it("sends them after its own, records them as sent, and returns a 304 as it came", async () => {
    const server = await startServer((req, res) => {
      if (req.headers["if-none-match"] === '"v1"') res.writeHead(304, { etag: '"v1"' }).end();
      else res.writeHead(200, { etag: '"v1"' }).end("page");
    }, "127.0.0.1");
    cleanups.push(() => server.close());
    const fetcher = new Fetcher({}, { resolver: HOSTS, netPolicy: LOOPBACK });
    cleanups.push(() => fetcher.close());
    const url = `http://a.test:${server.port}/`;
    const headers = [
      ["if-none-match", '"v1"'],
      ["if-modified-since", "Sat, 28 Nov 2026 10:00:00 GMT"],
    ] as const;
    const first = await fetcher.fetch(url);
    const second = await fetcher.fetch(url, { headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(304);
    expect(second.rawBody.byteLength).toBe(0);
    expect(server.requests[0]?.headers["if-none-match"]).toBeUndefined();
    expect(server.requests[1]?.headers["if-modified-since"]).toBe("Sat, 28 Nov 2026 10:00:00 GMT");
    expect(second.requestHeaders.slice(-2)).toEqual(headers.map(([name, value]) => [name, value]));
  });

  it("refuses a value that would split the request, or a name that is not a token", async () => {
    const fetcher = new Fetcher({}, { resolver: HOSTS, netPolicy: LOOPBACK });
    cleanups.push(() => fetcher.close());
    await expect(
      fetcher.fetch("http://a.test/", { headers: [["if-none-match", '"a"\r\nx: y']] }),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await expect(fetcher.fetch("http://a.test/", { headers: [["if none", "x"]] })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
  });
});
