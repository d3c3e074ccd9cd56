export {
  type AgentFlagValues,
  agentArgv,
  FAST_FAILURE_DETECTION,
  LOOPBACK_CIDR,
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
