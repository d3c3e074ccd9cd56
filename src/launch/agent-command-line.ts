import { AGENT_FLAGS, type FlagSpec } from "../flags/index.js";

/** The value a flag of type `S` is given on a command line. */
type FlagValue<S extends FlagSpec> = S extends { type: "strings" }
  ? readonly string[]
  : S extends { type: "integer" }
    ? number
    : S extends { type: "boolean" }
      ? boolean
      : S extends { type: "byte-rate" | "duration" | "number" }
        ? string | number
        : string;

/**
 * Flags of `ubicrawl agent` by name, typed by the agent's own flag table: what a launcher (the cluster
 * command, the tests, the benchmarks) sets. A flag left out keeps the agent's default, so no launcher
 * repeats a default, and a misspelt or mistyped flag does not compile.
 */
export type AgentFlagValues = {
  readonly [K in keyof typeof AGENT_FLAGS]?: FlagValue<(typeof AGENT_FLAGS)[K]>;
};

/** `values` as the words after `ubicrawl`: `agent --id a --delay-ms 0 --seeds s1 s2 --insecure …`. */
export function agentArgv(values: AgentFlagValues): string[] {
  const words = ["agent"];
  for (const [name, value] of Object.entries(values) as [keyof typeof AGENT_FLAGS, unknown][]) {
    const spec: FlagSpec = AGENT_FLAGS[name];
    if (value === undefined) continue;
    if (spec.type === "boolean") {
      if (value === true) words.push(`--${name}`);
    } else if (spec.type === "strings") {
      // One value per occurrence: a value may not start with "--" otherwise.
      for (const item of value as readonly string[]) words.push(`--${name}=${item}`);
    } else {
      words.push(`--${name}=${String(value)}`);
    }
  }
  return words;
}

/** Loopback, where the built-in test web listens. */
export const LOOPBACK_CIDR = "127.0.0.0/8";

/**
 * A fetch's longest time on the built-in test web, ms: it answers within its response delay. After a
 * crash, the IP authorities count the dead agent's own requests at its addresses for a lease and a
 * fetch's time (ip-crash-reports.ts): at the default (60 s), a killed agent's addresses would wait
 * a minute.
 */
export const TEST_WEB_FETCH_TIMEOUT_MS = 10_000;

/**
 * The flags of an agent crawling the built-in test web on this machine, as the cluster command, the
 * tests and the benchmarks run it: names only through the web's hosts file, loopback allowed, no
 * politeness delay (the web is local), a short fetch timeout, a quick robots.txt retry, exit once the
 * crawl is done, no progress records, duplicate payloads detected within each agent.
 */
export function testWebAgentFlags(hostsFile: string): AgentFlagValues {
  return {
    "hosts-file": hostsFile,
    "allow-net": [LOOPBACK_CIDR],
    "delay-ms": 0,
    "fetch-timeout-ms": TEST_WEB_FETCH_TIMEOUT_MS,
    "robots-retry-ms": 100,
    "max-robots-attempts": 2,
    "exit-when-done": true,
    progress: "off",
    // With no politeness delay, a payload digest's round trip to its owner would sit on every page's
    // path (the demo cluster took 45 s instead of 27 s): each agent keeps its own index here. At real
    // delays the round trip overlaps the wait (`--dedup cluster`, the agent's default).
    dedup: "local",
  };
}

/**
 * A failure detector for local clusters: a death is noticed within about a second, and a dead
 * agent's hosts are taken at once (no grace for a restart).
 */
export const FAST_FAILURE_DETECTION = {
  "heartbeat-ms": 200,
  "suspect-after-ms": 1200,
  "takeover-delay-ms": 0,
} as const satisfies AgentFlagValues;

/**
 * A failure detector for local clusters where no agent is meant to fail (the laboratory's crawls with no
 * fault injected): as {@link FAST_FAILURE_DETECTION}, but an agent is suspected after 4 s of silence, which
 * the stalls of a loaded 2-CPU machine do not reach. At 1.2 s a fault-free crawl on CI once fetched 2.4% of
 * its pages twice, most likely a busy agent taken for dead whose hosts the others took at once (each run
 * now counts such suspicions: `LocalClusterRun.suspicions`).
 */
export const STEADY_FAILURE_DETECTION = {
  ...FAST_FAILURE_DETECTION,
  "suspect-after-ms": 4000,
} as const satisfies AgentFlagValues;
