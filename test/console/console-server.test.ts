import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/index.js";
import { systemClock } from "../../src/clock.js";
import { loneAgentStats } from "../../src/cluster/index.js";
import { AgentMetrics } from "../../src/console/agent-metrics.js";
import { AgentConsole, ConsoleServer, FetchActivity, readTokenFile } from "../../src/console/index.js";
import { ErrorCode } from "../../src/errors.js";
import { createClusterCertificates } from "../../src/security/index.js";
import { inProcessAgentOptions } from "../agent/harness.js";
import { ManualClock } from "../support/manual-clock.js";
import { opensslMissing, skipWithout } from "../support/tools.js";

const TOKEN = "a-token-of-more-than-16-characters";

/** A real agent (opened, not crawling) whose console is tested. */
async function openAgent(
  dir: string,
): Promise<{ agent: Agent; source: Parameters<AgentConsole["attach"]>[1] }> {
  const agent = await Agent.open(inProcessAgentOptions({ id: "c1", dataDir: join(dir, "data"), seeds: [] }));
  const lone = loneAgentStats(agent, systemClock);
  return {
    agent,
    source: {
      stats: () => lone.stats(),
      clusterStats: async () => [lone.stats()],
      clusterPagesFetched: () => lone.stats().pagesFetched,
    },
  };
}

function fresh(listen: string, extra: { token?: string } = {}): ConsoleServer {
  return new ConsoleServer(
    { listen, ...extra },
    { metrics: new AgentMetrics("x"), activity: new FetchActivity({}, systemClock), onError: () => {} },
  );
}

