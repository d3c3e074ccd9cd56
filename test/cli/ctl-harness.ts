import { runUbicrawl } from "../agent/harness.js";
import type { ClusterAgent } from "../cluster/cluster-harness.js";

/** `ubicrawl ctl` against a running agent, in plaintext (the role checks are in test/security). */
export async function ctl(
  agent: ClusterAgent,
  ...args: string[]
): Promise<{ code: number | null; stdout: string }> {
  const run = runUbicrawl(["ctl", "--agent", agent.address, "--insecure", ...args]);
  const { code, stdout, stderr } = await run.waitForExit(30_000);
  return { code, stdout: stdout + stderr };
}

/** A crawl slow enough to steer: 5 ms a response, 20 ms between requests to a host. */
export const STEERABLE = { hosts: 20, pages: 1500, responseDelayMs: 5 } as const;
/**
 * A web whose crawl at 10 requests a second a host (AGENT_FLAGS' 100 ms) lasts ~6 s: 892 pages, none
 * of its 22 hosts over 61. For the tests that wait for the crawl's end.
 */
export const SMALL_WEB = { hosts: 20, pages: 600, maxArticlesPerHost: 40, responseDelayMs: 5 } as const;

/**
 * 10 requests a second a host: a crawl (~10-15 s) outlasts the commands sent to it (at 20 ms an agent
 * could finish its part and exit before it was asked: "connection refused").
 */
export const AGENT_FLAGS = ["--delay-ms", "100"] as const;
