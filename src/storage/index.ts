/** Durable local state: the LevelDB state store with group commit, WARC files and the crawl log. */

export {
  CrawlLog,
  type CrawlLogEntry,
  type CrawlLogInput,
  type CrawlLogOptions,
  readCrawlLog,
} from "./crawl-log.js";
export { GroupCommit } from "./group-commit.js";
export {
  type HostRecord,
  type QueuedUrl,
  type StateOp,
  StateStore,
  type StoredQueueEntry,
} from "./state-store.js";
export { readWarcFile, splitHttpBlock, type WarcRecordRead } from "./warc-reader.js";
export { recoverWarcFile } from "./warc-recovery.js";
export {
  type WarcExchange,
  WarcWriter,
  type WarcWriterOptions,
  type WarcWriterStats,
} from "./warc-writer.js";
