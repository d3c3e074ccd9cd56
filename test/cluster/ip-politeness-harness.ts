import { expect } from "vitest";
import { logEvent, type WebFixture } from "../agent/harness.js";
import { type ClusterAgent, fetchedBy } from "./cluster-harness.js";

/**
 * The cluster-wide limit under test, and a short whole-fetch deadline: a slot whose release never comes
 * (its agent killed) lasts that long, and so does a crashed authority's grace.
 */
export const FLAGS = ["--ip-limit", "cluster", "--max-per-ip", "2", "--fetch-timeout-ms", "4000"];

export type LogRecord = NonNullable<ReturnType<typeof logEvent>>;

/** Waits for every agent to exit 0; returns their `stopped` records. */
export async function waitForExits(agents: readonly ClusterAgent[]): Promise<LogRecord[]> {
  const stopped: LogRecord[] = [];
  for (const agent of agents) {
    const result = await agent.process.waitForExit(120_000);
    expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
    stopped.push(logEvent(result.stderr, "stopped") ?? ({} as LogRecord));
  }
  return stopped;
}

/** The agents that fetched pages of hosts at `ip`. */
export async function agentsAt(
  fixture: WebFixture,
  agents: readonly ClusterAgent[],
  ip: string,
): Promise<string[]> {
  const { model } = fixture.web;
  const atIp = (url: string) =>
    model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1]?.ip === ip;
  const byAgent = await fetchedBy(agents);
  return [...byAgent].filter(([, urls]) => urls.some(atIp)).map(([id]) => id);
}
