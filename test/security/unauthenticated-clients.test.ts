import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createServer as createH2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { Client, credentials, type ServiceError, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { createClusterCertificates, diagnoseTls, loadMutualTls } from "../../src/security/index.js";
import {
  type AgentStats,
  grpcStatusOf,
  INSECURE,
  type MutualTlsTransport,
  PeerClient,
  type TransportSecurity,
} from "../../src/transport/index.js";
import { serviceDefinition } from "../../src/transport/protocol.js";
import { killAllUbicrawl, waitFor } from "../agent/harness.js";
import { identityIn, startTlsAgent, type TlsAgent, tlsFlags } from "./tls-agents.js";

/**
 * An agent with mutual TLS serves only clients with a certificate of its CA. Every other client —
 * plaintext, no certificate, another CA's certificate — fails before any handler runs, so nothing it
 * sends changes the agent: a canary web server shows which submitted URLs were really fetched.
 */

let dir: string;
let canary: Server;
let canaryPort: number;
const canaryPaths: string[] = [];
let agent: TlsAgent;
let operator: MutualTlsTransport;
/** Another agent's certificate of the same CA (the `Agent` service's role). */
let peerAgent: MutualTlsTransport;
let foreignOperator: MutualTlsTransport;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-mtls-"));
  canary = createServer((req, res) => {
    canaryPaths.push(req.url ?? "");
    res.writeHead(req.url === "/robots.txt" ? 404 : 200, { "content-type": "text/plain" }).end("ok");
  });
  await new Promise<void>((resolve) => canary.listen(0, "127.0.0.1", resolve));
  canaryPort = (canary.address() as AddressInfo).port;
  await writeFile(join(dir, "hosts"), "127.0.0.1 canary.test\n");
  const certs = join(dir, "certs");
  const foreign = join(dir, "foreign");
  await createClusterCertificates({ outDir: certs, agents: ["guard", "peer"] });
  await createClusterCertificates({ outDir: foreign, agents: ["guard"] });
  operator = await loadMutualTls(join(certs, "ca.pem"), identityIn(certs, "operator").files);
  peerAgent = await loadMutualTls(join(certs, "ca.pem"), identityIn(certs, "peer").files);
  foreignOperator = await loadMutualTls(join(foreign, "ca.pem"), identityIn(foreign, "operator").files);
  agent = await startTlsAgent(
    "guard",
    [
      "--data",
      join(dir, "data"),
      "--hosts-file",
      join(dir, "hosts"),
      "--allow-net",
      "127.0.0.0/8",
      "--delay-ms",
      "0",
      ...tlsFlags(identityIn(certs, "guard")),
    ],
    dir,
  );
});

afterAll(async () => {
  await killAllUbicrawl();
  canary.closeAllConnections();
  await new Promise((resolve) => canary.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const canaryUrl = (path: string) => `http://canary.test:${canaryPort}${path}`;

/** A client that reaches the agent in each way that must not work. */
function attackers(): { name: string; security: TransportSecurity }[] {
  return [
    { name: "plaintext", security: INSECURE },
    // Trusts nothing the agent shows, and shows a certificate the agent does not trust.
    { name: "another-ca", security: foreignOperator },
    // Trusts the agent (the CA certificate is public) but shows a certificate of its own CA.
    { name: "forged", security: { ...foreignOperator, caPem: operator.caPem } },
  ];
}

async function expectRefused(call: Promise<unknown>, what: string): Promise<void> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isUbiError(error, ErrorCode.PeerUnreachable), `${what}: ${String(error)}`).toBe(true);
  expect(grpcStatusOf(error), what).toBe(status.UNAVAILABLE);
}

/** A unary call with grpc-js itself, for a TLS client without any certificate (PeerClient needs one). */
function rawCall(client: Client, method: string, request: unknown): Promise<unknown> {
  const definition = serviceDefinition(method === "Control" ? "Admin" : "Agent")[method];
  if (!definition) throw new Error(`no method ${method}`);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      definition.path,
      definition.requestSerialize as (value: unknown) => Buffer,
      definition.responseDeserialize as (bytes: Buffer) => unknown,
      request,
      { deadline: Date.now() + 5000 },
      (error: ServiceError | null, reply?: unknown) => (error ? reject(error) : resolve(reply)),
    );
  });
}

