import { createServer } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl stats`, run in this process: its help, and its refusals with their exit codes — flags it
 * cannot go on with (exit 2), an address where no agent listens (exit 1, said in words). Its report of
 * running agents, by a real process: test/cluster/stats-cli.test.ts.
 */

/** A loopback address where nothing listens (a port just given back). */
let closedAddress: string;
beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  closedAddress = `127.0.0.1:${address.port}`;
  await new Promise((resolve) => server.close(resolve));
});

describe("ubicrawl stats' refusals", () => {
  it("refuses no --agent, and no security, with exit 2 and the flags to give", async () => {
    for (const [args, message] of [
      [["--insecure"], "--agent is required"],
      [["--agent", "127.0.0.1:1"], "give --tls-ca/--tls-cert/--tls-key, or --insecure"],
      [
        ["--agent", "127.0.0.1:1", "--tls-ca", "ca.pem"],
        "mutual TLS needs all three of --tls-ca, --tls-cert and --tls-key",
      ],
      [
        ["--agent", "127.0.0.1:1", "--insecure", "--timeout-ms", "5"],
        "--timeout-ms must be at least 100, got 5",
      ],
    ] as const) {
      const result = await ubicrawlInProcess(["stats", ...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(/^ubicrawl stats: .*\[UBI_ERR_INVALID_ARGUMENT\]\n$/);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe("");
    }
  });

  it("says an address where no agent listens cannot be reached, with exit 1", async () => {
    const result = await ubicrawlInProcess(["stats", "--agent", closedAddress, "--insecure"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe(
      `ubicrawl stats: cannot reach the agent at ${closedAddress}: cannot connect to ${closedAddress} (connection refused): is an agent running there, and is the address right? [UBI_ERR_PEER_UNREACHABLE]\n`,
    );
    expect(result.stdout).toBe("");
  });
});

describe("ubicrawl stats --help", () => {
  it("gives its flags on stdout", async () => {
    const result = await ubicrawlInProcess(["stats", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: ubicrawl stats --agent HOST:PORT \[--cluster\] \[--json\]\n/);
    expect(result.stdout).toContain("--agent HOST:PORT");
    expect(result.stdout).toContain("--cluster");
  });
});
