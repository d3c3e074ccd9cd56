import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  classifyFetchError,
  Fetcher,
  type FetcherOptions,
  failureReason,
  HostsFileResolver,
  NetPolicy,
} from "../../src/fetching/index.js";
import { type LoopbackServer, startServer } from "./loopback.js";

const LOOPBACK = new NetPolicy({ allow: ["127.0.0.0/8"] });
const HOSTS = new HostsFileResolver("127.0.0.1 a.test\n127.0.0.2 b.test\n");

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, host?: string) {
  const server = await startServer(handler, host);
  cleanups.push(() => server.close());
  return server;
}

function fetcher(options: FetcherOptions = {}, netPolicy = LOOPBACK): Fetcher {
  const f = new Fetcher(options, { resolver: HOSTS, netPolicy });
  cleanups.push(() => f.close());
  return f;
}

const url = (s: LoopbackServer, path = "/", name = s.host) => `http://${name}:${s.port}${path}`;

describe("Fetcher: resolution and network policy", () => {
  it("connects to the IP the hosts file gives each name, and sends Host and User-Agent", async () => {
    const a = await serve((_req, res) => res.end("from A"), "127.0.0.1");
    const b = await serve((_req, res) => res.end("from B"), "127.0.0.2");
    const f = fetcher();
    const ra = await f.fetch(url(a, "/x?y=1", "a.test"));
    const rb = await f.fetch(url(b, "/", "b.test"));
    expect(ra.body.toString()).toBe("from A");
    expect(ra.ip).toBe("127.0.0.1");
    expect(rb.body.toString()).toBe("from B");
    expect(rb.ip).toBe("127.0.0.2");
    const req = a.requests[0];
    expect(req.url).toBe("/x?y=1");
    expect(ra.requestTarget).toBe(req.url);
    expect(req.headers.host).toBe(`a.test:${a.port}`);
    expect(req.headers["user-agent"]).toBe("ubicrawl/0.1 (+https://github.com/ubicrawl/ubicrawl)");
    expect(req.headers["accept-encoding"]).toBe("gzip, deflate, br");
    expect(ra.requestHeaders[0]).toEqual(["host", `a.test:${a.port}`]);
    expect(ra.requestHeaders).toContainEqual(["user-agent", req.headers["user-agent"]]);
    expect(ra.httpVersion).toBe("1.1");
  });

  it("sends each request to the address it names, never over a connection kept alive to another", async () => {
    const seen: string[] = [];
    const answer = (req: IncomingMessage, res: ServerResponse) => {
      seen.push(req.socket.localAddress ?? "");
      res.end("ok");
    };
    const first = await serve(answer, "127.0.0.1");
    // The same port on another loopback address: the origin (a.test:PORT) is the same.
    const second = createServer(answer);
    await new Promise<void>((resolve) => second.listen(first.port, "127.0.0.2", resolve));
    cleanups.push(() => new Promise<void>((resolve) => second.close(() => resolve())));
    const f = fetcher();
    const at = async (ip?: string) =>
      (await f.fetch(url(first, "/", "a.test"), ip === undefined ? {} : { ip })).ip;
    expect(await at("127.0.0.1")).toBe("127.0.0.1");
    expect(await at("127.0.0.1")).toBe("127.0.0.1");
    expect(first.connections).toBe(1);
    // The host moved: its next request goes to the new address, over a new connection.
    expect(await at("127.0.0.2")).toBe("127.0.0.2");
    // Not given one, the resolver's answer now (the hosts file's 127.0.0.1).
    expect(await at()).toBe("127.0.0.1");
    expect(seen).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.1"]);
    expect(first.connections).toBe(2);
    second.closeAllConnections();
  });

  it("fails at once with DnsNotFound for a name missing from the hosts file", async () => {
    await expect(fetcher().fetch("http://unknown.test/")).rejects.toMatchObject({
      code: ErrorCode.DnsNotFound,
    });
  });

  it("refuses loopback without --allow-net and never connects", async () => {
    const a = await serve((_req, res) => res.end("nope"));
    const f = fetcher({}, new NetPolicy());
    await expect(f.fetch(url(a, "/", "a.test"))).rejects.toMatchObject({ code: ErrorCode.AddressForbidden });
    await expect(f.fetch(url(a))).rejects.toMatchObject({ code: ErrorCode.AddressForbidden });
    expect(a.connections).toBe(0);
  });

  it("rejects non-http URLs", async () => {
    await expect(fetcher().fetch("ftp://a.test/")).rejects.toMatchObject({ code: ErrorCode.InvalidUrl });
    await expect(fetcher().fetch("not a url")).rejects.toMatchObject({ code: ErrorCode.InvalidUrl });
  });
});

