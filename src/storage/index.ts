/**
 * Durable local state: the LevelDB state store with group commit, WARC files and the crawl log. The
 * WARC reader (`./warc-reader.js`, for tests and tools) is not here: it loads warcio, which an agent
 * never needs, and every agent process would pay ~80 ms of CPU at start-up to load it.
 */

export type { CdxjEntry } from "./cdxj.js";
export {
  CrawlLog,
  type CrawlLogEntry,
  type CrawlLogInput,
  type CrawlLogOptions,
  readCrawlLog,
} from "./crawl-log.js";
export { GroupCommit } from "./group-commit.js";
export { corruptStateError, damageReported, isCorruption, repairAdvice } from "./state-damage.js";
export {
  type HostRecord,
  type PayloadOriginal,
  type QueuedUrl,
  type StateOp,
  StateStore,
  type StoredQueueEntry,
  traitsOf,
  type UrlTraits,
} from "./state-store.js";
export { checkWarcFile, GONE, type WarcFileCheck } from "./warc-check.js";
export { WARC_COMPRESSIONS, type WarcCompression, warcFileCompression } from "./warc-file-name.js";
export { type WarcFolderFile, WarcFolderListing } from "./warc-folder-listing.js";
export {
  cutTornWarcTail,
  type DamagedWarcFile,
  findDamagedWarcFiles,
  type RecordedWarcFile,
  recordedWarcFiles,
  recordWarcFileExtents,
  warcFileOffloadedOp,
  warcFileRecordOp,
  warcFileScrubbedOp,
} from "./warc-ledger.js";
export { IDENTICAL_PAYLOAD_PROFILE, SERVER_NOT_MODIFIED_PROFILE, sha1Digest } from "./warc-record.js";
export { recoverWarcFile } from "./warc-recovery.js";
export {
  type ClosedWarcFile,
  type WarcExchange,
  type WarcFileExtent,
  type WarcRevisit,
  WarcWriter,
  type WarcWriterStats,
} from "./warc-writer.js";
export type { WarcWriterOptions } from "./warc-writer-options.js";
export { ZSTD_NODE_VERSION, zstdAvailable } from "./zstd.js";
