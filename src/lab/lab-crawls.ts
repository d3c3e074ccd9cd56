import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FlagSpecs, ParsedFlags } from "../flags/index.js";
import { loadHasher64 } from "../hashing/index.js";
import type { AgentFlagValues } from "../launch/index.js";
import { computeTruth, type RunningTestWeb, startTestWeb, type TestWebOptions } from "../testweb/index.js";
import { type CrawlMetrics, measureCrawl, ownHomePages, truthLimits } from "./crawl-metrics.js";
import { type LocalClusterFault, type LocalClusterRun, runLocalCluster } from "./local-cluster.js";

/**
 * The crawls of an experiment with real agents: one test web served for all of them, a data folder
 * for each, the seeds of each agent picked among its own hosts' home pages, and the flags every such
 * experiment shares (the web, the seeds, the time limit, where the data goes).
 */

/** Flags of an experiment that runs crawls. */
export const LAB_CRAWL_FLAGS = {
  hosts: { type: "integer", help: "hosts of the test web", default: 100, min: 10, max: 2000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 5000, min: 200, max: 200_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1, min: 0 },
  port: {
    type: "integer",
    help: "port of the test web (default: any free one); hosts are assigned by host:port, so a run repeats exactly only on the same port",
    min: 1,
    max: 65_535,
    placeholder: "PORT",
  },
  "cross-links": {
    type: "integer",
    help: "percentage of an article's links that go to other hosts (the built-in web's 20 makes every host's cluster dense; fewer isolates partitions)",
    default: 20,
    min: 0,
    max: 50,
  },
  "seeds-per-agent": {
    type: "integer",
    help: "home pages of its own hosts each agent starts from",
    default: 1,
    min: 1,
    max: 50,
  },
  "timeout-s": {
    type: "integer",
    help: "longest a single crawl may take before the experiment fails",
    default: 300,
    min: 10,
  },
  data: {
    type: "string",
    help: "folder for the crawls' data, kept (default: a temp folder, removed at the end)",
    placeholder: "DIR",
  },
} as const satisfies FlagSpecs;

/**
 * The `--response-ms` flag of an experiment whose test web answers each request after a delay:
 * `defaultMs` by default.
 */
export function responseMsFlag(defaultMs: number, why: string) {
  return {
    type: "integer",
    help: `how long the test web takes to answer each request, ${why}`,
    default: defaultMs,
    min: 0,
    max: 1000,
  } as const;
}

/** The values of {@link LAB_CRAWL_FLAGS}. */
export type LabCrawlFlags = ParsedFlags<typeof LAB_CRAWL_FLAGS>;

/** A crawl of {@link LabCrawls}: its measures, and how it ran. */
export interface LabCrawl extends CrawlMetrics {
  readonly run: LocalClusterRun;
}

/** See the module's comment. Open with {@link LabCrawls.open}; close it when done. */
export class LabCrawls {
  private constructor(
    private readonly flags: LabCrawlFlags,
    readonly web: RunningTestWeb,
    private readonly dataRoot: string,
    private readonly seedsOf: (agentId: string, ownerOf: (url: string) => string) => string[],
    private readonly truthSize: number,
  ) {}

  /** Serves the test web `flags` describe (with `web`'s options besides) and prepares the data folder. */
  static async open(flags: LabCrawlFlags, name: string, web: TestWebOptions = {}): Promise<LabCrawls> {
    const served = await startTestWeb({
      ...web,
      seed: flags.seed,
      hosts: flags.hosts,
      pages: flags.pages,
      crossLinkPercent: flags["cross-links"],
      ...(flags.port === undefined ? {} : { port: flags.port }),
    });
    const dataRoot = flags.data ?? (await mkdtemp(join(tmpdir(), `ubicrawl-${name}-`)));
    await mkdir(dataRoot, { recursive: true });
    return new LabCrawls(
      flags,
      served,
      dataRoot,
      ownHomePages(served, flags["seeds-per-agent"], await loadHasher64()),
      computeTruth(served.model, served.port, truthLimits()).urls.length,
    );
  }

  /** The web and seeds, in words, for a report's parameters. */
  get description(): Record<string, string | number> {
    const { flags } = this;
    return {
      "test web": `${flags.hosts} hosts, about ${flags.pages} pages, seed ${flags.seed}, ${flags["cross-links"]}% of article links to other hosts`,
      "seeds per agent": flags["seeds-per-agent"],
      "test web port": this.web.port,
    };
  }

  /** The folder of crawl `name`'s data (and of files made for it). */
  dirOf(name: string): string {
    return join(this.dataRoot, name);
  }

  /** Requests (robots.txt included) a complete crawl of the web from its own seeds makes, about. */
  get expectedRequests(): number {
    return this.truthSize + this.web.model.hosts.length;
  }

  /**
   * Runs a crawl by `agents` agents with `agentFlags`, its data under {@link dirOf}(`name`), and
   * measures it. Each agent gets as seeds the home pages of its own hosts, and those of
   * `options.moreSeeds` on its own hosts; `options.fault` is injected on the way.
   */
  async crawl(
    name: string,
    agents: number,
    agentFlags: AgentFlagValues,
    options: {
      readonly moreSeeds?: readonly string[];
      readonly fault?: LocalClusterFault;
      /** Caps each agent at this percentage of one CPU. */
      readonly cpuQuotaPercent?: number;
    } = {},
  ): Promise<LabCrawl> {
    const moreSeeds = options.moreSeeds ?? [];
    const run = await runLocalCluster({
      dir: this.dirOf(name),
      web: this.web,
      agents,
      flags: agentFlags,
      seedsOf: (id, ownerOf) => [
        ...this.seedsOf(id, ownerOf),
        ...moreSeeds.filter((url) => ownerOf(url) === id),
      ],
      timeoutMs: this.flags["timeout-s"] * 1000,
      ...(options.fault ? { fault: options.fault } : {}),
      ...(options.cpuQuotaPercent === undefined ? {} : { cpuQuotaPercent: options.cpuQuotaPercent }),
    });
    return { ...(await measureCrawl(this.web, run)), run };
  }

  /** Stops the web; removes the data unless `--data` named its folder. */
  async close(): Promise<void> {
    await this.web.stop();
    if (this.flags.data === undefined) await rm(this.dataRoot, { recursive: true, force: true });
  }
}
