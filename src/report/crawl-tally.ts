/**
 * What a crawl did, counted from its crawl-log lines: overlap (Cho & Garcia-Molina: (fetches − distinct
 * URLs fetched) / distinct), coverage of a ground truth, failures and retried attempts, and each agent's
 * share. A line with `willRetry` is an attempt tried again later: a failure (status 0) or a server that
 * pushed back (429 or 503); any other line with status > 0 is a fetch (the server answered, whatever
 * the status), and one with status 0 a failure for good — but a line with `skipped`, a URL the agent
 * chose not to request (its host's Crawl-delay over `--max-crawl-delay`), which is neither.
 */

/** The fields of a crawl-log line a tally reads. */
export interface TalliedLine {
  readonly url: string;
  readonly status: number;
  readonly willRetry?: unknown;
  /** Why the URL was not requested, on purpose (`crawl-delay-too-long`): such a line is not counted. */
  readonly skipped?: unknown;
}

/** One agent's part of a crawl. */
export interface AgentShare {
  /** The agent's id when its data names it, else its data folder. */
  readonly agent: string;
  /** Its data folder, as given. */
  readonly dir: string;
  /** Pages it fetched: its lines with status > 0 but attempts (`willRetry`). */
  readonly pages: number;
  /** `pages` / every agent's pages (0 when nobody fetched any). */
  readonly share: number;
  /** Its lines with status 0 and no `willRetry`. */
  readonly failures: number;
  /** Its lines with `willRetry`. */
  readonly retries: number;
  /** Its log ended in a line without a newline (torn by a kill, or being written): not counted. */
  readonly tornLine: boolean;
}

/** How much of a ground truth a crawl fetched. */
export interface Coverage {
  /** Truth URLs fetched at least once (and, when the WARC files were read, with a WARC record). */
  readonly covered: number;
  /** URLs in the truth. */
  readonly truthSize: number;
  /** `covered / truthSize`. */
  readonly fraction: number;
  /** Distinct URLs fetched that the truth does not hold. */
  readonly outsideTruth: number;
}

/** What the agents' WARC files hold of the pages their crawl logs name. */
export interface ArchiveCheck {
  /** WARC files read. */
  readonly files: number;
  /** Files that could not be read to their end (what was read of them counts), each with why. */
  readonly unreadable: string[];
  /**
   * WARC folders that data folders record (`--warc-dir`) but that are not on this machine: their
   * agents' pages are not checked.
   */
  readonly missingFolders: string[];
  /**
   * Distinct URLs fetched (crawl-log pages) by agents whose WARC folder was read, with no response or
   * revisit record in any WARC file read.
   */
  readonly unarchived: number;
  /** A few of them, in log order. */
  readonly examples: string[];
}

/** The report of a crawl: the union of its agents' crawl logs. */
export interface CrawlReport {
  /** Lines with status > 0 but attempts (`willRetry`), all agents together. */
  readonly fetches: number;
  /** Distinct URLs among them. */
  readonly distinctUrls: number;
  /** `fetches − distinctUrls`: fetches of a URL fetched before. */
  readonly repeatedFetches: number;
  /** Distinct URLs fetched more than once. */
  readonly repeatedUrls: number;
  /** `repeatedFetches / distinctUrls` (0 when nothing was fetched). */
  readonly overlap: number;
  /** Lines with status 0 and no `willRetry`: fetches that failed for good. */
  readonly failures: number;
  /** Lines with `willRetry`: attempts tried again later (failed, or refused with 429/503). */
  readonly retries: number;
  /** The URL with the most failed attempts (lines with status 0 or `willRetry`), or null when none failed. */
  readonly mostFailedAttempts: { readonly url: string; readonly attempts: number } | null;
  /** Against the ground truth, or null when none was given. */
  readonly coverage: Coverage | null;
  /** The pages against the WARC files, or null when no WARC folder was read. */
  readonly archives: ArchiveCheck | null;
  /** Each agent's part, in the order the agents were added. */
  readonly agents: AgentShare[];
}

/** Pages without a WARC record named in a report, at most. */
const ARCHIVE_EXAMPLES = 5;

interface AgentCounts {
  agent: string;
  readonly dir: string;
  pages: number;
  failures: number;
  retries: number;
  tornLine: boolean;
  /** Its WARC folder was read: its pages are checked against the records. */
  archiveRead: boolean;
}

/**
 * Counts crawl-log lines of several agents; {@link CrawlTally.report} measures them. Holds one map entry
 * per distinct URL fetched (and per URL that failed), like the ground truth it is measured against.
 */
export class CrawlTally {
  private readonly agents: AgentCounts[] = [];
  private readonly fetchCounts = new Map<string, number>();
  private readonly failedAttempts = new Map<string, number>();
  /** URLs with a WARC record in the WARC folders read ({@link addArchive}). */
  private readonly archived = new Set<string>();
  /** URLs fetched by agents whose WARC folder was read. */
  private readonly checkedFetches = new Set<string>();
  /** WARC files read; -1 while no WARC folder was. */
  private archiveFiles = -1;
  private readonly unreadableFiles: string[] = [];
  private readonly missingFolders: string[] = [];