describe("Fetcher: responses", () => {
  const text = "hello, compressed world! ".repeat(200);
  const encodings: [string, Buffer][] = [
    ["gzip", gzipSync(text)],
    ["deflate", deflateSync(text)],
    ["deflate", deflateRawSync(text)], // raw deflate, as many servers send
    ["br", brotliCompressSync(text)],
  ];

  it.each(encodings.map(([name, bytes], i) => [`${name}#${i}`, name, bytes] as const))(
    "decodes %s and keeps rawBody encoded",
    async (_label, encoding, bytes) => {
      const s = await serve((_req, res) => {
        res.writeHead(200, { "Content-Type": 'text/html; Charset="UTF-8"', "Content-Encoding": encoding });
        res.end(bytes);
      });
      const r = await fetcher().fetch(url(s));
      expect(r.body.toString()).toBe(text);
      expect(r.rawBody.equals(bytes)).toBe(true);
      expect(r.wireBytes).toBe(bytes.length);
      expect(r.truncated).toBe(false);
      expect(r.contentType).toBe("text/html");
      expect(r.charset).toBe("utf-8");
    },
  );

  it("returns identity bodies as the same Buffer and keeps raw header names in order", async () => {
    const s = await serve((_req, res) => {
      res.setHeader("X-First", "1");
      res.setHeader("content-TYPE", "Text/Plain");
      res.end("plain");
    });
    const r = await fetcher().fetch(url(s));
    expect(r.body).toBe(r.rawBody);
    expect(r.contentType).toBe("text/plain");
    expect(r.charset).toBeUndefined();
    const names = r.responseHeaders.map(([n]) => n);
    expect(names.slice(0, 2)).toEqual(["X-First", "content-TYPE"]);
  });

  it("fails with DecodeFailed on a corrupt gzip body", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Encoding": "gzip" });
      res.end("this is not gzip at all");
    });
    await expect(fetcher().fetch(url(s))).rejects.toMatchObject({ code: ErrorCode.DecodeFailed });
  });

  it("returns a redirect as-is without following it", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/old") {
        res.writeHead(301, { Location: "/new" });
        res.end();
      } else res.end("new page");
    });
    const r = await fetcher().fetch(url(s, "/old"));
    expect(r.status).toBe(301);
    expect(r.responseHeaders).toContainEqual(["Location", "/new"]);
    expect(s.requests.map((q) => q.url)).toEqual(["/old"]);
  });

  it("tells onSent when the request is written, before the server reads it, on a new connection and a kept one", async () => {
    const events: string[] = [];
    const s = await serve((req, res) => {
      events.push(`served ${req.url}`);
      res.end("ok");
    });
    const f = fetcher();
    for (const path of ["/a", "/b"]) {
      events.push(`fetch ${path}`);
      await f.fetch(url(s, path), { onSent: () => events.push(`sent ${path}`) > 0 });
    }
    expect(events).toEqual(["fetch /a", "sent /a", "served /a", "fetch /b", "sent /b", "served /b"]);
    expect(s.connections).toBe(1);
  });

  it("does not tell onSent of a request never written (its connection refused)", async () => {
    const s = await serve((_req, res) => res.end("ok"));
    const port = s.port;
    await s.close();
    let sent = 0;
    const error = await fetcher()
      .fetch(`http://127.0.0.1:${port}/`, { onSent: () => ++sent > 0 })
      .catch((e: unknown) => e);
    expect(classifyFetchError(error)).toBe(ErrorCode.ConnectFailed);
    expect(sent).toBe(0);
  });

  it("writes nothing when onSent answers false (its slot lapsed on its way): StartLapsed, and the next goes", async () => {
    const s = await serve((req, res) => res.end(req.url));
    const f = fetcher();
    const error = await f.fetch(url(s, "/late"), { onSent: () => false }).catch((e: unknown) => e);
    expect(isUbiError(error, ErrorCode.StartLapsed)).toBe(true);
    const result = await f.fetch(url(s, "/next"), { onSent: () => true });
    expect(result.body.toString()).toBe("/next");
    expect(s.requests.map((req) => req.url)).toEqual(["/next"]);
  });

  it("reuses one keep-alive connection across sequential fetches", async () => {
    const s = await serve((req, res) => res.end(req.url));
    const f = fetcher();
    for (const path of ["/1", "/2", "/3", "/4"])
      expect((await f.fetch(url(s, path))).body.toString()).toBe(path);
    expect(s.requests.length).toBe(4);
    expect(s.connections).toBe(1);
  });

  it("aborts on the caller's signal with its reason", async () => {
    const s = await serve(() => {}); // never answers
    const controller = new AbortController();
    const pending = fetcher().fetch(url(s), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await expect(pending).rejects.toThrow("caller gave up");
  });
});

