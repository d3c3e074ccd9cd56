import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { ErrorCode, UbiError } from "../errors.js";
import { checkOutput, exportWacz, INDEX_FORMATS, WACZ_VERSION, ZIPNUM_FROM_LINES } from "../export/index.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import { downloadAgentArchives } from "./agent-archives.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";
import { OPERATOR_CONNECTION_FLAGS, securityFrom } from "./operator-connection.js";
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
  agent: {
    type: "string",
    help: "fetch the WARC files and indexes of this live agent over its Admin service (an operator certificate with --tls-*), instead of or besides DIRs",
    placeholder: "HOST:PORT",
  },
  cluster: { type: "boolean", help: "with --agent: of every agent alive in its view" },
  ...OPERATOR_CONNECTION_FLAGS,
} as const satisfies FlagSpecs;

const USAGE =
  "ubicrawl export --out FILE [--force] [--seeds FILE] [--index auto|cdxj|zipnum] [--title TEXT] (DIR... | --agent HOST:PORT [--cluster] (--insecure | --tls-*))";
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
says how to convert them. With --agent, the files come from live agents over gRPC, streamed to a work
folder beside FILE (removed after): finished files with their indexes, and the live file as of its
whole records so far (indexed here).`;

/** `ubicrawl export`: agents' data dirs to one WACZ package; `--help` and what it wrote on `io.stdout`. */
export async function exportCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, EXPORT_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, EXPORT_FLAGS));
    return 0;
  }
  if (flags.out === undefined) throw new UbiError(ErrorCode.InvalidArgument, `--out is required (${USAGE})`);
  if (flags.positionals.length === 0 && flags.agent === undefined) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `name at least one agent's data dir, or --agent (${USAGE})`,
    );
  }
  if (flags.cluster && flags.agent === undefined) {
    throw new UbiError(ErrorCode.InvalidArgument, "--cluster goes with --agent");
  }
  const seeds = await readSeeds(flags.seeds === undefined ? [] : [flags.seeds]);
  if (seeds.rejected.length > 0) throw new UbiError(ErrorCode.InvalidArgument, seeds.rejected.join("; "));
  // Before a download that may take long.
  await checkOutput(flags.out, flags.force);
  const workDir = `${flags.out}.agents-${randomBytes(4).toString("hex")}`;
  try {
    const downloaded =
      flags.agent === undefined
        ? { dirs: [], notes: [] }
        : await downloadAgentArchives({
            agent: flags.agent,
            cluster: flags.cluster,
            security: await securityFrom(flags),
            timeoutMs: flags["timeout-ms"],
            workDir: await mkdir(workDir, { recursive: true }).then(() => workDir),
          });
    return await packageDirs(
      { ...flags, out: flags.out },
      [...flags.positionals, ...downloaded.dirs],
      seeds.urls,
      downloaded.notes,
      io,
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Packages `dirs` as `flags` say, and prints what it wrote (with `notes` of the download) on `io.stdout`. */
async function packageDirs(
  flags: { out: string; force: boolean; index: (typeof INDEX_FORMATS)[number]; title: string },
  dirs: string[],
  seedUrls: readonly string[],
  notes: readonly string[],
  io: CommandIo,
): Promise<number> {
  const summary = await exportWacz({
    dirs,
    seeds: new Set(seedUrls),
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
  lines.push(...notes);
  for (const path of summary.skippedOpen) {
    lines.push(`left out ${path}: live or unrecovered (start its agent once to finish it)`);
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