  /** Adds an agent (named by its data folder until {@link nameAgent}); returns its index for {@link add}. */
  addAgent(dir: string): number {
    this.agents.push({
      agent: dir,
      dir,
      pages: 0,
      failures: 0,
      retries: 0,
      tornLine: false,
      archiveRead: false,
    });
    return this.agents.length - 1;
  }

  /** Names agent `index` by its id (as its crawl log or data names it). */
  nameAgent(index: number, id: string): void {
    this.agentAt(index).agent = id;
  }

  /** Records that agent `index`'s log ended in a torn line (skipped). */
  markTornLine(index: number): void {
    this.agentAt(index).tornLine = true;
  }

  /** Counts one crawl-log line of agent `index`. */
  add(index: number, line: TalliedLine): void {
    const agent = this.agentAt(index);
    if (line.skipped !== undefined) return;
    if (line.status > 0 && line.willRetry !== true) {
      agent.pages++;
      this.fetchCounts.set(line.url, (this.fetchCounts.get(line.url) ?? 0) + 1);
      if (agent.archiveRead) this.checkedFetches.add(line.url);
      return;
    }
    if (line.willRetry === true) agent.retries++;
    else agent.failures++;
    this.failedAttempts.set(line.url, (this.failedAttempts.get(line.url) ?? 0) + 1);
  }

  /**
   * Adds what agent `index`'s WARC folder holds (before its crawl-log lines): the URLs of its response
   * and revisit records, the files read and those unreadable to their end (with why). That agent's
   * pages with a record in no WARC folder read are then reported, and not counted as covered.
   */
  addArchive(index: number, urls: Iterable<string>, files: number, unreadable: readonly string[]): void {
    this.agentAt(index).archiveRead = true;
    for (const url of urls) this.archived.add(url);
    this.archiveFiles = Math.max(this.archiveFiles, 0) + files;
    this.unreadableFiles.push(...unreadable);
  }

  /**
   * Records a WARC folder an agent's data folder names but this machine lacks (described as `folder`):
   * that agent's pages are not checked against the records.
   */
  addMissingWarcFolder(folder: string): void {
    this.archiveFiles = Math.max(this.archiveFiles, 0);
    this.missingFolders.push(folder);
  }

  /** Failed attempts at `url` so far: its lines with status 0 or `willRetry`. */
  failedAttemptsOf(url: string): number {
    return this.failedAttempts.get(url) ?? 0;
  }

  /** The figures so far; coverage against `truth` when given. */
  report(truth?: ReadonlySet<string>): CrawlReport {
    let fetches = 0;
    let repeatedUrls = 0;
    for (const count of this.fetchCounts.values()) {
      fetches += count;
      if (count > 1) repeatedUrls++;
    }
    const distinctUrls = this.fetchCounts.size;
    let mostFailedAttempts: CrawlReport["mostFailedAttempts"] = null;
    for (const [url, attempts] of this.failedAttempts) {
      if (mostFailedAttempts === null || attempts > mostFailedAttempts.attempts) {
        mostFailedAttempts = { url, attempts };
      }
    }
    return {
      fetches,
      distinctUrls,
      repeatedFetches: fetches - distinctUrls,
      repeatedUrls,
      overlap: distinctUrls === 0 ? 0 : (fetches - distinctUrls) / distinctUrls,
      failures: this.agents.reduce((sum, agent) => sum + agent.failures, 0),
      retries: this.agents.reduce((sum, agent) => sum + agent.retries, 0),
      mostFailedAttempts,
      coverage: truth === undefined ? null : this.coverage(truth),
      archives: this.archiveCheck(),
      agents: this.agents.map((agent) => ({
        agent: agent.agent,
        dir: agent.dir,
        pages: agent.pages,
        share: fetches === 0 ? 0 : agent.pages / fetches,
        failures: agent.failures,
        retries: agent.retries,
        tornLine: agent.tornLine,
      })),
    };
  }

  private coverage(truth: ReadonlySet<string>): Coverage {
    let fetched = 0;
    let covered = 0;
    for (const url of truth) {
      if (!this.fetchCounts.has(url)) continue;
      fetched++;
      if (!this.isUnarchived(url)) covered++;
    }
    return {
      covered,
      truthSize: truth.size,
      fraction: truth.size === 0 ? 0 : covered / truth.size,
      outsideTruth: this.fetchCounts.size - fetched,
    };
  }

  /** True for a page fetched by an agent whose WARC folder was read, with a record in none read. */
  private isUnarchived(url: string): boolean {
    return this.checkedFetches.has(url) && !this.archived.has(url);
  }

  private archiveCheck(): ArchiveCheck | null {
    if (this.archiveFiles < 0) return null;
    let unarchived = 0;
    const examples: string[] = [];
    for (const url of this.fetchCounts.keys()) {
      if (!this.isUnarchived(url)) continue;
      unarchived++;
      if (examples.length < ARCHIVE_EXAMPLES) examples.push(url);
    }
    return {
      files: this.archiveFiles,
      unreadable: [...this.unreadableFiles],
      missingFolders: [...this.missingFolders],
      unarchived,
      examples,
    };
  }

  private agentAt(index: number): AgentCounts {
    const agent = this.agents[index];
    if (agent === undefined) throw new RangeError(`no agent ${index} in this tally`);
    return agent;
  }
}
