/**
 * Command-line flags, below every command: the flag tables' types, their parser and help text, the
 * parsers of their values (durations, byte rates, instants), and the flag table of `ubicrawl agent` — which the
 * CLI parses, the launcher writes command lines from, and the laboratory's experiments take flags of.
 */

export { AGENT_DESCRIPTION, AGENT_FLAGS, AGENT_USAGE, MIN_MAX_BANDWIDTH } from "./agent-flags.js";
export { formatByteRate, parseByteRate } from "./byte-rate.js";
export { parseDuration } from "./duration.js";
export {
  type FlagSpec,
  type FlagSpecs,
  formatHelp,
  formatNameList,
  type ParsedFlags,
  parseFlags,
  parseNumber,
} from "./flag-parser.js";
export { formatInstant, parseInstant } from "./instant.js";
