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
} from "./ubicrawl-process.js";
