// Balance of the identifier-seeded consistent hashing: for each agent count, capacity mix and number of
// replicas per unit of capacity, the max relative deviation of any agent's host share from its
// capacity-proportional share over 1,000,000 hosts, plus ownerOf lookups per second.
// Run after `npm run build`:  node bench/balance.mjs [--hosts 1000000]
import { Assignment, DEFAULT_REPLICAS_PER_UNIT, loadHasher64 } from "../dist/hashing/index.js";
import { parseBenchFlags } from "./lib/flags.mjs";

const FLAGS = {
  hosts: { type: "integer", help: "host names to assign", default: 1_000_000, min: 1, max: 100_000_000 },
};
const HOSTS = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/balance.mjs [flags]").hosts;
const AGENT_COUNTS = [2, 4, 8, 16, 32, 64];
const REPLICAS_PER_UNIT = [50, 100, 200, 400, 800, 1600, 3200];
const MIXES = {
  uniform: () => 1,
  "mixed 1,1,2,4": (i) => [1, 1, 2, 4][i % 4],
};

const hasher = await loadHasher64();
const hosts = Array.from({ length: HOSTS }, (_, i) => `h${String(i).padStart(4, "0")}.ubi.test:8080`);

/** Max relative deviation of per-agent host counts from capacity-proportional counts, and lookups/s. */
function measure(agents, replicasPerUnit) {
  const building = process.hrtime.bigint();
  const assignment = Assignment.build(agents, { replicasPerUnit }, hasher);
  const buildMs = Number(process.hrtime.bigint() - building) / 1e6;
  const counts = new Map(agents.map((agent) => [agent.id, 0]));
  const started = process.hrtime.bigint();
  for (const host of hosts) {
    const owner = assignment.ownerOf(host);
    counts.set(owner, counts.get(owner) + 1);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const totalCapacity = agents.reduce((sum, agent) => sum + agent.capacity, 0);
  let worst = 0;
  for (const agent of agents) {
    const expected = (HOSTS * agent.capacity) / totalCapacity;
    worst = Math.max(worst, Math.abs(counts.get(agent.id) - expected) / expected);
  }
  return { worst, lookupsPerSecond: HOSTS / seconds, buildMs };
}

const pct = (x) => `${(x * 100).toFixed(1)}%`.padStart(7);
console.log(`max relative deviation from the capacity-proportional share, ${HOSTS} hosts`);
console.log(
  `${"agents".padEnd(7)}${"capacities".padEnd(15)}${REPLICAS_PER_UNIT.map((r) => `r=${r}`.padStart(7)).join("")}` +
    `  at r=${DEFAULT_REPLICAS_PER_UNIT}: build ms, lookups/s`,
);
const worstByReplicas = REPLICAS_PER_UNIT.map(() => 0);
for (const [mixName, capacityOf] of Object.entries(MIXES)) {
  for (const n of AGENT_COUNTS) {
    const agents = Array.from({ length: n }, (_, i) => ({ id: `agent-${i}`, capacity: capacityOf(i) }));
    const cells = REPLICAS_PER_UNIT.map((replicasPerUnit, column) => {
      const { worst } = measure(agents, replicasPerUnit);
      worstByReplicas[column] = Math.max(worstByReplicas[column], worst);
      return pct(worst);
    });
    const { lookupsPerSecond, buildMs } = measure(agents, DEFAULT_REPLICAS_PER_UNIT);
    const speed = `${buildMs.toFixed(1).padStart(6)} ${Math.round(lookupsPerSecond).toLocaleString("en").padStart(10)}`;
    console.log(`${String(n).padEnd(7)}${mixName.padEnd(15)}${cells.join("")}  ${speed}`);
  }
}
console.log(`${"worst".padEnd(22)}${worstByReplicas.map(pct).join("")}`);
