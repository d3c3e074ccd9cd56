import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { logEvent, waitFor } from "../agent/harness.js";
import type { ClusterAgent } from "../cluster/cluster-harness.js";

/** The `--http` flags of a console on a free loopback port. */
export const HTTP_FLAGS = ["--http", "127.0.0.1:0"] as const;

/** Waits until `agent` says where its console listens; its base URL (`http://host:port`). */
export async function consoleUrlOf(agent: ClusterAgent): Promise<string> {
  let url = "";
  await waitFor(
    () => {
      url = String(logEvent(agent.process.stderr(), "console")?.url ?? "").replace(/\/$/, "");
      return url !== "";
    },
    `${agent.id}'s console`,
    10_000,
  );
  return url;
}

/** One metric family as the independent parser reads it. */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly metrics: readonly {
    readonly value?: string;
    readonly labels?: Record<string, string>;
    readonly buckets?: Record<string, string>;
    readonly count?: string;
    readonly sum?: string;
  }[];
  /**
   * Every sample line of the family as written (`name{labels}` → value): the parser merges a
   * histogram's series that differ in a label besides `le` (nodejs_gc_duration_seconds' `kind`).
   */
  readonly samples: ReadonlyMap<string, number>;
}

/** Scrapes `/metrics` and parses it with parse-prometheus-text-format (not prom-client's own code). */
export async function scrape(baseUrl: string): Promise<MetricFamily[]> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  const samples = sampleLines(text);
  // The parser names types in capitals (COUNTER); HELP is undefined where a family has none.
  return (parsePrometheusTextFormat(text) as Omit<MetricFamily, "samples">[]).map((family) => ({
    ...family,
    type: String(family.type).toLowerCase(),
    samples: samples.get(family.name) ?? new Map(),
  }));
}

/** The sample lines of an exposition, by the family whose `# TYPE` line they follow. */
function sampleLines(text: string): Map<string, Map<string, number>> {
  const byFamily = new Map<string, Map<string, number>>();
  let current: Map<string, number> | undefined;
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) /.exec(line);
    if (type) {
      current = new Map();
      byFamily.set(type[1] as string, current);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const sample = /^(\S+?(?:\{.*\})?) (\S+)$/.exec(line);
    if (!sample || !current) throw new Error(`/metrics: not a sample line of a typed family: ${line}`);
    current.set(sample[1] as string, Number(sample[2]));
  }
  return byFamily;
}

/** Every sample of the families of type `type`, as `name{labels}` → value (histograms: count, sum, buckets). */
export function samplesOfType(families: readonly MetricFamily[], type: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const family of families) {
    if (family.type !== type) continue;
    for (const [key, value] of family.samples) samples.set(key, value);
  }
  return samples;
}

/** The sum of a family's samples (0 when absent). */
export function familyTotal(families: readonly MetricFamily[], name: string): number {
  const family = families.find((candidate) => candidate.name === name);
  return (family?.metrics ?? []).reduce((sum, metric) => sum + Number(metric.value ?? 0), 0);
}
