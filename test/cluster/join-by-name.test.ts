import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClusterCertificates } from "../../src/security/index.js";
import type { AgentStats } from "../../src/transport/index.js";
import {
  LOOPBACK_CIDR,
  logEvent,
  runUbicrawl,
  startWebFixture,
  type UbicrawlProcess,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { identityIn, tlsFlags } from "../security/tls-agents.js";
import { freePort } from "../support/free-port.js";

/**
 * `--join` by a name that resolves to several addresses, as a Kubernetes headless Service's does (one
 * per pod): the agent resolves it itself (through --hosts-file here, so no DNS server is asked), tries
 * each address but its own, and checks each peer's certificate against the name. Every agent listens
 * on the same port of its own loopback address (127.0.0.2, .3, …), as pods do on their own IPs.
 */

const NAME = "agents.ubi.test";
const IPS = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"];

let fixture: WebFixture | undefined;
const running: UbicrawlProcess[] = [];

afterEach(async () => {
  for (const agent of running.splice(0)) if (!agent.exited) agent.kill("SIGKILL");
  await fixture?.stop();
  fixture = undefined;
});

describe("--join by a name with several addresses", () => {
  it("tries each address the name resolves to: joins while the first is down, never through itself", async () => {
    fixture = await startWebFixture({ hosts: 20, pages: 2000, seed: 3, responseDelayMs: 5 });
    const web = fixture;
    const ids = IPS.map((_, i) => `n${i + 1}`);
    const certs = join(web.dir, "certs");
    // The peers' certificates name the shared name (the join's) and each agent's own address.
    await createClusterCertificates({ outDir: certs, agents: ids, hosts: [NAME, ...IPS] });
    const hostsFile = join(web.dir, "hosts-with-agents");
    const agentLines = IPS.map((ip) => `${ip} ${NAME}`).join("\n");
    await writeFile(hostsFile, `${await readFile(web.hostsFile, "utf8")}\n${agentLines}\n`);
    const port = await freePort(IPS);
    const address = (i: number) => `${IPS[i]}:${port}`;
    const start = async (i: number, extra: readonly string[]): Promise<UbicrawlProcess> => {
      const id = ids[i] as string;
      const process = runUbicrawl(
        [
          "agent",
          "--id",
          id,
          "--data",
          join(web.dir, `data-${id}`),
          "--listen",
          address(i),
          "--hosts-file",
          hostsFile,
          "--allow-net",
          LOOPBACK_CIDR,
          "--delay-ms",
          "100",
          "--progress",
          "off",
          ...tlsFlags(identityIn(certs, id)),
          ...extra,
        ],
        { cwd: web.dir },
      );
      running.push(process);
      await process.listening(30_000);
      return process;
    };
    const aliveSeenBy = async (i: number): Promise<string[]> => {
      const result = await runUbicrawl([
        "stats",
        "--agent",
        address(i),
        "--json",
        ...tlsFlags(identityIn(certs, "operator")),
      ]).waitForExit(20_000);
      if (result.code !== 0) return [];
      const [own] = (JSON.parse(result.stdout) as { agents: AgentStats[] }).agents;
      return (own?.view ?? [])
        .filter((peer) => peer.status === "ALIVE")
        .map((peer) => peer.id)
        .sort();
    };
    const byName = ["--join", `${NAME}:${port}`];

    const first = await start(0, ["--seeds", web.seedsFile]);
    const second = await start(1, byName);
    await start(2, byName);
    await waitFor(
      async () => (await aliveSeenBy(2)).join() === "n1,n2,n3",
      "n1, n2 and n3 in one cluster",
      30_000,
    );
    // The name stands for every agent, this one included: it says so and leaves its own out.
    expect(logEvent(second.stderr(), "join-resolved")).toMatchObject({
      addresses: IPS.map((ip) => `${ip}:${port}`),
    });

    // The name's first address is down: a new agent joins through the others.
    first.kill("SIGKILL");
    await first.waitForExit(10_000);
    const fourth = await start(3, byName);
    await waitFor(
      async () => {
        const alive = await aliveSeenBy(3);
        return alive.includes("n2") && alive.includes("n3") && alive.includes("n4");
      },
      "n4 to join n2 and n3",
      30_000,
    );
    expect(logEvent(fourth.stderr(), "rejoin-none-answered")).toBeUndefined();
  }, 120_000);
});