describe("Fetcher: caps", () => {
  it("truncates a body over maxBodyBytes and says so", async () => {
    const s = await serve((_req, res) => res.end(Buffer.alloc(50_000, 97)));
    const r = await fetcher({ maxBodyBytes: 1000 }).fetch(url(s));
    expect(r.truncated).toBe(true);
    expect(r.rawBody.length).toBe(1000);
    expect(r.body.length).toBe(1000);
    expect(r.wireBytes).toBeGreaterThan(1000);
  });

  it("rejects with BodyTooLarge in error mode", async () => {
    const s = await serve((_req, res) => res.end(Buffer.alloc(50_000, 97)));
    await expect(fetcher({ maxBodyBytes: 1000, bodyOverflow: "error" }).fetch(url(s))).rejects.toMatchObject({
      code: ErrorCode.BodyTooLarge,
    });
  });

  it("stops a gzip bomb at the decoded cap", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MiB of zeros in ~64 KiB
    expect(bomb.length).toBeLessThan(200_000);
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Encoding": "gzip", "Content-Type": "text/html" });
      res.end(bomb);
    });
    const cap = 1024 * 1024;
    const r = await fetcher({ maxBodyBytes: cap }).fetch(url(s));
    expect(r.rawBody.equals(bomb)).toBe(true);
    expect(r.body.length).toBe(cap);
    expect(r.truncated).toBe(true);
    await expect(fetcher({ maxBodyBytes: cap, bodyOverflow: "error" }).fetch(url(s))).rejects.toMatchObject({
      code: ErrorCode.BodyTooLarge,
    });
  });
});

