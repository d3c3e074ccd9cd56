import { ErrorCode, UbiError } from "../errors.js";
import { exportWacz, INDEX_FORMATS, WACZ_VERSION, ZIPNUM_FROM_LINES } from "../export/index.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import { packageVersion } from "./package-version.js";
import { readSeeds } from "./seeds.js";

const EXPORT_FLAGS = {
  out: { type: "string", help: "the WACZ file to write", placeholder: "FILE" },
  force: { type: "boolean", help: "replace --out when it exists (refused otherwise)" },
  seeds: {
    type: "string",
    help: "the crawl's seeds, one URL a line (the agents' --seeds file): marked in the pages list",
    placeholder: "FILE",
  },
  index: {
    type: "string",
    help: `the merged index's form: cdxj (indexes/index.cdxj), zipnum (indexes/index.cdx.gz in gzipped blocks of 3,000 lines + indexes/index.idx, which a reader loads by parts), auto (zipnum past ${ZIPNUM_FROM_LINES.toLocaleString("en")} lines)`,
    default: "auto",
    choices: INDEX_FORMATS,
  },
  title: { type: "string", help: "the collection's title in datapackage.json", default: "ubicrawl crawl" },
} as const satisfies FlagSpecs;

const USAGE =
  "ubicrawl export --out FILE [--force] [--seeds FILE] [--index auto|cdxj|zipnum] [--title TEXT] DIR...";
const DESCRIPTION = `Packages a crawl as one WACZ ${WACZ_VERSION} file, the format ReplayWeb.page, pywb and
Browsertrix open, from its agents' data dirs (each agent's --data DIR, copied to one machine; or the
folders of their WARC files, an agent's --warc-dir): every finished WARC file of DIR/warc and of the
--warc-dir DIR records (or of DIR), stored as it is (archive/); one CDXJ index merged from the WARC
files' own indexes (sorted, so a revisit finds its original in another agent's file:
indexes/index.cdxj, or compressed, see --index); the pages list (pages/pages.jsonl: every HTML page
answered 200, with its title, the --seeds marked);
datapackage.json (each file's SHA-256 and size) and datapackage-digest.json. Streamed: memory stays
bounded whatever the crawl's size. A WARC file whose index is missing or stale is indexed again (in a
work folder beside FILE; the data dirs are only read). Live or unrecovered WARC files (.open) are left
out and named: start their agent once to finish them. FILE appears only once whole. .warc.zst files are
packaged and indexed, but ReplayWeb.page cannot replay them (it has no Zstandard decoder): the export
says how to convert them.`;

/** `ubicrawl export`: agents' data dirs to one WACZ package. */
export async function exportCommand(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, EXPORT_FLAGS);
  if (flags.help) {
    process.stdout.write(formatHelp(USAGE, DESCRIPTION, EXPORT_FLAGS));
    return 0;
  }
  if (flags.out === undefined) throw new UbiError(ErrorCode.InvalidArgument, `--out is required (${USAGE})`);
  if (flags.positionals.length === 0) {
    throw new UbiError(ErrorCode.InvalidArgument, `name at least one agent's data dir (${USAGE})`);
  }
  const seeds = await readSeeds(flags.seeds === undefined ? [] : [flags.seeds]);
  if (seeds.rejected.length > 0) throw new UbiError(ErrorCode.InvalidArgument, seeds.rejected.join("; "));
  const summary = await exportWacz({
    dirs: flags.positionals,
    seeds: new Set(seeds.urls),
    indexFormat: flags.index,
    outPath: flags.out,
    force: flags.force,
    title: flags.title,
    software: `ubicrawl ${await packageVersion()}`,
  });
  const bytes = summary.resources.reduce((sum, resource) => sum + resource.bytes, 0);
  const lines = [
    `wrote ${summary.outPath}: ${summary.warcFiles} WARC files of ${summary.agentIds.length} agents (${summary.agentIds.join(", ")}), ${bytes} bytes packaged`,
    `index: ${summary.indexLines} lines (${summary.indexFormat})${summary.reindexed > 0 ? ` (${summary.reindexed} WARC files indexed again: their index was missing or stale)` : ""}`,
    `pages: ${summary.pages} (${summary.seedPages} seeds)`,
  ];
  const zstdFiles = summary.resources.filter((resource) => resource.path.endsWith(".warc.zst")).length;
  if (zstdFiles > 0) {
    lines.push(
      `${zstdFiles} WARC files are .warc.zst: packaged and indexed, but not replayable: ReplayWeb.page has no Zstandard decoder (nor has pywb's warcio). ` +
        "Crawl with --warc-compression gzip what is to be replayed; to replay these, convert each to one gzip member a record " +
        "(zstd -d -D DICT with the dictionary of its first frame, then warcio recompress FILE.warc FILE.warc.gz) and export those",
    );
  }
  for (const path of summary.skippedOpen) {
    lines.push(`left out ${path}: live or unrecovered (start its agent once to finish it)`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
