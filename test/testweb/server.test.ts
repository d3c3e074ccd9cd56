import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildModel,
  type HostInfo,
  type RunningTestWeb,
  respond,
  ServedRecorder,
  startTestWeb,
} from "../../src/testweb/index.js";
import { hostRate } from "../../src/testweb/throttle.js";
import { extractLinks, fetchHost, fetchVia, parseHostsFile } from "./helpers.js";

let web: RunningTestWeb;
let dir: string;
let logPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-testweb-"));
  logPath = join(dir, "served.log");
  web = await startTestWeb({ seed: 5, hosts: 40, pages: 2400, servedLogPath: logPath });
});

afterAll(async () => {
  await web?.stop();
  await rm(dir, { recursive: true, force: true });
});

function normalHost(predicate: (host: HostInfo) => boolean): HostInfo {
  const host = web.model.hosts.find((h) => h.kind === "normal" && predicate(h));
  if (host === undefined) throw new Error("no such host in the model");
  return host;
}

describe("startTestWeb", () => {
  it("listens on every host address on one port and writes the hosts file", async () => {
    expect(web.port).toBeGreaterThan(0);
    const hostsPath = join(dir, "hosts");
    await web.writeHostsFile(hostsPath);
    const text = await readFile(hostsPath, "utf8");
    expect(text).toBe(web.hostsFileText());
    const hosts = parseHostsFile(text);
    expect(hosts.size).toBe(web.model.hosts.length);
    expect(web.seeds.length).toBe(3);
    for (const seed of web.seeds)
      expect(seed).toMatch(new RegExp(`^http://h\\d{4}\\.ubi\\.test:${web.port}/$`));
    for (const [name, ip] of hosts) {
      expect(ip.startsWith("127.1.")).toBe(true);
      const home = await fetchVia(ip, web.port, name, "/");
      expect(home.status).toBe(200);
    }
  });

  it("serves pages, 404s, redirects, binaries and the trap with the right statuses and types", async () => {
    const host = normalHost((h) => h.articles >= 10);
    const article = await fetchHost(web, host.name, `/s0/p1.html`);
    expect(article.status).toBe(200);
    expect(article.contentType).toBe("text/html; charset=utf-8");
    expect(article.body.toString()).toContain("<!DOCTYPE html>");

    const missing = await fetchHost(web, host.name, "/s0/gone0.html");
    expect(missing.status).toBe(404);
    expect(missing.body.length).toBeLessThan(1000);
    expect((await fetchHost(web, host.name, "/no/such/page")).status).toBe(404);
    expect((await fetchHost(web, host.name, "/list")).status).toBe(404);
    expect((await fetchHost(web, host.name, "/list?page=1")).status).toBe(200);

    const redirect = await fetchHost(web, host.name, "/go/0-1");
    expect([301, 302]).toContain(redirect.status);
    expect(redirect.location).toBeDefined();

    const pdf = await fetchHost(web, host.name, "/media/f0.pdf");
    expect(pdf.status).toBe(200);
    expect(pdf.contentType).toBe("application/pdf");
    expect(pdf.body.subarray(0, 5).toString()).toBe("%PDF-");
    const png = await fetchHost(web, host.name, "/media/f1.png");
    expect(png.contentType).toBe("image/png");
    expect([...png.body.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect((await fetchHost(web, host.name, "/media/f1.pdf")).status).toBe(404);

    const calendar = await fetchHost(web, "calendar.ubi.test", "/calendar/2026/01");
    expect(calendar.status).toBe(200);
    const origin = `http://calendar.ubi.test:${web.port}`;
    const months = extractLinks(calendar.body.toString(), `${origin}/calendar/2026/01`).links.map(
      (l) => l.url,
    );
    expect(months.sort()).toEqual([`${origin}/`, `${origin}/calendar/2025/12`, `${origin}/calendar/2026/02`]);
    expect((await fetchHost(web, "calendar.ubi.test", "/calendar/2026/13")).status).toBe(404);
  });

  it("serves multi-hop redirect chains with a relative Location", async () => {
    const { model } = web;
    // Walk every host's redirects until a chain of 2+ hops shows up (the model guarantees some).
    for (const host of model.hosts.filter((h) => h.kind === "normal")) {
      for (let k = 0; k < host.redirects; k++) {
        const third = await fetchHost(web, host.name, `/go/${k}-3`);
        const second = await fetchHost(web, host.name, `/go/${k}-2`);
        if (second.status === 404) continue;
        expect([301, 302]).toContain(second.status);
        expect(second.location).toBe(`${k}-1`);
        if (third.status !== 404) expect(third.location).toBe(`${k}-2`);
        return;
      }
    }
    throw new Error("no multi-hop redirect in the model");
  });

  it("normalizes the request target: escapes and dot segments name the same page", async () => {
    const host = normalHost(() => true);
    const plain = await fetchHost(web, host.name, "/~a0/");
    expect(plain.status).toBe(200);
    for (const variant of ["/%7ea0/", "/%7Ea0/", "/s0/../~a0/", "/%7e%610/"]) {
      const other = await fetchHost(web, host.name, variant);
      expect(other.status).toBe(200);
      expect(other.body.equals(plain.body)).toBe(true);
    }
    const head = await fetchHost(web, host.name, "/~a0/", "HEAD");
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it("answers robots.txt per host policy", async () => {
    const { model } = web;
    const forbidden = model.hosts[model.forbiddenRobotsHost] as HostInfo;
    const unavailable = model.hosts[model.unavailableRobotsHost] as HostInfo;
    expect((await fetchHost(web, forbidden.name, "/robots.txt")).status).toBe(403);
    expect((await fetchHost(web, unavailable.name, "/robots.txt")).status).toBe(503);
    expect((await fetchHost(web, normalHost((h) => h.robots === "none").name, "/robots.txt")).status).toBe(
      404,
    );
    const ruled = await fetchHost(web, normalHost((h) => h.robots === "rules-ubicrawl").name, "/robots.txt");
    expect(ruled.status).toBe(200);
    expect(ruled.contentType).toMatch(/^text\/plain/);
    expect(ruled.body.toString()).toContain("User-agent: ubicrawl");
  });

  it("refuses a host name on the wrong address with 421", async () => {
    const [a, b] = web.model.hosts.filter((h, i, all) => all.findIndex((x) => x.ip === h.ip) === i);
    if (a === undefined || b === undefined) throw new Error("need two addresses");
    expect((await fetchVia(b.ip, web.port, a.name, "/")).status).toBe(421);
  });
});

describe("ServedRecorder", () => {
  it("counts URLs, robots fetches and total, logs every request, and resets", async () => {
    web.recorder.reset();
    const host = normalHost((h) => h.robots === "none");
    await fetchHost(web, host.name, "/");
    await fetchHost(web, host.name, "/");
    await fetchHost(web, host.name, "/robots.txt");
    await fetchHost(web, host.name, "/%7ea0/");
    const origin = `http://${host.name}:${web.port}`;
    const counts = web.recorder.servedCounts();
    expect(counts.get(`${origin}/`)).toBe(2);
    expect(counts.get(`${origin}/%7ea0/`)).toBe(1);
    expect(web.recorder.robotsFetches(host.name)).toBe(1);
    expect(web.recorder.totalServed).toBe(4);
    const log = await readFile(logPath, "utf8");
    expect(log).toContain(` 200 ${host.ip} ${origin}/\n`);
    expect(log).toContain(` 404 ${host.ip} ${origin}/robots.txt\n`);
    web.recorder.reset();
    expect(web.recorder.totalServed).toBe(0);
    expect(web.recorder.servedCounts().size).toBe(0);
    expect(web.recorder.robotsFetches(host.name)).toBe(0);
  });

  it("detects concurrent requests per host and per shared IP", async () => {
    web.recorder.reset();
    const host = normalHost(() => true);
    const release = web.holdResponses();
    const pending = [fetchHost(web, host.name, "/"), fetchHost(web, host.name, "/s0/")];
    while (web.recorder.inFlight(host.name) < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([200, 200]);
    expect(web.recorder.maxConcurrencyPerHost()).toBe(2);
    expect(web.recorder.hostsWithConcurrentRequests()).toEqual([host.name]);

    // Two virtual hosts on one address: one request each is per-host polite but not per-IP.
    web.recorder.reset();
    const [a, b] = web.model.hosts.filter((h, _i, all) => all.filter((x) => x.ip === h.ip).length > 1);
    if (a === undefined || b === undefined) throw new Error("model has no shared address");
    const hold = web.holdResponses();
    const pair = [fetchHost(web, a.name, "/"), fetchHost(web, b.name, "/")];
    while (web.recorder.inFlight(a.name) < 1 || web.recorder.inFlight(b.name) < 1) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    hold();
    await Promise.all(pair);
    expect(web.recorder.maxConcurrencyPerHost()).toBe(1);
    expect(web.recorder.hostsWithConcurrentRequests()).toEqual([]);
    expect(web.recorder.maxConcurrencyPerIp()).toBe(2);
  });

  it("averages a host's requests in flight over the time it had any", () => {
    let nowMs = 0;
    const recorder = new ServedRecorder({ now: () => nowMs });
    expect(recorder.meanConcurrencyPerHost()).toBe(0);
    // Host a: 0–10 one request, 10–20 two, 20–30 one (busy 30 ms, 40 ms of requests).
    const first = recorder.begin("a", "10.0.0.1", "http://a/1");
    nowMs = 10;
    const second = recorder.begin("a", "10.0.0.1", "http://a/2");
    // Read while both are in flight: what passed so far counts (10 ms of one, 5 of two, over 15).
    nowMs = 15;
    expect(recorder.meanConcurrencyPerHost()).toBeCloseTo(20 / 15, 10);
    nowMs = 20;
    recorder.end(first, 200);
    nowMs = 30;
    recorder.end(second, 200);
    expect(recorder.meanConcurrencyPerHost()).toBeCloseTo(40 / 30, 10);
    // Host b alone for 50 ms after a gap: its time counts, the gap does not.
    nowMs = 100;
    const alone = recorder.begin("b", "10.0.0.2", "http://b/");
    nowMs = 150;
    recorder.end(alone, 200);
    expect(recorder.meanConcurrencyPerHost()).toBeCloseTo(90 / 80, 10);
    // A reset forgets the past; a request in flight across it counts from the reset.
    const across = recorder.begin("a", "10.0.0.1", "http://a/3");
    nowMs = 160;
    recorder.reset();
    expect(recorder.meanConcurrencyPerHost()).toBe(0);
    const after = recorder.begin("a", "10.0.0.1", "http://a/4");
    nowMs = 170;
    recorder.end(across, 200);
    recorder.end(after, 200);
    expect(recorder.meanConcurrencyPerHost()).toBeCloseTo(20 / 10, 10);
    expect(recorder.maxConcurrencyPerHost()).toBe(2);
  });
});

describe("stop", () => {
  it("closes every listener and is idempotent", async () => {
    const small = await startTestWeb({ seed: 9, hosts: 5, pages: 200, trap: false });
    const host = small.model.hosts[0] as HostInfo;
    expect((await fetchVia(host.ip, small.port, host.name, "/")).status).toBe(200);
    expect(small.model.trapHost).toBe(-1);
    await Promise.all([small.stop(), small.stop()]);
    await small.stop();
    await expect(fetchVia(host.ip, small.port, host.name, "/")).rejects.toThrow();
  });
});

describe("hostBytesPerSecond", () => {
  it("sends each host's bodies no faster than its own rate, the rates spread over the range", async () => {
    const slow = await startTestWeb({
      seed: 5,
      hosts: 12,
      pages: 600,
      hostBytesPerSecond: { min: 20_000, max: 200_000 },
    });
    try {
      const rates = slow.model.hosts
        .filter((h) => h.kind === "normal")
        .map((h) => hostRate(slow.model, h) as number);
      expect(Math.min(...rates)).toBeGreaterThanOrEqual(20_000);
      expect(Math.max(...rates)).toBeLessThanOrEqual(200_000);
      expect(new Set(rates).size).toBeGreaterThan(rates.length / 2);
      const host = slow.model.hosts.find((h) => h.kind === "normal") as HostInfo;
      const rate = hostRate(slow.model, host) as number;
      const started = Date.now();
      const page = await fetchVia(host.ip, slow.port, host.name, "/");
      const seconds = (Date.now() - started) / 1000;
      expect(page.status).toBe(200);
      // The body, bytes for bytes as unthrottled, and no sooner than its rate allows (its first piece
      // goes at once).
      const unthrottled = buildModel({ seed: 5, hosts: 12, pages: 600 });
      expect(page.body.toString()).toBe(String(respond(unthrottled, slow.port, host.index, "/").body));
      expect(seconds).toBeGreaterThanOrEqual(
        ((page.body.byteLength - Math.max(1024, rate / 20)) / rate) * 0.95,
      );
    } finally {
      await slow.stop();
    }
  });
});
