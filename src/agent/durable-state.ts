import { join } from "node:path";
import { ErrorCode } from "../errors.js";
import { Frontier, type FrontierDeps } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import {
  CrawlLog,
  GroupCommit,
  recordWarcFileExtents,
  StateStore,
  WarcWriter,
  warcFileOffloadedOp,
} from "../storage/index.js";
import { UrlFingerprinter } from "../url/index.js";
import type { AgentOptions } from "./agent-options.js";
import { refetchLostPages } from "./lost-pages.js";
import { WarcOffload } from "./warc-offload.js";

/** A part that holds a resource, closed again if a later step of the opening fails. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * An agent's durable state, open: the state store, the crawl log and the WARC files under one group
 * commit, and the frontier on them.
 */
export interface DurableState {
  readonly store: StateStore;
  readonly crawlLog: CrawlLog;
  /** Where the WARC files are written (`--warc-dir`, or the data dir's `warc`). */
  readonly warcDir: string;
  readonly warc: WarcWriter;
  /** The `--on-warc-closed` hook's runs, when given. */
  readonly warcOffload: WarcOffload | undefined;
  /** Group commit of the state store, shared by every writer of this agent's state. */
  readonly committer: GroupCommit;
  readonly fingerprinter: UrlFingerprinter;
  readonly frontier: Frontier;
}

/**
 * Opens the state under `options.dataDir`: the store (a warning when LevelDB dropped damaged records),
 * the crawl log and the WARC writer, the group commit that makes each batch durable in their order,
 * and the frontier read back from the store, with the pages of damaged WARC files queued again (see
 * lost-pages.ts). `frontierHooks` tell the scheduler, wired later, of hosts with work. Each part
 * holding a resource is pushed on `opened` first, for the caller to close if a later step fails.
 */
export async function openDurableState(
  options: AgentOptions,
  deps: {
    readonly logger: Logger;
    readonly frontierHooks: Pick<FrontierDeps, "onHostReady" | "onQueueGrew" | "onSettled">;
  },
  opened: Closable[],
): Promise<DurableState> {
  const { logger } = deps;
  const store = await StateStore.open(join(options.dataDir, "state"));
  opened.push(store);
  if (store.damageAtOpen.length > 0) {
    logger.warn(
      { event: "storage-damaged", code: ErrorCode.StorageCorrupt, leveldb: store.damageAtOpen },
      `the state store in ${join(options.dataDir, "state")} was damaged: LevelDB dropped records of its log ` +
        `at open (${store.damageAtOpen.join("; ")}). What they said is lost: pages done there may be ` +
        "fetched again, URLs queued there may be missing ('ubicrawl report' shows the coverage)",
    );
  }
  const fingerprinter = await UrlFingerprinter.create();
  const crawlLog = new CrawlLog({ dir: options.dataDir });
  opened.push(crawlLog);
  await crawlLog.open();
  const warcDir = options.warcDir ?? join(options.dataDir, "warc");
  // Its records wait for the group commit made below; the first hook runs well after that.
  const warcOffload =
    options.onWarcClosed === undefined
      ? undefined
      : new WarcOffload(options.onWarcClosed, {
          logger,
          offloadedOp: warcFileOffloadedOp,
          record: (op) => {
            committer.add(op);
            return committer.commit();
          },
        });
  const warc = new WarcWriter(
    {
      dir: warcDir,
      agentId: options.id,
      compression: options.warcCompression,
    },
    { logger, ...(warcOffload ? { onFileClosed: (file) => warcOffload.closed(file) } : {}) },
  );
  opened.push(warc);
  await warc.open();
  // Each batch is made durable in order: the pages it completes are synced in the WARC files and
  // their lines in the crawl log before the state says they are done, and the state is synced before
  // a commit resolves (and, in a cluster, before an agent acknowledges what it received). So a power
  // cut, like a SIGKILL, costs only the fetches in flight and the batch being synced, and never loses
  // an archived page or a URL. A batch with no ops makes nothing done: earlier ones are durable already.
  const committer = new GroupCommit(async (ops) => {
    if (ops.length === 0) return;
    await Promise.all([warc.syncAppended(), crawlLog.sync()]);
    await store.write(ops);
  });
  recordWarcFileExtents({ warc, crawlLog, committer });
  const frontier = await Frontier.open({}, { store, committer, fingerprinter, ...deps.frontierHooks });
  // Before the digests are loaded: it forgets those whose first copy is lost.
  await refetchLostPages({ store, committer, frontier, warcDir, crawlLogPath: crawlLog.path, logger });
  warcOffload?.start();
  return { store, crawlLog, warcDir, warc, warcOffload, committer, fingerprinter, frontier };
}
