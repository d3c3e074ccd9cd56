/**
 * Durable local state: the LevelDB state store with group commit and the key ranges of its owners
 * (`./state/`), WARC files and the crawl log. The WARC reader (`./warc-reader.js`, for tests and
 * tools) is not here: it loads warcio, which an agent never needs, and every agent process would pay
 * ~80 ms of CPU at start-up to load it.
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
export {
  type AsideCount,
  asideBeyondOp,
  asideCounts,
  asideDoneOp,
  asideOf,
  asideOp,
} from "./state/aside-records.js";
export {
  digestForgetOp,
  digestOp,
  forEachPayloadDigest,
  type PayloadOriginal,
  payloadOriginals,
} from "./state/digest-records.js";
export { fetchedOf, fetchedOps, forEachFetched, hasFetched, unfetchedOps } from "./state/fetched-records.js";
export { type HostRecord, hostRecordOp, hostRecords } from "./state/host-records.js";
export {
  delOp,
  type KeyRange,
  keyRange,
  putOp,
  type StateOp,
  type StateReader,
} from "./state/key-range.js";
export { getMeta, metaEntries, metaOp } from "./state/meta-records.js";
export {
  type OutboxEntry,
  outboxDoneOp,
  outboxEntries,
  outboxOp,
  outboxPeers,
} from "./state/outbox-records.js";
export { pageOp, pageValue, pageValues, pageValuesOf } from "./state/page-records.js";
export { dequeueOp, enqueueOp, readQueue, type StoredQueueEntry, scanQueues } from "./state/queue-records.js";
export { type QueuedUrl, traitsOf, type UrlTraits } from "./state/queued-url.js";
export { robotsSnapshotOp, robotsSnapshots } from "./state/robots-records.js";
export { forEachSeen, seenOp } from "./state/seen-records.js";
export { corruptStateError, damageReported, isCorruption, repairAdvice } from "./state/state-damage.js";
export { StateStore } from "./state/state-store.js";
export { checkWarcFile, GONE, type WarcFileCheck } from "./warc-check.js";
export type { WarcExchange, WarcRevisit } from "./warc-exchange.js";
export { WARC_COMPRESSIONS, type WarcCompression, warcFileCompression } from "./warc-file-name.js";
export type { WarcFileExtent } from "./warc-file-slot.js";
export { type WarcFolderFile, WarcFolderListing } from "./warc-folder-listing.js";
export type { ClosedWarcFile } from "./warc-folder-scan.js";
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
export { WarcWriter, type WarcWriterStats } from "./warc-writer.js";
export type { WarcWriterOptions } from "./warc-writer-options.js";
export { ZSTD_NODE_VERSION, zstdAvailable } from "./zstd.js";
