// Starting a local cluster of agents for a benchmark, through the launcher's one orchestrator
// (`AgentCluster`): agent i (1-based) listens on 127.0.0.1:0 and joins the agents started before it
// (addresses from the `listening` record on their stderr); with
// seeds, the script waits until those agents all see each other alive before it starts the last agent
// with the seeds, so membership has settled before the crawl begins.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AgentCluster } from "../../dist/launch/index.js";
import { Child, processOptionsOf, startAgentProcess } from "./processes.mjs";

/** How long the agents started so far may take to see each other alive before the crawl starts anyway. */
export const SETTLE_TIMEOUT_MS = 15_000;

/**
 * Starts `count` agents `agent-1` … `agent-<count>` forming one cluster, each with its data in
 * `runDir/<id>`, `flags` (e.g. benchAgentFlags) and `--listen 127.0.0.1:0 --insecure --join …`; the last
 * one gets `--seeds seedsFile` (when given), after the others' views have settled. Every agent is
 * watched by `stats` from its start until its exit; `onSpawn` runs as each one is spawned (add it to the
 * children to stop, sample its memory…), before its address is known. With `listenAlone` false, a
 * count of 1 starts one plain agent instead (no `--listen`, so no address and no stats): a lone agent
 * that listens is a cluster of one, whose end of crawl waits on the failure detector's rounds (~6 s
 * after its last page at the default 1 s heartbeats, where a plain agent exits at once).
 * @param {object} cluster
 * @param {number} cluster.count
 * @param {string} cluster.runDir
 * @param {readonly string[]} cluster.flags the same for every agent
 * @param {string} [cluster.seedsFile]
 * @param {import("./stats-poller.mjs").StatsPoller} cluster.stats
 * @param {(i: number) => import("./processes.mjs").SpawnOptions} [cluster.spawnOptionsOf] options of agent i
 * @param {(agent: import("./processes.mjs").Child) => void} [cluster.onSpawn]
 * @param {(text: string) => void} [cluster.log]
 * @param {boolean} [cluster.listenAlone] a lone agent listens too (default: true)
 * @returns {Promise<import("./processes.mjs").Child[]>} the agents, `address` set on each
 */
export async function startClusterAgents({
  count,
  runDir,
  flags,
  seedsFile,
  stats,
  spawnOptionsOf = () => ({}),
  onSpawn = () => {},
  log = () => {},
  listenAlone = true,
}) {
  const seedArgs = seedsFile === undefined ? [] : ["--seeds", seedsFile];
  if (count === 1 && !listenAlone) {
    await mkdir(join(runDir, "agent-1"), { recursive: true });
    const agent = startAgentProcess(
      "agent-1",
      ["--data", join(runDir, "agent-1"), ...flags, ...seedArgs],
      spawnOptionsOf(1),
    );
    onSpawn(agent);
    return [agent];
  }
  const cluster = new AgentCluster({ flags: { insecure: true }, dataDirOf: (id) => join(runDir, id) });
  const agents = [];
  for (let i = 1; i <= count; i++) {
    const id = `agent-${i}`;
    const last = i === count;
    // Seeds go to the last agent only: the others already know each other when the crawl starts.
    if (last && seedsFile !== undefined && count > 1) await waitForSettledView(stats, agents, log);
    await mkdir(join(runDir, id), { recursive: true });
    const spawnOptions = spawnOptionsOf(i);
    const member = cluster.launch(id, {
      join: agents.map((agent) => agent.address),
      args: [...flags, ...(last ? seedArgs : [])],
      process: processOptionsOf(spawnOptions),
    });
    const agent = new Child(member.process, spawnOptions);
    onSpawn(agent);
    agents.push(agent);
    agent.address = String((await agent.waitForEvent("listening", 30_000)).address);
    stats.watch(id, agent.address);
    agent.exited.then(() => stats.forget(id));
  }
  return agents;
}

/**
 * Waits (boundedly) until every agent of `agents` regards all of them as alive.
 * @param {import("./stats-poller.mjs").StatsPoller} stats watching every agent
 * @param {readonly import("./processes.mjs").Child[]} agents
 * @param {(text: string) => void} [log]
 */
export async function waitForSettledView(stats, agents, log = () => {}) {
  const ids = agents.map((agent) => agent.name);
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const views = await Promise.all(ids.map((id) => stats.aliveView(id)));
    if (views.every((view) => ids.every((id) => view.has(id)))) return;
    await sleep(100);
  }
  log(`membership of ${ids.join(", ")} did not settle in ${SETTLE_TIMEOUT_MS} ms; starting the crawl anyway`);
}
