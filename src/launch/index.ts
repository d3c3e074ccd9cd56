export {
  type AgentFlagValues,
  agentArgv,
  FAST_FAILURE_DETECTION,
  LOOPBACK_CIDR,
  testWebAgentFlags,
} from "./agent-command-line.js";
export {
  type AgentExit,
  AgentProcess,
  type AgentProcessOptions,
  describeRecord,
  UBICRAWL_BIN,
} from "./agent-process.js";
