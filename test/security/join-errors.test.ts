import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterCertificates } from "../../src/security/index.js";
import {
  type ExitResult,
  errorLine,
  killAllUbicrawl,
  logEvent,
  logText,
  runUbicrawl,
  waitFor,
} from "../agent/harness.js";
import { identityIn, startTlsAgent, type TlsAgent, tlsFlags } from "./tls-agents.js";

/**
 * A join fails fast on what cannot pass — plaintext against TLS and the reverse, another cluster's
 * CA — with a message that says which; the refusing agent logs each refusal with the joiner's
 * address. A join address where nothing listens is retried, with progress, until the join timeout.
 */

let dir: string;
let certs: string;
let tlsAgent: TlsAgent;
let plainAgent: TlsAgent;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-join-errors-"));
  certs = join(dir, "certs");
  await createClusterCertificates({ outDir: certs, agents: ["secure", "joiner"], operator: false });
  await createClusterCertificates({ outDir: join(dir, "other"), agents: ["joiner"], operator: false });
  [tlsAgent, plainAgent] = await Promise.all([
    startTlsAgent("secure", ["--data", join(dir, "secure"), ...tlsFlags(identityIn(certs, "secure"))], dir),
    startTlsAgent("plain", ["--data", join(dir, "plain"), "--insecure"], dir),
  ]);
});

afterAll(async () => {
  await killAllUbicrawl();
  await rm(dir, { recursive: true, force: true });
});

/** Runs a joining agent to its end; resolves with how it ended and how long it took. */
async function joinAs(args: readonly string[]): Promise<{ result: ExitResult; ms: number }> {
  const started = performance.now();
  const result = await runUbicrawl(
    [
      "agent",
      "--id",
      "joiner",
      "--data",
      join(dir, `joiner-${Math.random()}`),
      "--listen",
      "127.0.0.1:0",
      "--progress",
      "off",
      ...args,
    ],
    { cwd: dir },
  ).waitForExit(40_000);
  return { result, ms: performance.now() - started };
}

/** Asserts a failed join: exit 1, PeerUnreachable, well before the 30 s join timeout. */
function expectFastRefusal(outcome: { result: ExitResult; ms: number }): string {
  expect(outcome.result.code, outcome.result.stderr).toBe(1);
  const line = errorLine(outcome.result.stderr);
  expect(line, outcome.result.stderr).toMatch(
    /^fatal: cannot join the cluster: .*\[UBI_ERR_PEER_UNREACHABLE\]$/,
  );
  expect(outcome.ms).toBeLessThan(10_000);
  expect(outcome.result.stderr).not.toMatch(/still trying/);
  expect(outcome.result.stderr).not.toMatch(/listening on/);
  return line;
}

describe("joining a cluster that cannot be joined this way fails at once, saying why", () => {
  it("--insecure against a TLS cluster", async () => {
    const line = expectFastRefusal(await joinAs(["--join", tlsAgent.address, "--insecure"]));
    expect(line).toContain(
      `the agent at ${tlsAgent.address} uses TLS, but this one runs in plaintext (--insecure)`,
    );
    expect(line).toContain("--tls-ca, --tls-cert and --tls-key");
    // The TLS agent says whom it refused, and why.
    await waitFor(
      () =>
        /refused a TLS handshake from 127\.0\.0\.1:\d+: it spoke plaintext/.test(tlsAgent.process.stderr()),
      "the TLS agent to log the refusal",
      5000,
    );
  });

  it("TLS against a plaintext cluster", async () => {
    const line = expectFastRefusal(
      await joinAs(["--join", plainAgent.address, ...tlsFlags(identityIn(certs, "joiner"))]),
    );
    expect(line).toContain(
      `${plainAgent.address} does not speak TLS: the agent there runs in plaintext (--insecure)`,
    );
    await waitFor(
      () =>
        /refused a connection from 127\.0\.0\.1:\d+: it did not speak plaintext HTTP\/2/.test(
          plainAgent.process.stderr(),
        ),
      "the plaintext agent to log the refusal",
      5000,
    );
  });

  it("a certificate of another cluster's CA", async () => {
    const line = expectFastRefusal(
      await joinAs(["--join", tlsAgent.address, ...tlsFlags(identityIn(join(dir, "other"), "joiner"))]),
    );
    expect(line).toContain(`${tlsAgent.address} shows a certificate not signed by our CA`);
    await waitFor(
      () =>
        /refused a TLS handshake from 127\.0\.0\.1:\d+: its certificate is not signed by this cluster's CA/.test(
          tlsAgent.process.stderr(),
        ),
      "the TLS agent to log the foreign certificate",
      5000,
    );
  });
});

describe("a join address where nothing listens", () => {
  it("is retried with progress lines until --join-timeout-ms, then named in the error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(closed.address() as { port: number }).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const { result, ms } = await joinAs(["--join", address, "--insecure", "--join-timeout-ms", "6000"]);
    expect(result.code, result.stderr).toBe(1);
    expect(logText(result.stderr)).toContain(
      `info: still trying to join ${address} (connection refused), 6 s left`,
    );
    expect(logEvent(result.stderr, "join-waiting")?.agent).toBe("joiner");
    expect(result.stderr).toMatch(
      new RegExp(
        `still trying to join ${address.replace(/\./g, "\\.")} \\(connection refused\\), [12] s left`,
      ),
    );
    const line = errorLine(result.stderr);
    expect(line).toContain(`no agent answered within 6 s at ${address} (connection refused)`);
    expect(line).toContain("--join-timeout-ms");
    expect(line).toMatch(/\[UBI_ERR_PEER_UNREACHABLE\]$/);
    expect(ms).toBeGreaterThanOrEqual(5500);
  });
});