describe("Fetcher: a compressed body's decoded size", () => {
  it("stops reading a gzip bomb from the socket once its decoded size reaches the cap", async () => {
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 1 });
    const chunk = 8 * 1024;
    let sent = 0;
    let closedAt: number | undefined;
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Encoding": "gzip", "Content-Type": "text/html" });
      // Slowly, so that the bytes read are what the fetcher asked for, not what the socket buffered.
      const timer = setInterval(() => {
        if (sent >= bomb.length) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(bomb.subarray(sent, sent + chunk));
        sent += chunk;
      }, 5);
      res.on("close", () => {
        clearInterval(timer);
        closedAt = sent;
      });
    });
    const cap = 1024 * 1024;
    const r = await fetcher({ maxBodyBytes: cap }).fetch(url(s));
    expect(r.truncated).toBe(true);
    expect(r.body.length).toBe(cap);
    expect(r.body.every((byte) => byte === 0)).toBe(true);
    // Read a little past the point where the watch starts (64 KiB), nowhere near the whole bomb.
    expect(r.rawBody.length).toBeLessThan(bomb.length / 2);
    await expect.poll(() => closedAt).toBeDefined();
    expect(closedAt).toBeLessThan(bomb.length / 2);
  });

  it("reads a large compressed page whole when it decodes within the cap", async () => {
    const page = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `<p>${i * 7919}</p>`).join(""));
    const packed = gzipSync(page, { level: 1 });
    expect(packed.length).toBeGreaterThan(64 * 1024); // past the point where the watch starts
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Encoding": "gzip", "Content-Type": "text/html" });
      res.end(packed);
    });
    const r = await fetcher({ maxBodyBytes: 2 * page.length }).fetch(url(s));
    expect(r.truncated).toBe(false);
    expect(r.body.equals(page)).toBe(true);
  });
});

describe("Fetcher: slow senders", () => {
  /** A server that writes `bytes` every `everyMs`, ending after `forMs` (never, by default). */
  function dripping(bytes: number, everyMs: number, forMs = Number.POSITIVE_INFINITY) {
    return serve((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      const started = Date.now();
      const timer = setInterval(() => {
        if (Date.now() - started >= forMs) {
          clearInterval(timer);
          res.end();
        } else res.write("x".repeat(bytes));
      }, everyMs);
      res.on("close", () => clearInterval(timer));
    });
  }

  it("fails with TooSlow when a whole window brings fewer than minBytesPerSecond", async () => {
    const s = await dripping(1, 50); // 20 bytes/s, never idle for long
    const started = Date.now();
    const error = await fetcher({ minBytesPerSecond: 100, rateWindowMs: 300 })
      .fetch(url(s))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.TooSlow });
    expect(String((error as Error).message)).toMatch(/bytes in 300 ms, under 100 bytes\/s/);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1300);
  });

  it("lets a slow body through while each window brings enough", async () => {
    const s = await dripping(50, 50, 900); // 1000 bytes/s for 0.9 s
    const r = await fetcher({ minBytesPerSecond: 100, rateWindowMs: 300 }).fetch(url(s));
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThan(500);
  });

  it("does not check the rate with minBytesPerSecond 0", async () => {
    const s = await dripping(1, 50, 700);
    const r = await fetcher({ minBytesPerSecond: 0, rateWindowMs: 300 }).fetch(url(s));
    expect(r.body.length).toBeGreaterThan(5);
  });
});

describe("Fetcher: timeouts and broken servers", () => {
  it("fails with HeadersTimeout when headers never come", async () => {
    const s = await serve(() => {});
    await expect(fetcher({ headersTimeoutMs: 200 }).fetch(url(s))).rejects.toMatchObject({
      code: ErrorCode.HeadersTimeout,
    });
  });

  it("fails with BodyTimeout when the body stalls", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Length": "1000" });
      res.write("x".repeat(10));
    });
    await expect(fetcher({ bodyIdleTimeoutMs: 200 }).fetch(url(s))).rejects.toMatchObject({
      code: ErrorCode.BodyTimeout,
    });
  });

  it("fails with BodyTimeout when a dripping body passes the whole-fetch deadline", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      const timer = setInterval(() => res.write("drip"), 20);
      res.on("close", () => clearInterval(timer));
    });
    const started = Date.now();
    await expect(
      fetcher({ totalTimeoutMs: 300, bodyIdleTimeoutMs: 10_000 }).fetch(url(s)),
    ).rejects.toMatchObject({
      code: ErrorCode.BodyTimeout,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("fails with ProtocolError when the connection is reset mid-body", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "Content-Length": "100000" });
      res.write("x".repeat(100), () => res.socket?.destroy());
    });
    const error = await fetcher()
      .fetch(url(s))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.ProtocolError });
    expect((error as Error).cause).toBeDefined();
  });

  it("fails with ConnectFailed when the server drops the connection before answering", async () => {
    const s = await serve((req) => req.socket.destroy());
    await expect(fetcher().fetch(url(s))).rejects.toMatchObject({ code: ErrorCode.ConnectFailed });
  });

  it("fails with ConnectFailed when nothing listens", async () => {
    const s = await serve(() => {});
    const port = s.port;
    await s.close();
    await expect(fetcher().fetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({
      code: ErrorCode.ConnectFailed,
    });
  });

  it("fails with ProtocolError on a malformed response", async () => {
    const s = await serve((req) => {
      req.socket.end("HTTP/1.1 banana\r\n\r\n");
    });
    await expect(fetcher().fetch(url(s))).rejects.toMatchObject({ code: ErrorCode.ProtocolError });
  });
});

