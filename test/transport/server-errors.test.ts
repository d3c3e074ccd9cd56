import { mkdtemp, rm } from "node:fs/promises";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as connectTls } from "node:tls";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { createClusterCertificates, loadMutualTls } from "../../src/security/index.js";
import { describeTlsRefusal, RefusalLog } from "../../src/transport/handshake-refusals.js";
import { AgentServer, type MutualTlsTransport } from "../../src/transport/index.js";
import { checkTlsMaterial } from "../../src/transport/security.js";
import { waitFor } from "../agent/harness.js";
import { identityIn } from "../security/tls-agents.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";
import { opensslMissing, skipWithout } from "../support/tools.js";
import { FakeHandlers } from "./helpers.js";

/**
 * An agent's server says what is wrong in words: an address in use, a key that is not the
 * certificate's, and every connection it refuses before any request (with the peer's address, at a
 * rate a flood cannot turn into a full disk).
 */

function thrown(run: () => unknown): UbiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UbiError);
    return error as UbiError;
  }
  throw new Error("nothing thrown");
}

async function rejection(promise: Promise<unknown>): Promise<UbiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UbiError);
  return error as UbiError;
}

describe("RefusalLog", () => {
  it("writes one line per refusal up to the window's limit, then sums up the rest when it ends", () => {
    const clock = new ManualClock();
    const lines: string[] = [];
    const log = new RefusalLog(
      { maxLinesPerWindow: 3, windowMs: 60_000 },
      { clock, write: (line) => lines.push(line) },
    );
    for (let i = 0; i < 50; i++) log.refused(`10.0.0.${i}:4000`, "it spoke plaintext", "TLS handshake");
    expect(lines).toEqual([
      "refused a TLS handshake from 10.0.0.0:4000: it spoke plaintext",
      "refused a TLS handshake from 10.0.0.1:4000: it spoke plaintext",
      "refused a TLS handshake from 10.0.0.2:4000: it spoke plaintext",
    ]);
    clock.advance(60_000);
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(/^refused 47 more connections in the last 60 s/);
    // A new window logs one by one again.
    log.refused("10.0.0.9:4000", "again");
    expect(lines.at(-1)).toBe("refused a connection from 10.0.0.9:4000: again");
    log.stop();
    expect(lines).toHaveLength(5);
  });
});

describe("describeTlsRefusal", () => {
  it.each([
    ["ERR_SSL_WRONG_VERSION_NUMBER", undefined, /spoke plaintext.*--insecure/],
    ["ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE", undefined, /showed no certificate/],
    [
      "ECONNRESET",
      "SELF_SIGNED_CERT_IN_CHAIN",
      /not signed by this cluster's CA \(SELF_SIGNED_CERT_IN_CHAIN\)/,
    ],
    ["ECONNRESET", "CERT_HAS_EXPIRED", /expired/],
    ["ECONNRESET", undefined, /closed the connection during the TLS handshake/],
  ])("%s (%s)", (code, authorizationError, expected) => {
    const error = Object.assign(new Error("handshake failed"), { code });
    expect(describeTlsRefusal(error, authorizationError)).toMatch(expected);
  });
});

describe("AgentServer.start", () => {
  it("says an address in use is in use, and what to do", async () => {
    const first = new AgentServer({}, { handlers: new FakeHandlers() });
    const address = await first.start("127.0.0.1:0");
    onTestFinished(() => first.stop());
    const second = new AgentServer({}, { handlers: new FakeHandlers() });
    const error = await rejection(second.start(address));
    expect(error.code).toBe(ErrorCode.ListenFailed);
    expect(error.message).toContain(`cannot listen on ${address}: the address is already in use`);
    expect(error.message).toContain("--listen another port");
  });

  it("says an address that is not this machine's is not", async () => {
    const server = new AgentServer({}, { handlers: new FakeHandlers() });
    // TEST-NET-3: never an address of the test machine.
    const error = await rejection(server.start("203.0.113.7:0"));
    expect(error.code).toBe(ErrorCode.ListenFailed);
    expect(error.message).toContain("203.0.113.7 is not an address of this machine");
    expect(error.message).toContain("--advertise");
  });
});

