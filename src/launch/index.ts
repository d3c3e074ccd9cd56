export {
  AGENT_LISTEN_TIMEOUT_MS,
  AgentCluster,
  type AgentClusterOptions,
  type AgentStart,
  type ClusterMember,
} from "./agent-cluster.js";
export {
  type AgentFlagValues,
  agentArgv,
  FAST_FAILURE_DETECTION,
  LOOPBACK_CIDR,
  STEADY_FAILURE_DETECTION,
  TEST_WEB_FETCH_TIMEOUT_MS,
  testWebAgentFlags,
} from "./agent-command-line.js";
export {
  type ExitResult,
  errorLine,
  logEvent,
  logRecords,
  logText,
  type ProcessExit,
  UBICRAWL_BIN,
  UbicrawlProcess,
  type UbicrawlProcessOptions,
} from "./ubicrawl-process.js";