describe("Fetcher: options and errors", () => {
  it("validates options at construction", () => {
    const deps = { resolver: HOSTS, netPolicy: LOOPBACK };
    for (const bad of [
      { connectTimeoutMs: 0 },
      { totalTimeoutMs: -1 },
      { maxBodyBytes: 1.5 },
      { userAgent: "a\r\nb" },
      { bodyOverflow: "drop" as "error" },
      { minBytesPerSecond: -1 },
      { rateWindowMs: 0 },
    ]) {
      expect(() => new Fetcher(bad, deps), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
  });

  it("classifies raw errors into codes", () => {
    expect(classifyFetchError(Object.assign(new Error("t"), { code: "UND_ERR_CONNECT_TIMEOUT" }))).toBe(
      ErrorCode.ConnectTimeout,
    );
    expect(classifyFetchError(Object.assign(new Error("t"), { code: "UND_ERR_HEADERS_TIMEOUT" }))).toBe(
      ErrorCode.HeadersTimeout,
    );
    expect(classifyFetchError(Object.assign(new Error("t"), { code: "UND_ERR_BODY_TIMEOUT" }))).toBe(
      ErrorCode.BodyTimeout,
    );
    expect(classifyFetchError(Object.assign(new Error("r"), { code: "ECONNREFUSED" }))).toBe(
      ErrorCode.ConnectFailed,
    );
    expect(classifyFetchError(Object.assign(new Error("r"), { code: "UND_ERR_SOCKET" }), true)).toBe(
      ErrorCode.ProtocolError,
    );
    expect(classifyFetchError(Object.assign(new Error("p"), { code: "HPE_INVALID_CONSTANT" }))).toBe(
      ErrorCode.ProtocolError,
    );
    expect(classifyFetchError(Object.assign(new Error("z"), { code: "Z_DATA_ERROR" }))).toBe(
      ErrorCode.DecodeFailed,
    );
    expect(classifyFetchError(Object.assign(new Error("d"), { code: "ENOTFOUND" }))).toBe(
      ErrorCode.DnsNotFound,
    );
    for (const code of [
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "SELF_SIGNED_CERT_IN_CHAIN",
      "DEPTH_ZERO_SELF_SIGNED_CERT",
      "CERT_HAS_EXPIRED",
      "ERR_TLS_CERT_ALTNAME_INVALID",
      "ERR_SSL_WRONG_VERSION_NUMBER",
      "HOSTNAME_MISMATCH",
    ]) {
      expect(classifyFetchError(Object.assign(new Error("tls"), { code })), code).toBe(ErrorCode.TlsFailed);
    }
  });

  it("gives a failure's reason in the words of its innermost cause", () => {
    const inner = new Error("unable to verify the first certificate");
    expect(failureReason(new Error("fetch https://x/: failed", { cause: inner }))).toBe(inner.message);
    expect(failureReason("plain")).toBe("plain");
  });
});
