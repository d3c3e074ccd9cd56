/**
 * What a crawl did, from its agents' data folders: the union of their crawl logs measured against a
 * ground truth (coverage, overlap, URLs outside the truth), failures and retries, each agent's share.
 * Behind `ubicrawl report` and the final report of `ubicrawl cluster`; the benches use it too.
 */

export {
  CRAWL_LOG_FILE,
  type LoggedFetch,
  type MeasureOptions,
  measureAgentDirs,
  readFetches,
  tallyAgentDir,
} from "./agent-logs.js";
export {
  type AgentShare,
  type ArchiveCheck,
  type Coverage,
  type CrawlReport,
  CrawlTally,
  type TalliedLine,
} from "./crawl-tally.js";
export { formatReport } from "./format-report.js";
export { readTruthFile } from "./truth-file.js";
