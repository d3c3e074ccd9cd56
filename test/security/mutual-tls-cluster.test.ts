import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClusterCertificates } from "../../src/security/index.js";
import type { AgentStats } from "../../src/transport/index.js";
import {
  crawlMetrics,
  LOOPBACK_CIDR,
  runUbicrawl,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { identityIn, startTlsAgent, tlsFlags } from "./tls-agents.js";

const WEB = { hosts: 20, pages: 800, seed: 11 };
const FAST_HEARTBEAT = ["--heartbeat-ms", "200", "--suspect-after-ms", "1200"];

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

describe("a cluster with mutual TLS", () => {
  it("crawls the test web to full coverage, answers the operator, and keeps out an agent of another CA", async () => {
    fixture = await startWebFixture(WEB);
    const web = fixture;
    const certs = join(web.dir, "certs");
    const foreign = join(web.dir, "foreign");
    await createClusterCertificates({ outDir: certs, agents: ["agent-1", "agent-2"] });
    await createClusterCertificates({ outDir: foreign, agents: ["intruder"] });
    const common = (id: string) => [
      "--data",
      join(web.dir, `data-${id}`),
      "--hosts-file",
      web.hostsFile,
      "--allow-net",
      LOOPBACK_CIDR,
      "--delay-ms",
      "0",
      "--robots-retry-ms",
      "100",
      "--max-robots-attempts",
      "2",
      ...FAST_HEARTBEAT,
    ];
    const one = await startTlsAgent(
      "agent-1",
      [...common("agent-1"), ...tlsFlags(identityIn(certs, "agent-1"))],
      web.dir,
    );
    // The intruder trusts the real CA (its certificate is no secret) but shows a certificate of its
    // own CA: agent-1 must refuse the handshake. It gives up joining after 5 s, running alongside.
    const intruder = runUbicrawl(
      [
        "agent",
        "--id",
        "intruder",
        "--listen",
        "127.0.0.1:0",
        "--join",
        one.address,
        "--join-timeout-ms",
        "5000",
        ...common("intruder"),
        "--tls-ca",
        join(certs, "ca.pem"),
        "--tls-cert",
        join(foreign, "intruder.pem"),
        "--tls-key",
        join(foreign, "intruder.key"),
      ],
      { cwd: web.dir },
    );
    const two = await startTlsAgent(
      "agent-2",
      [
        ...common("agent-2"),
        "--join",
        one.address,
        "--seeds",
        web.seedsFile,
        ...tlsFlags(identityIn(certs, "agent-2")),
      ],
      web.dir,
    );

    const truth = web.truth().urls;
    await waitFor(
      () => crawlMetrics(servedPages(web.web.recorder), truth).missing.length === 0,
      "full coverage",
      45_000,
      50,
    );
    const metrics = crawlMetrics(servedPages(web.web.recorder), truth);
    expect(metrics.coverage).toBe(1);
    expect(metrics.extra).toEqual([]);

    // The operator certificate works with `ubicrawl stats`; both agents crawled over TLS.
    const operator = tlsFlags(identityIn(certs, "operator"));
    const stats = await runUbicrawl([
      "stats",
      "--agent",
      one.address,
      "--cluster",
      "--json",
      ...operator,
    ]).waitForExit(20_000);
    expect(stats.code, stats.stderr).toBe(0);
    const agents = (JSON.parse(stats.stdout) as { agents: AgentStats[] }).agents;
    expect(agents.map((agent) => agent.id).sort()).toEqual(["agent-1", "agent-2"]);
    for (const agent of agents) {
      expect(agent.pagesFetched, agent.id).toBeGreaterThan(0);
      expect(agent.view.map((peer) => peer.id).sort()).toEqual(["agent-1", "agent-2"]);
      expect(agent.peers.map((peer) => peer.peerId)).not.toContain("intruder");
    }
    // The operator certificate fetches both agents' WARC files for an export; an agent's does not.
    const exported = await runUbicrawl([
      "export",
      "--out",
      join(web.dir, "tls.wacz"),
      "--agent",
      one.address,
      "--cluster",
      ...operator,
    ]).waitForExit(60_000);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/ of 2 agents \(agent-1, agent-2\)/);
    const asAgent = await runUbicrawl([
      "export",
      "--out",
      join(web.dir, "refused.wacz"),
      "--agent",
      one.address,
      ...tlsFlags(identityIn(certs, "agent-1")),
    ]).waitForExit(20_000);
    expect(asAgent.code).not.toBe(0);
    expect(asAgent.stderr).toContain("operator certificates only");
    const table = await runUbicrawl(["stats", "--agent", two.address, ...operator]).waitForExit(20_000);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^agent agent-2 at /);
    // A command for the cluster goes through agent-1, which relays it to agent-2 with its own agent
    // certificate (the operator's opens only the Admin service).
    const listed = await runUbicrawl([
      "ctl",
      "--agent",
      one.address,
      ...operator,
      "--cluster",
      "blacklist-list",
    ]).waitForExit(20_000);
    expect(listed.code, `${listed.stdout}${listed.stderr}`).toBe(0);
    expect(listed.stdout).toMatch(/^agent-1 \(\S+\): blacklist: \(empty\)$/m);
    expect(listed.stdout).toMatch(/^agent-2 \(\S+\): blacklist: \(empty\)$/m);
    // A plaintext operator is told why, not gRPC's bare "unavailable": by stats and by ctl.
    const plain = await runUbicrawl(["stats", "--agent", one.address, "--insecure"]).waitForExit(20_000);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(
      /^ubicrawl stats: cannot reach the agent at \S+: .*uses TLS.*\[UBI_ERR_PEER_UNREACHABLE\]$/m,
    );
    const pause = await runUbicrawl(["ctl", "--agent", one.address, "--insecure", "pause"]).waitForExit(
      20_000,
    );
    expect(pause.code).toBe(1);
    expect(pause.stdout).toMatch(/failed: cannot reach the agent at \S+: .*uses TLS/);

    const refused = await intruder.waitForExit(50_000);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/UBI_ERR_PEER_UNREACHABLE/);
    // The TLS reason gRPC hides is diagnosed for the user.
    expect(refused.stderr).toMatch(/certificate/i);
    // It never got as far as serving: the join is what failed.
    expect(refused.stderr).not.toMatch(/listening on/);

    one.process.kill("SIGTERM");
    two.process.kill("SIGTERM");
    for (const agent of [one, two]) {
      const exit = await agent.process.waitForExit(20_000);
      expect(exit.code).toBe(0);
      // Dialed by IP over TLS: no server name is an IP (Node 20 warns of it, Node 26 refuses it).
      expect(exit.stderr).not.toMatch(/DEP0123|ServerName to an IP/);
    }
  }, 90_000);
});
