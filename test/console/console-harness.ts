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
}

/** Scrapes `/metrics` and parses it with parse-prometheus-text-format (not prom-client's own code). */
export async function scrape(baseUrl: string): Promise<MetricFamily[]> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  // The parser names types in capitals (COUNTER); HELP is undefined where a family has none.
  return (parsePrometheusTextFormat(await response.text()) as MetricFamily[]).map((family) => ({
    ...family,
    type: String(family.type).toLowerCase(),
  }));
}

/** Every sample of the families of type `type`, as `name{labels}` → value (histograms: count, sum, buckets). */
export function samplesOfType(families: readonly MetricFamily[], type: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const family of families) {
    if (family.type !== type) continue;
    for (const metric of family.metrics) {
      const labels = JSON.stringify(metric.labels ?? {});
      if (metric.value !== undefined) samples.set(`${family.name}${labels}`, Number(metric.value));
      if (metric.count !== undefined) samples.set(`${family.name}_count${labels}`, Number(metric.count));
      if (metric.sum !== undefined) samples.set(`${family.name}_sum${labels}`, Number(metric.sum));
      for (const [le, value] of Object.entries(metric.buckets ?? {})) {
        samples.set(`${family.name}_bucket${labels}le=${le}`, Number(value));
      }
    }
  }
  return samples;
}

/** The sum of a family's samples (0 when absent). */
export function familyTotal(families: readonly MetricFamily[], name: string): number {
  const family = families.find((candidate) => candidate.name === name);
  return (family?.metrics ?? []).reduce((sum, metric) => sum + Number(metric.value ?? 0), 0);
}