describe.skipIf(skipWithout(opensslMissing))("with certificates", () => {
  let dir: string;
  let a1: MutualTlsTransport;
  let a2: MutualTlsTransport;
  let foreign: MutualTlsTransport;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-server-errors-"));
    await createClusterCertificates({ outDir: join(dir, "certs"), agents: ["a1", "a2"], operator: false });
    await createClusterCertificates({ outDir: join(dir, "other"), agents: ["a1"], operator: false });
    const load = (folder: string, name: string) => {
      const identity = identityIn(join(dir, folder), name);
      return loadMutualTls(identity.caPath, identity.files);
    };
    [a1, a2, foreign] = await Promise.all([load("certs", "a1"), load("certs", "a2"), load("other", "a1")]);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a certificate and a key that do not match, naming both", () => {
    const mismatched = { ...a1, keyPem: a2.keyPem };
    const error = thrown(() =>
      checkTlsMaterial(mismatched, { cert: "--tls-cert a1.pem", key: "--tls-key a2.key" }),
    );
    expect(error.code).toBe(ErrorCode.CertificateFailed);
    expect(error.message).toContain("--tls-cert a1.pem and --tls-key a2.key do not match");
    // The server checks it too, before any bind.
    const server = thrown(() => new AgentServer({ security: mismatched }, { handlers: new FakeHandlers() }));
    expect(server.code).toBe(ErrorCode.CertificateFailed);
    expect(server.message).toContain("do not match");
  });

  it("refuses a file that is no PEM certificate, naming it", () => {
    const noCa = thrown(() => checkTlsMaterial({ ...a1, caPem: a1.keyPem }, { ca: "--tls-ca ca.pem" }));
    expect(noCa.code).toBe(ErrorCode.CertificateFailed);
    expect(noCa.message).toContain("--tls-ca ca.pem holds no PEM certificate");
    const garbled = thrown(() =>
      checkTlsMaterial({ ...a1, certPem: "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n" }),
    );
    expect(garbled.code).toBe(ErrorCode.CertificateFailed);
    expect(garbled.message).toContain("the certificate is not a readable PEM certificate");
  });

  it("logs each refused handshake with the peer's address, and a flood only up to its limit", async () => {
    const lines: string[] = [];
    const { logger } = await recordingLogger({
      onRecord: (record) => {
        expect([record.level, record.event]).toEqual(["warn", "connection-refused"]);
        // The parts a log pipeline groups by: the peer and the reason, or the count left out.
        if (record.suppressed === undefined)
          expect(record).toMatchObject({ peer: expect.any(String), reason: expect.any(String) });
        lines.push(record.msg);
      },
    });
    const server = new AgentServer({ security: a1 }, { handlers: new FakeHandlers(), logger });
    const address = await server.start("127.0.0.1:0");
    const port = Number(address.split(":")[1]);
    // A plaintext client: the HTTP/2 preface where a TLS ClientHello belongs.
    const plain = connectTcp({ host: "127.0.0.1", port });
    const plainPort = await new Promise<number>((resolve) =>
      plain.once("connect", () => {
        plain.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        resolve(plain.localPort as number);
      }),
    );
    await waitFor(() => lines.length >= 1, "the plaintext refusal to be logged", 5000);
    expect(lines[0]).toBe(
      `refused a TLS handshake from 127.0.0.1:${plainPort}: it spoke plaintext, but this agent uses TLS (is it running with --insecure?)`,
    );
    // Another cluster's certificate.
    const intruder = connectTls({
      host: "127.0.0.1",
      port,
      ca: foreign.caPem,
      cert: foreign.certPem,
      key: foreign.keyPem,
      rejectUnauthorized: false,
      ALPNProtocols: ["h2"],
    });
    intruder.on("error", () => {});
    const intruderPort = await new Promise<number>((resolve) =>
      intruder.once("secureConnect", () => resolve(intruder.localPort as number)),
    );
    await waitFor(() => lines.length >= 2, "the foreign certificate's refusal to be logged", 5000);
    expect(lines[1]).toContain(
      `refused a TLS handshake from 127.0.0.1:${intruderPort}: its certificate is not signed`,
    );
    intruder.destroy();
    // A flood of 100 plaintext connections: 10 lines a minute at most, the rest summed up at stop.
    const flood = Array.from({ length: 100 }, () => {
      const socket = connectTcp({ host: "127.0.0.1", port });
      socket.on("connect", () => socket.write("GET / HTTP/1.1\r\n\r\n"));
      socket.on("error", () => {});
      return new Promise<void>((resolve) => socket.once("close", () => resolve()));
    });
    await Promise.all(flood);
    await waitFor(() => lines.length >= 10, "ten lines", 5000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lines).toHaveLength(10);
    await server.stop();
    expect(lines).toHaveLength(11);
    expect(lines[10]).toMatch(/^refused \d+ more connections in the last 60 s/);
    const counted = Number(/^refused (\d+) more/.exec(lines[10] as string)?.[1]);
    expect(counted + 10).toBe(102);
    plain.destroy();
  });
});
