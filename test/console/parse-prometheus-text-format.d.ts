/** The untyped Prometheus text-format parser the console tests read `/metrics` with. */
declare module "parse-prometheus-text-format" {
  /** Parses a text exposition into metric families (`name`, `help`, `type`, `metrics`). */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