describe("the console server", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-console-"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a non-loopback address without a token or TLS, and a malformed one", () => {
    for (const listen of ["0.0.0.0:0", "10.1.2.3:9100", "[::]:9100", "example.invalid:80"]) {
      expect(() => fresh(listen), listen).toThrow(/--http-token-file/);
    }
    expect(() => fresh("0.0.0.0:0", { token: TOKEN })).not.toThrow();
    for (const listen of ["127.0.0.1", "127.0.0.1:99999", ":80", "::1:80"]) {
      expect(() => fresh(listen), listen).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
  });

  it("keeps the cluster's pages per second from its samples, aligned with this agent's", () => {
    const clock = new ManualClock(1_000_000);
    const activity = new FetchActivity({ historySeconds: 60 }, clock);
    activity.noteClusterPages(100);
    clock.advance(1000);
    activity.noteClusterPages(130);
    clock.advance(400);
    activity.noteClusterPages(999); // the same second: left for the next sample
    clock.advance(1600);
    activity.noteClusterPages(190); // two seconds at 30 pages/s
    clock.advance(1000);
    activity.noteClusterPages(150); // a member dropped from the sum: 0, not negative
    clock.advance(1000);
    const history = activity.clusterHistory(8);
    expect(history.map((point) => point.atMs)).toEqual(activity.history(8).map((point) => point.atMs));
    expect(history.map((point) => point.pages)).toEqual([null, null, null, 30, 30, 30, 0, null]);
  });

  it("reads a token file's first line, and refuses a short or missing one", async () => {
    const file = join(dir, "token");
    await writeFile(file, `${TOKEN}\nignored\n`);
    expect(await readTokenFile(file)).toBe(TOKEN);
    await writeFile(file, "short\n");
    await expect(readTokenFile(file)).rejects.toThrow(/at least 16 characters/);
    await expect(readTokenFile(join(dir, "missing"))).rejects.toThrow(/cannot read --http-token-file/);
  });

  it("on loopback: probes, not ready until attached, read-only, and nothing outside its table", async () => {
    const { agent, source } = await openAgent(join(dir, "loopback"));
    const console = await AgentConsole.start(
      { listen: "127.0.0.1:0" },
      { agentId: agent.id, clock: systemClock, onError: () => {} },
    );
    const base = `http://${console.address}`;
    try {
      expect(await text(`${base}/healthz`)).toEqual({ status: 200, body: "ok\n" });
      expect(await text(`${base}/readyz`)).toEqual({ status: 503, body: "not ready: starting\n" });
      expect((await text(`${base}/api/stats`)).status).toBe(503);
      const early = await text(`${base}/metrics`);
      expect(early.status).toBe(200);
      expect(early.body).toMatch(/^ubicrawl_ready 0$/m);
      expect(early.body).toMatch(/^process_cpu_seconds_total /m);
      expect(early.body).not.toMatch(/^ubicrawl_pages_fetched_total/m);

      console.attach(agent, source);
      expect(await text(`${base}/readyz`)).toEqual({ status: 200, body: "ready\n" });
      // The cluster's rate is served with this agent's, second by second.
      const activity = JSON.parse((await text(`${base}/api/activity`)).body) as {
        pagesPerSecond: { atMs: number }[];
        clusterPagesPerSecond: { atMs: number; pages: number | null }[];
      };
      expect(activity.clusterPagesPerSecond.map((point) => point.atMs)).toEqual(
        activity.pagesPerSecond.map((point) => point.atMs),
      );
      const stats = JSON.parse((await text(`${base}/api/stats`)).body) as { agents: { id: string }[] };
      expect(stats.agents.map((row) => row.id)).toEqual(["c1"]);
      const cluster = JSON.parse((await text(`${base}/api/stats?cluster=1`)).body) as {
        totals: { agents: number; alive: number };
      };
      expect(cluster.totals).toMatchObject({ agents: 1, alive: 1 });
      expect((await text(`${base}/metrics`)).body).toMatch(/^ubicrawl_ready 1$/m);

      const page = await fetch(`${base}/`);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
      const html = await page.text();
      for (const asset of ["console.js", "console.css", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css"]) {
        expect(html).toContain(asset);
        expect((await fetch(`${base}/${asset}`)).status, asset).toBe(200);
      }
      const clusterTrue = JSON.parse((await text(`${base}/api/stats?cluster=true`)).body) as {
        totals?: unknown;
      };
      expect(clusterTrue.totals).toBeDefined();
      for (const path of [
        "//x",
        "/../package.json",
        "/%2e%2e/package.json",
        "/index.html",
        "/api/other",
        "/vendor/",
      ]) {
        expect((await fetch(`${base}${path}`)).status, path).toBe(404);
      }
      for (const method of ["POST", "PUT", "DELETE"]) {
        const refused = await fetch(`${base}/api/stats`, { method });
        expect(refused.status, method).toBe(405);
        expect(refused.headers.get("allow")).toBe("GET, HEAD");
      }

      console.markStopping();
      expect(await text(`${base}/readyz`)).toEqual({ status: 503, body: "not ready: stopping\n" });
    } finally {
      await console.stop();
      await agent.stop();
    }
  });

  it("with a token: every path but the probes needs it", async () => {
    const console = await AgentConsole.start(
      { listen: "127.0.0.1:0", token: TOKEN },
      { agentId: "t", clock: systemClock, onError: () => {} },
    );
    const base = `http://${console.address}`;
    try {
      expect((await text(`${base}/healthz`)).status).toBe(200);
      expect((await text(`${base}/readyz`)).status).toBe(503);
      // The replay of captures too: its page, the service worker, a capture's index and WARC file.
      for (const path of ["/metrics", "/", "/api/stats", ...REPLAY_PATHS]) {
        const refused = await fetch(`${base}${path}`);
        expect(refused.status, path).toBe(401);
        expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect((await fetch(`${base}${path}`, { headers: { authorization: "Bearer wrong" } })).status).toBe(
          401,
        );
        expect(
          (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status,
        ).toBe(401);
      }
      const allowed = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(allowed.status).toBe(200);
      // The scheme's name is case-insensitive.
      expect((await fetch(`${base}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(
        200,
      );
      // A browser opens /?token=… once: a cookie, and the token leaves the address.
      const wrong = await fetch(`${base}/?token=wrong-token-of-enough-length`, { redirect: "manual" });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get("set-cookie")).toBeNull();
      const signIn = await fetch(`${base}/api/stats?cluster=1&token=${TOKEN}`, { redirect: "manual" });
      expect(signIn.status).toBe(303);
      expect(signIn.headers.get("location")).toBe("/api/stats?cluster=1");
      const cookie = signIn.headers.get("set-cookie") ?? "";
      expect(cookie).toMatch(/^ubicrawl_token=[^;]+; Path=\/; HttpOnly; SameSite=Strict$/);
      const withCookie = { headers: { cookie: cookie.split(";")[0] as string } };
      expect((await fetch(`${base}/metrics`, withCookie)).status).toBe(200);
      expect((await fetch(`${base}/metrics`, { headers: { cookie: "ubicrawl_token=wrong" } })).status).toBe(
        401,
      );
    } finally {
      await console.stop();
    }
  });

  describe.skipIf(skipWithout(opensslMissing))("with the cluster's mutual TLS", () => {
    it("lets operator certificates in, refuses agent certificates and none, and keeps the probes open", async () => {
      const certs = await createClusterCertificates({ outDir: join(dir, "certs"), agents: ["a1"] });
      const agentFiles = certs.agents.get("a1");
      const operator = certs.operator;
      if (!agentFiles || !operator) throw new Error("certificates missing");
      const caPem = await readFile(join(dir, "certs", "ca.pem"), "utf8");
      const pems = async (files: { certPath: string; keyPath: string }) => ({
        cert: await readFile(files.certPath, "utf8"),
        key: await readFile(files.keyPath, "utf8"),
      });
      const served = await pems(agentFiles);
      const console = await AgentConsole.start(
        { listen: "127.0.0.1:0", tls: { caPem, certPem: served.cert, keyPem: served.key } },
        { agentId: "a1", clock: systemClock, onError: () => {} },
      );
      const url = (path: string) => `https://${console.address}${path}`;
      try {
        expect(await tlsGet(url("/healthz"), { ca: caPem })).toEqual({ status: 200, body: "ok\n" });
        expect((await tlsGet(url("/metrics"), { ca: caPem })).status).toBe(401);
        expect((await tlsGet(url("/metrics"), { ca: caPem, ...served })).status).toBe(403);
        for (const path of REPLAY_PATHS) {
          expect((await tlsGet(url(path), { ca: caPem, ...served })).status, path).toBe(403);
        }
        const asOperator = await tlsGet(url("/metrics"), { ca: caPem, ...(await pems(operator)) });
        expect(asOperator.status).toBe(200);
        expect(asOperator.body).toMatch(/^ubicrawl_agent_info\{id="a1"\} 1$/m);
      } finally {
        await console.stop();
      }
    });
  });
});

/** Paths of the replay of captures (`capture-replay.ts`), guarded as the rest. */
const REPLAY_PATHS = [
  "/capture?url=http%3A%2F%2Fa.test%2F&ts=20261128120000",
  "/replay/sw.js",
  "/archive/20261128120000/aHR0cDovL2EudGVzdC8/index.cdxj",
  "/archive/20261128120000/aHR0cDovL2EudGVzdC8/x-20261128120000-00001-a.warc.gz",
];

async function text(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

function tlsGet(
  url: string,
  tls: { ca: string; cert?: string; key?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { ...tls, servername: "localhost" }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}
