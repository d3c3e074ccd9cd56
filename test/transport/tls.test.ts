import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode, UbiError } from "../../src/errors.js";
import {
  AgentServer,
  type MutualTlsTransport,
  PeerClient,
  type TransportSecurity,
} from "../../src/transport/index.js";
import { opensslMissing, skipWithout } from "../support/tools.js";
import { FakeHandlers, LOAD, member } from "./helpers.js";

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

describe.skipIf(skipWithout(opensslMissing))("mutual TLS", () => {
  let dir: string;
  let server: MutualTlsTransport;
  let client: MutualTlsTransport;
  let stranger: MutualTlsTransport;
  /** Signed by the cluster's CA, but for 127.0.0.2 and the name localhost only. */
  let elsewhere: MutualTlsTransport;

  function ca(name: string): void {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        ...EC,
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.pem`,
        "-days",
        "1",
        "-subj",
        `/CN=${name}`,
      ],
      { cwd: dir, stdio: "ignore" },
    );
  }

  /** A key and a certificate signed by `caName`, valid for 127.0.0.1 (or as `extFile` says). */
  async function leaf(name: string, caName: string, extFile = "leaf.ext"): Promise<MutualTlsTransport> {
    const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
    run(["req", ...EC, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`]);
    run([
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${caName}.pem`,
      "-CAkey",
      `${caName}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "1",
      "-extfile",
      extFile,
    ]);
    const read = (file: string) => readFile(join(dir, file), "utf8");
    return {
      kind: "tls",
      caPem: await read(`${caName}.pem`),
      certPem: await read(`${name}.pem`),
      keyPem: await read(`${name}.key`),
    };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-tls-"));
    await writeFile(
      join(dir, "leaf.ext"),
      "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n",
    );
    ca("cluster-ca");
    ca("other-ca");
    server = await leaf("agent-b", "cluster-ca");
    client = await leaf("agent-a", "cluster-ca");
    stranger = await leaf("intruder", "other-ca");
    await writeFile(
      join(dir, "elsewhere.ext"),
      "subjectAltName=IP:127.0.0.2,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n",
    );
    elsewhere = await leaf("agent-elsewhere", "cluster-ca", "elsewhere.ext");
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function tlsAgent(
    security: MutualTlsTransport = server,
  ): Promise<{ address: string; handlers: FakeHandlers }> {
    const handlers = new FakeHandlers();
    const agent = new AgentServer({ security }, { handlers });
    const address = await agent.start("127.0.0.1:0");
    onTestFinished(() => agent.stop());
    return { address, handlers };
  }

  function peer(address: string, security: TransportSecurity) {
    const c = new PeerClient(address, { security, requestDeadlineMs: 5000 });
    onTestFinished(() => c.close());
    return c;
  }

  it("serves a client whose certificate the cluster CA signed", async () => {
    const { address, handlers } = await tlsAgent();
    expect((await peer(address, client).getStats({ cluster: false })).agents).toHaveLength(1);
    expect(handlers.calls.getStats).toHaveLength(1);
  });

  it("carries heartbeats on a stream over the same mutual TLS channel", async () => {
    const { address, handlers } = await tlsAgent();
    const c = peer(address, client);
    const request = { from: member("agent-a"), members: [], load: LOAD };
    for (let i = 0; i < 3; i++) expect((await c.streamHeartbeat(request)).from.id).toBe("agent-b");
    expect(handlers.calls.heartbeat).toHaveLength(3);
    const refused = await peer(address, stranger)
      .streamHeartbeat(request)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((refused as UbiError).code).toBe(ErrorCode.PeerUnreachable);
    expect(handlers.calls.heartbeat).toHaveLength(3);
  });

  it.each([
    ["a plaintext client", () => ({ kind: "insecure" }) as const],
    ["a client signed by another CA", () => stranger],
  ])("refuses %s", async (_name, security) => {
    const { address, handlers } = await tlsAgent();
    const error = await peer(address, security())
      .getStats({ cluster: false })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(UbiError);
    expect((error as UbiError).code).toBe(ErrorCode.PeerUnreachable);
    expect(handlers.totalCalls).toBe(0);
  });

  // Dialed by IP, the name sent in the handshake (SNI) cannot be the IP (Node 26 refuses it): the
  // certificate must still be checked against the IP dialed, not against the name sent.
  it("checks the server's certificate against the address dialed: IP or DNS name", async () => {
    const { address } = await tlsAgent(elsewhere);
    const port = address.slice(address.lastIndexOf(":") + 1);
    const wrongIp = await peer(address, client)
      .getStats({ cluster: false })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((wrongIp as UbiError).code).toBe(ErrorCode.PeerUnreachable);
    expect(String((wrongIp as UbiError).message)).toMatch(
      /ERR_TLS_CERT_ALTNAME_INVALID|not in the cert's list/,
    );
    // The same server by a name its certificate lists: accepted.
    expect((await peer(`localhost:${port}`, client).getStats({ cluster: false })).agents).toHaveLength(1);
  });
});
