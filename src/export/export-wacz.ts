import { access, mkdtemp, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { indexCoversFile, indexWarcFile } from "../storage/warc-indexer.js";
import { type ArchiveSources, findArchiveSources, indexBeside, type WarcSource } from "./archive-sources.js";
import { type CdxjMergeInput, mergeCdxjIndexes } from "./cdxj-merge.js";
import { PAGES_HEADER, pageCandidate, pageLine } from "./page-list.js";
import { WaczPackage, type WaczResource } from "./wacz-package.js";
import { WorkFile } from "./work-file.js";
import { writeZipNumIndex, ZIPNUM_CDX_NAME, ZIPNUM_IDX_NAME } from "./zipnum-index.js";

/**
 * `ubicrawl export`: agents' data dirs to one WACZ package — their WARC files (`archive/`), one index
 * merged from the WARC files' own (`indexes/index.cdxj`), the pages list (`pages/pages.jsonl`), and the
 * manifest. Files are written beside the output in a work folder, then packaged; the package appears
 * under its name only whole.
 */

/** Options of {@link exportWacz}. */
export interface ExportOptions {
  /** Agents' data dirs. */
  readonly dirs: readonly string[];
  /** The package's path. */
  readonly outPath: string;
  /** Replace `outPath` when it exists (refused otherwise). */
  readonly force: boolean;
  /** The crawl's seeds (normalized URLs), marked `"seed": true` in the pages list. */
  readonly seeds: ReadonlySet<string>;
  /**
   * The merged index's form: one `indexes/index.cdxj`, or compressed blocks (`index.cdx.gz` +
   * `index.idx`, see `zipnum-index.ts`), which a reader loads by parts; `auto` compresses past
   * {@link ZIPNUM_FROM_LINES} lines.
   */
  readonly indexFormat: IndexFormat;
  /** Title written in `datapackage.json`. */
  readonly title: string;
  /** The software that writes it (`ubicrawl <version>`). */
  readonly software: string;
}

/** The forms of the merged index (see {@link ExportOptions.indexFormat}). */
export const INDEX_FORMATS = ["auto", "cdxj", "zipnum"] as const;

/** One of {@link INDEX_FORMATS}. */
export type IndexFormat = (typeof INDEX_FORMATS)[number];

/**
 * Index lines past which `auto` writes the compressed form (about 25 MB of CDXJ, which a reader of the
 * plain form loads whole when it opens the package).
 */
export const ZIPNUM_FROM_LINES = 100_000;

/** What an export wrote. */
export interface ExportSummary {
  readonly outPath: string;
  readonly agentIds: readonly string[];
  readonly warcFiles: number;
  /** WARC files whose index was missing or stale, indexed again from their records. */
  readonly reindexed: number;
  readonly indexLines: number;
  /** The form the index was written in. */
  readonly indexFormat: "cdxj" | "zipnum";
  readonly pages: number;
  readonly seedPages: number;
  /** Live or unrecovered WARC files left out. */
  readonly skippedOpen: readonly string[];
  readonly resources: readonly WaczResource[];
}

/**
 * Refuses an existing `outPath` without `force` (InvalidArgument), before anything is read or fetched.
 */
export async function checkOutput(outPath: string, force: boolean): Promise<void> {
  if (!force && (await exists(outPath))) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${outPath} exists: give another --out, or --force to replace it`,
    );
  }
}

/**
 * Exports the data dirs of `options` to one WACZ package.
 * @throws UbiError InvalidArgument for an existing output without `force`, bad data dirs (see
 *   {@link findArchiveSources}) or no WARC file at all; StorageFailed for files that cannot be read or
 *   written.
 */
export async function exportWacz(options: ExportOptions): Promise<ExportSummary> {
  await checkOutput(options.outPath, options.force);
  const sources = await findArchiveSources(options.dirs);
  if (sources.warcs.length === 0) {
    throw new UbiError(ErrorCode.InvalidArgument, `no finished WARC file in ${options.dirs.join(", ")}`);
  }
  const work = await makeWorkDir(options.outPath);
  try {
    return await exportInto(work, sources, options);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function exportInto(
  work: string,
  sources: ArchiveSources,
  options: ExportOptions,
): Promise<ExportSummary> {
  const { inputs, reindexed } = await indexInputs(work, sources.warcs);
  const indexPath = join(work, "index.cdxj");
  const pagesPath = join(work, "pages.jsonl");
  const counts = await writeIndexAndPages(inputs, sources.warcs, options.seeds, indexPath, pagesPath);
  const indexFormat =
    options.indexFormat === "auto"
      ? counts.indexLines > ZIPNUM_FROM_LINES
        ? "zipnum"
        : "cdxj"
      : options.indexFormat;
  const partPath = join(work, basename(options.outPath));
  const wacz = new WaczPackage(partPath);
  try {
    for (const warc of sources.warcs) await wacz.add(warc.path, `archive/${warc.name}`);
    if (indexFormat === "zipnum") {
      const cdxPath = join(work, ZIPNUM_CDX_NAME);
      const idxPath = join(work, ZIPNUM_IDX_NAME);
      await writeZipNumIndex(indexPath, cdxPath, idxPath);
      await wacz.add(cdxPath, `indexes/${ZIPNUM_CDX_NAME}`);
      await wacz.add(idxPath, `indexes/${ZIPNUM_IDX_NAME}`);
    } else {
      await wacz.add(indexPath, "indexes/index.cdxj");
    }
    await wacz.add(pagesPath, "pages/pages.jsonl");
  } catch (error) {
    await wacz.abandon();
    throw error;
  }
  const resources = await wacz.finish({
    title: options.title,
    software: options.software,
    created: new Date(),
  });
  try {
    await rename(partPath, options.outPath);
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot write ${options.outPath}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  return {
    outPath: options.outPath,
    agentIds: sources.agentIds,
    warcFiles: sources.warcs.length,
    reindexed,
    ...counts,
    indexFormat,
    skippedOpen: sources.skippedOpen,
    resources,
  };
}

/** Each WARC file's index: its own when it covers the file, else one built from it in `work`. */
async function indexInputs(
  work: string,
  warcs: readonly WarcSource[],
): Promise<{ inputs: CdxjMergeInput[]; reindexed: number }> {
  const inputs: CdxjMergeInput[] = [];
  let reindexed = 0;
  for (const warc of warcs) {
    let indexPath = indexBeside(warc);
    if (!(await indexCoversFile(warc.path, indexPath))) {
      indexPath = join(work, `${warc.name}.cdxj`);
      await indexWarcFile(warc.path, indexPath);
      reindexed++;
    }
    inputs.push({ indexPath, filename: warc.name });
  }
  return { inputs, reindexed };
}

/** Merges the indexes into `indexPath` and lists the pages they index into `pagesPath`. */
async function writeIndexAndPages(
  inputs: readonly CdxjMergeInput[],
  warcs: readonly WarcSource[],
  seeds: ReadonlySet<string>,
  indexPath: string,
  pagesPath: string,
): Promise<{ indexLines: number; pages: number; seedPages: number }> {
  const pathOf = new Map(warcs.map((warc) => [warc.name, warc.path]));
  const index = new WorkFile(indexPath);
  const pages = new WorkFile(pagesPath);
  let indexLines = 0;
  let pageCount = 0;
  let seedPages = 0;
  try {
    await pages.write(PAGES_HEADER);
    for await (const line of mergeCdxjIndexes(inputs)) {
      await index.write(`${line}\n`);
      indexLines++;
      const candidate = pageCandidate(line);
      const warcPath = candidate && pathOf.get(candidate.filename);
      if (candidate === undefined || warcPath === undefined) continue;
      const seed = seeds.has(candidate.url);
      const page = await pageLine(candidate, warcPath, seed);
      if (page === undefined) continue;
      await pages.write(page);
      pageCount++;
      if (seed) seedPages++;
    }
    await Promise.all([index.close(), pages.close()]);
  } catch (error) {
    index.abandon();
    pages.abandon();
    throw error;
  }
  return { indexLines, pages: pageCount, seedPages };
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** A work folder beside the output (on its volume, so the finished package is renamed, not copied). */
async function makeWorkDir(outPath: string): Promise<string> {
  try {
    return await mkdtemp(join(dirname(outPath), `.${basename(outPath)}.work-`));
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot write beside ${outPath}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
