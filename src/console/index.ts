/**
 * An agent's operator console (`ubicrawl agent --http`): Prometheus metrics, the stats as JSON,
 * health and readiness probes, and a live dashboard — all read-only.
 */

export { AgentConsole, type ObservedAgent } from "./agent-console.js";
export { AgentMetrics, type MetricsSource } from "./agent-metrics.js";
export {
  ConsoleServer,
  type ConsoleServerOptions,
  type ConsoleSource,
  checkConsoleOptions,
  isLoopbackHost,
  readTokenFile,
} from "./console-server.js";
export { FetchActivity, type HostActivity, type RecentFetch } from "./fetch-activity.js";
