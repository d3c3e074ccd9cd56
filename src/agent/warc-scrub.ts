import { join } from "node:path";
import type { Clock, TimerHandle } from "../clock.js";
import { ErrorCode, errorMessage } from "../errors.js";
import type { Frontier } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import {
  checkWarcFile,
  GONE,
  type GroupCommit,
  recordedWarcFiles,
  type StateStore,
  warcFileScrubbedOp,
} from "../storage/index.js";
import { hostKey } from "../url/index.js";
import { fetchesLoggedFrom, forgetLostOriginals } from "./lost-pages.js";

/**
 * The WARC files checked while the agent runs, not only at open: a finished file at a time, every
 * `--scrub-interval-ms`, round after round, is read back against its CDXJ index (`checkWarcFile`),
 * so a file cut short, deleted or damaged in place while the agent runs (a failing disk, a cleanup
 * job, a hand edit) is found within a round, not at the next restart, and the pages it lost are
 * fetched again as the check at open does (`lost-pages.ts`).
 */

/** Lost pages named in the warning, at most. */
const EXAMPLES = 5;

/** What the check found since the agent started (this process's counts). */
export interface ScrubCounts {
  /** Files read back whole or not. */
  readonly filesChecked: number;
  /** Files found damaged. */
  readonly filesDamaged: number;
  /** Records their indexes list that did not read back. */
  readonly recordsLost: number;
}

/** What a {@link WarcScrub} works with. */
export interface WarcScrubDeps {
  readonly store: StateStore;
  readonly committer: GroupCommit;
  readonly frontier: Frontier;
  readonly warcDir: string;
  readonly crawlLogPath: string;
  /** False when a file found gone may have been moved away on purpose (`--on-warc-closed`). */
  readonly goneIsLost: boolean;
  /** True when this agent crawls `url`'s host now: only then is a lost page queued again here. */
  readonly ownsHere: (url: string, host: string) => boolean;
  /** Wakes `host`, whose queue got work. */
  readonly markReady: (host: string) => void;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The running check of finished WARC files; `start()` / `stop()`. */
export class WarcScrub {
  private counts: ScrubCounts = { filesChecked: 0, filesDamaged: 0, recordsLost: 0 };
  /** Files checked in the current round. */
  private readonly checked = new Set<string>();
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  /** @param intervalMs time between two files' checks; 0 turns the check off. */
  constructor(
    private readonly intervalMs: number,
    private readonly deps: WarcScrubDeps,
  ) {}

  /** What was found so far. */
  get found(): ScrubCounts {
    return this.counts;
  }

  /** Checks a file every interval from now on (nothing with an interval of 0). */
  start(): void {
    if (this.intervalMs > 0 && !this.stopped) this.schedule();
  }

  /** Stops checking; resolves once a check under way is over. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    this.timer = this.deps.clock.setTimeout(() => {
      this.running = this.checkNext()
        .catch((error: unknown) =>
          this.deps.logger.error(
            { event: "warc-scrub-failed", err: error },
            `the check of the WARC files failed: ${errorMessage(error)}`,
          ),
        )
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
  }

  /** Checks the next finished file of this round (a new round once all were). */
  private async checkNext(): Promise<void> {
    const files = await recordedWarcFiles(this.deps.store, true);
    let file = files.find((candidate) => !this.checked.has(candidate.name));
    if (file === undefined) {
      this.checked.clear();
      file = files[0];
    }
    if (file === undefined) return;
    this.checked.add(file.name);
    const path = join(this.deps.warcDir, file.name);
    const check = await checkWarcFile(path);
    // No index: the file being written, or one whose index went too (the check at open finds it).
    if (check === undefined || this.stopped) return;
    if (check.problem === GONE && !this.deps.goneIsLost) return;
    this.counts = { ...this.counts, filesChecked: this.counts.filesChecked + 1 };
    // Records past what the state vouches for were the check at open's (it cut them, and queued their
    // pages again): the index keeps listing them until the file is indexed again.
    const lost = check.lost
      .filter((entry) => entry.offset + entry.length <= file.bytes)
      .map((entry) => entry.url);
    if (lost.length > 0) await this.fetchAgain(path, file.name, file.logFrom, lost, check.problem);
  }

  /** Queues again the `lost` pages of file `name` this agent has as done and crawls, and warns. */
  private async fetchAgain(
    path: string,
    name: string,
    logFrom: number,
    lost: readonly string[],
    problem: string | undefined,
  ): Promise<void> {
    const { frontier, committer } = this.deps;
    const logged = await fetchesLoggedFrom(this.deps.crawlLogPath, logFrom);
    const urls = lost.filter((url) => logged.has(url));
    const done = await frontier.wasFetched(urls);
    const here = urls.filter((url, i) => done[i] && this.deps.ownsHere(url, hostKey(url)));
    for (const url of here) frontier.unmarkFetched(url, hostKey(url));
    await forgetLostOriginals(this.deps, new Set(here));
    committer.add(warcFileScrubbedOp(name, here.length));
    // Not done in the state before it is queued (see Frontier.unmarkFetched).
    await frontier.commit();
    for (const url of here) {
      const { depth, traits } = logged.get(url) as NonNullable<ReturnType<typeof logged.get>>;
      frontier.requeue(url, depth, hostKey(url), traits);
    }
    await frontier.commit();
    for (const host of new Set(here.map((url) => hostKey(url)))) this.deps.markReady(host);
    this.counts = {
      ...this.counts,
      filesDamaged: this.counts.filesDamaged + 1,
      recordsLost: this.counts.recordsLost + lost.length,
    };
    this.deps.logger.warn(
      {
        event: "warc-damaged",
        code: ErrorCode.StorageCorrupt,
        found: "scrub",
        files: [{ path }],
        recordsLost: lost.length,
        pagesLost: here.length,
        examples: here.slice(0, EXAMPLES),
      },
      `WARC file ${path} is damaged (${problem}): ${lost.length} of the records its index lists do not read back; ` +
        `${here.length} page${here.length === 1 ? "" : "s"} queued to be fetched again` +
        `${here.length === 0 ? "" : ` (${here.slice(0, EXAMPLES).join(", ")}${here.length > EXAMPLES ? ", …" : ""})`}` +
        (here.length < lost.length
          ? `; ${lost.length - here.length} done by another agent now, or not done`
          : ""),
    );
  }
}
