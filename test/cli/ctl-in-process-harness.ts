import type { AgentOptions } from "../../src/agent/index.js";
import { ctlCommand } from "../../src/cli/ctl-command.js";
import { commandFailed } from "../../src/cli/main.js";
import type { OperatorLink } from "../../src/cli/operator-connection.js";
import type { LogRecord } from "../../src/logging/index.js";
import { type MemoryAgentOptions, type MemoryCluster, OPERATOR } from "../cluster/memory-cluster-harness.js";
import { recordingLogger } from "../support/recording-logger.js";

/**
 * `ubicrawl ctl` in the test's process, against the agents of a {@link MemoryCluster}: the command's own
 * code (`ctlCommand`, and `main`'s exit code and line for bad usage), its calls carried by the cluster's
 * `MemoryNetwork` from {@link OPERATOR}. What needs the real process — gRPC to a real agent, an agent
 * process that exits after `ctl leave` — is in ctl-command.test.ts.
 */

/**
 * The agents' options of the real-process ctl tests (AGENT_FLAGS) over the in-process cluster's (which
 * has the test web's: see memory-cluster-harness.ts): 100 ms between requests to a host.
 */
export const IN_PROCESS_AGENT = { delayMs: 100 } as const satisfies Partial<AgentOptions>;

/**
 * `ubicrawl ctl --agent <agent id's address> --insecure ARGS…` run here: its exit code, and what it
 * printed on standard output and error together (as ctl-harness's `ctl` gives them).
 */
export async function memoryCtl(
  cluster: MemoryCluster,
  id: string,
  ...args: string[]
): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const output = {
    write: (text: string) => {
      stdout += text;
    },
  };
  const link: OperatorLink = {
    transport: cluster.network.transport(OPERATOR),
    // No TLS to probe on a MemoryNetwork: a call that failed is reported as it failed.
    diagnose: async () => ({ ok: true }),
  };
  const argv = ["--agent", cluster.addressOf(id), "--insecure", ...args];
  let code: number;
  try {
    code = await ctlCommand(argv, { link, stdout: output, stderr: output });
  } catch (error) {
    code = commandFailed("ctl", error, output);
  }
  return { code, stdout };
}

/** Starts agent `id` of `cluster` with a logger of its own: its records, as its process's stderr would show them. */
export async function startRecorded(
  cluster: MemoryCluster,
  id: string,
  options: MemoryAgentOptions = {},
): Promise<LogRecord[]> {
  const { logger, records } = await recordingLogger({ level: "info" });
  await cluster.start(id, { ...options, deps: { ...options.deps, logger } });
  return records;
}

/**
 * Resolves when every running agent of `cluster` finds the crawl complete (what ends an agent's process
 * with `--exit-when-done`); rejects after `timeoutMs`, saying what is left.
 */
export async function crawlEnd(cluster: MemoryCluster, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all([...cluster.nodes.values()].map((node) => node.agent.whenDone())),
      new Promise((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `the crawl did not end within ${timeoutMs} ms: missing ${cluster.missing().length}; ${cluster.leftover()}`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