async function operatorStats(): Promise<AgentStats> {
  const client = new PeerClient(agent.address, { security: operator });
  try {
    const [stats] = (await client.operatorStats({ cluster: false })).agents;
    if (!stats) throw new Error("no stats");
    return stats;
  } finally {
    client.close();
  }
}

describe("an agent with mutual TLS", () => {
  it("refuses SubmitUrls, GetStats and Control from clients without a certificate of its CA", async () => {
    for (const { name, security } of attackers()) {
      const client = new PeerClient(agent.address, {
        security,
        requestDeadlineMs: 5000,
        batchDeadlineMs: 5000,
      });
      try {
        await expectRefused(
          client.submitUrls({
            batchId: `b-${name}`,
            fromId: name,
            urls: [{ url: canaryUrl(`/${name}`), depth: 0 }],
          }),
          `${name} SubmitUrls`,
        );
        await expectRefused(client.getStats({ cluster: true }), `${name} GetStats`);
        await expectRefused(client.control({ action: "PAUSE", argument: "" }), `${name} Control PAUSE`);
        await expectRefused(
          client.control({ action: "BLACKLIST_ADD", argument: "canary.test" }),
          `${name} Control BLACKLIST_ADD`,
        );
      } finally {
        client.close();
      }
    }
    // TLS that checks the agent but shows no certificate at all.
    const bare = new Client(agent.address, credentials.createSsl(Buffer.from(operator.caPem)));
    try {
      for (const [method, request] of [
        ["SubmitUrls", { batchId: "b-bare", fromId: "bare", urls: [{ url: canaryUrl("/bare"), depth: 0 }] }],
        ["GetStats", { cluster: false }],
        ["Control", { action: "PAUSE", argument: "" }],
      ] as const) {
        const error = await rawCall(bare, method, request).catch((caught: unknown) => caught);
        expect((error as ServiceError).code, `no certificate: ${method}`).toBe(status.UNAVAILABLE);
      }
    } finally {
      bare.close();
    }

    // Nothing changed: not paused, not blacklisted, and only the agent's URL gets fetched.
    const before = await operatorStats();
    expect(before.paused).toBe(false);
    expect(before.peers).toEqual([]);
    const client = new PeerClient(agent.address, { security: peerAgent });
    try {
      const ack = await client.submitUrls({
        batchId: "b-operator",
        fromId: "operator",
        urls: [{ url: canaryUrl("/operator"), depth: 0 }],
      });
      expect(ack.accepted).toBe(1);
    } finally {
      client.close();
    }
    await waitFor(async () => {
      const stats = await operatorStats();
      return canaryPaths.includes("/operator") && stats.idle && stats.queuedUrls === 0;
    }, "the operator's URL to be fetched");
    // The operator's URL, and the /sitemap.xml tried on its host: nothing the refused clients sent.
    expect(canaryPaths.filter((path) => path !== "/robots.txt").sort()).toEqual([
      "/operator",
      "/sitemap.xml",
    ]);
  });

  it("takes agent certificates on the Agent service only, and operator certificates on Admin only", async () => {
    const asAgent = new PeerClient(agent.address, { security: peerAgent });
    const asOperator = new PeerClient(agent.address, { security: operator });
    const denied = async (call: Promise<unknown>, what: string) => {
      const error = await call.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isUbiError(error, ErrorCode.PermissionDenied), `${what}: ${String(error)}`).toBe(true);
      expect(grpcStatusOf(error), what).toBe(status.PERMISSION_DENIED);
    };
    try {
      // An agent cannot pause, blacklist, remove another, nor read stats as an operator.
      await denied(asAgent.control({ action: "PAUSE", argument: "" }), "agent PAUSE");
      await denied(
        asAgent.control({ action: "BLACKLIST_ADD", argument: "canary.test" }),
        "agent BLACKLIST_ADD",
      );
      await denied(asAgent.control({ action: "LEAVE", argument: "" }), "agent LEAVE");
      await denied(asAgent.operatorStats({ cluster: false }), "agent Admin.GetStats");
      // An operator cannot join as an agent, nor hand it URLs or take part in the protocol.
      await denied(
        asOperator.join({
          member: {
            id: "intruder",
            address: "127.0.0.1:1",
            capacity: 1,
            incarnation: 1,
            status: "ALIVE",
            lastHeardMsAgo: 0,
          },
        }),
        "operator Join",
      );
      await denied(
        asOperator.submitUrls({
          batchId: "b-op",
          fromId: "operator",
          urls: [{ url: canaryUrl("/op"), depth: 0 }],
        }),
        "operator SubmitUrls",
      );
      await denied(asOperator.getStats({ cluster: false }), "operator Agent.GetStats");
      // Each on its own service: answered.
      expect((await asAgent.getStats({ cluster: false })).agents[0]?.id).toBe("guard");
      expect((await asOperator.control({ action: "PAUSE", argument: "" })).ok).toBe(true);
      expect((await operatorStats()).paused).toBe(true);
      expect((await asOperator.control({ action: "RESUME", argument: "" })).ok).toBe(true);
      expect((await operatorStats()).paused).toBe(false);
    } finally {
      asAgent.close();
      asOperator.close();
    }
    expect(canaryPaths).not.toContain("/op");
  });

  it("validates every received URL: a batch of only bad ones is refused, bad ones in a batch are dropped", async () => {
    const client = new PeerClient(agent.address, { security: peerAgent });
    const bad = [
      "javascript:alert(1)",
      "file:///etc/passwd",
      "ftp://canary.test/file",
      "http://exa mple.test/",
      `http://canary.test:99999/`,
      "not a url",
    ];
    try {
      const refused = await client
        .submitUrls({ batchId: "b-bad", fromId: "operator", urls: bad.map((url) => ({ url, depth: 0 })) })
        .catch((caught: unknown) => caught);
      expect(isUbiError(refused, ErrorCode.BadMessage), String(refused)).toBe(true);
      const ack = await client.submitUrls({
        batchId: "b-mixed",
        fromId: "operator",
        urls: [...bad, canaryUrl("/valid")].map((url) => ({ url, depth: 0 })),
      });
      expect(ack).toEqual({ accepted: 1, forwarded: 0, duplicates: 0 });
    } finally {
      client.close();
    }
    await waitFor(() => canaryPaths.includes("/valid"), "the valid URL to be fetched");
  });

  it("explains a failed handshake in words: untrusted server, refused client, wrong name, no TLS", async () => {
    expect(await diagnoseTls(agent.address, operator)).toEqual({ ok: true });
    expect(await diagnoseTls(agent.address, foreignOperator)).toMatchObject({
      ok: false,
      problem: "untrusted-server",
    });
    expect(await diagnoseTls(agent.address, { ...foreignOperator, caPem: operator.caPem })).toMatchObject({
      ok: false,
      problem: "client-refused",
    });
    const plaintext = createH2Server();
    await new Promise<void>((resolve) => plaintext.listen(0, "127.0.0.1", resolve));
    try {
      const plainPort = (plaintext.address() as AddressInfo).port;
      expect(await diagnoseTls(`127.0.0.1:${plainPort}`, operator)).toMatchObject({
        ok: false,
        problem: "not-tls",
      });
    } finally {
      plaintext.close();
    }
    expect(await diagnoseTls(`127.0.0.1:${canaryPort}`, operator)).toMatchObject({
      ok: false,
      problem: "not-tls",
    });
    // A certificate of the right CA, issued for another address than the one dialed.
    const elsewhere = await createClusterCertificates({
      outDir: join(dir, "certs"),
      agents: ["elsewhere"],
      hosts: ["10.9.9.9"],
      operator: false,
    });
    const files = elsewhere.agents.get("elsewhere");
    if (!files) throw new Error("no certificate");
    const misnamed = await loadMutualTls(join(dir, "certs", "ca.pem"), files);
    const server = createTlsServer({
      ca: misnamed.caPem,
      cert: misnamed.certPem,
      key: misnamed.keyPem,
      requestCert: true,
      ALPNProtocols: ["h2"],
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const misnamedPort = (server.address() as AddressInfo).port;
      const diagnosis = await diagnoseTls(`127.0.0.1:${misnamedPort}`, operator);
      expect(diagnosis).toMatchObject({ ok: false, problem: "wrong-server-name" });
      expect(diagnosis.ok ? "" : diagnosis.message).toMatch(/--hosts 127\.0\.0\.1/);
    } finally {
      server.close();
    }
  });
});
