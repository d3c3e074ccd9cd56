import { seededRandom } from "../../bench/lib/prng.mjs";
import { readWarcFile } from "../../src/storage/warc-reader.js";
import { listWarcFiles, type WarcRecordIn } from "../agent/harness.js";

/**
 * Shared checks of the chaos tests: a seeded PRNG for the kill schedule (so a failing schedule can be
 * replayed with CHAOS_SEED) and the structural checks of an agent's WARC files after many SIGKILLs.
 */

/**
 * The seed of the kill schedule (printed by each test): `CHAOS_SEED` from the environment to replay
 * one, a fresh random one with `CHAOS_RANDOM=1` (an on-demand run exploring new schedules), else the
 * test's `fixed` one, so the suite (and CI) replays the same schedules every run.
 */
export function chaosSeed(fixed: number): number {
  const fromEnv = Number(process.env.CHAOS_SEED);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  if (process.env.CHAOS_RANDOM === "1") return Math.floor(Math.random() * 2 ** 31) + 1;
  return fixed;
}

/** An integer in [min, max] drawn from `random`. */
export function randomIntIn(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** What reading an agent's WARC folder back found. */
export interface WarcCheck {
  readonly files: number;
  /** Files still named `.open`. */
  readonly openFiles: number;
  readonly records: WarcRecordIn[];
  /** Files warcio could not read to the end, with the error. */
  readonly unreadable: { file: string; error: string }[];
}

/** Reads every WARC file of `dataDir` to the end with warcio, noting (not throwing on) unreadable ones. */
export async function checkWarcFiles(dataDir: string): Promise<WarcCheck> {
  const files = await listWarcFiles(dataDir);
  const records: WarcRecordIn[] = [];
  const unreadable: { file: string; error: string }[] = [];
  for (const file of files) {
    try {
      for await (const record of readWarcFile(file)) records.push({ ...record, file });
    } catch (error) {
      unreadable.push({ file, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return {
    files: files.length,
    openFiles: files.filter((file) => file.endsWith(".open")).length,
    records,
    unreadable,
  };
}

/**
 * Problems with the request/response pairs of `records`: every request and response names the other
 * in `WARC-Concurrent-To`, in the same file, for the same URL; every file starts with a warcinfo record
 * and every record names its file's warcinfo. Empty when all is well.
 */
export function pairProblems(records: readonly WarcRecordIn[]): string[] {
  const problems: string[] = [];
  const byId = new Map<string, WarcRecordIn>();
  const warcinfoOf = new Map<string, string>();
  for (const record of records) {
    const id = record.headers.get("warc-record-id") ?? "";
    if (byId.has(id)) problems.push(`duplicate record id ${id}`);
    byId.set(id, record);
    if (record.type === "warcinfo") {
      if (warcinfoOf.has(record.file)) problems.push(`two warcinfo records in ${record.file}`);
      else if (record.offset !== 0) problems.push(`warcinfo not first in ${record.file}`);
      warcinfoOf.set(record.file, id);
    }
  }
  for (const record of records) {
    if (record.type === "warcinfo") continue;
    const id = record.headers.get("warc-record-id");
    const where = `${record.type} ${id} of ${record.headers.get("warc-target-uri")} in ${record.file}`;
    if (record.type !== "request" && record.type !== "response" && record.type !== "revisit") {
      problems.push(`unexpected record type: ${where}`);
      continue;
    }
    if (record.headers.get("warc-warcinfo-id") !== warcinfoOf.get(record.file)) {
      problems.push(`${where} does not name its file's warcinfo`);
    }
    const other = byId.get(record.headers.get("warc-concurrent-to") ?? "");
    if (!other) {
      problems.push(`${where} has no partner`);
      continue;
    }
    // A request's partner is its response, or a revisit when the payload was stored before.
    const partnerFits =
      record.type === "request"
        ? other.type === "response" || other.type === "revisit"
        : other.type === "request";
    if (
      !partnerFits ||
      other.file !== record.file ||
      other.headers.get("warc-concurrent-to") !== id ||
      other.headers.get("warc-target-uri") !== record.headers.get("warc-target-uri")
    ) {
      problems.push(`${where} and its partner do not match`);
    }
  }
  return problems;
}

/**
 * How many times each target URI is archived: response records, and revisit records (a payload stored
 * before, under another URI or an earlier fetch).
 */
export function responsesByUrl(records: readonly WarcRecordIn[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const record of records) {
    if (record.type !== "response" && record.type !== "revisit") continue;
    const url = record.headers.get("warc-target-uri") ?? "";
    counts.set(url, (counts.get(url) ?? 0) + 1);
  }
  return counts;
}

export { seededRandom };
