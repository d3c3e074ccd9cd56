/**
 * The order in which a tier's test files start: the longest first, so that the last files to start
 * are short ones and the workers finish together (a long file started last runs alone while the other
 * worker idles: on a fresh clone, with no results cache, vitest orders by file size, and the 31-33 s
 * files of the system tier started last in a CI run).
 *
 * The seconds come from a committed table (test/durations.json, file → seconds of a recorded run,
 * rewritten by `npm run test:durations`). A file the table does not list starts first, in the order it
 * came in (vitest's own): it is new, or shorter than half a second. A new file may be long, and one started first
 * costs nothing at the end, where a long one started last would be the whole tail; a short one costs
 * nothing anywhere.
 */

/** The committed table of each test file's seconds, relative to the project root. */
export const DURATIONS_FILE = "test/durations.json";

/** What the order needs of a file: its tier (vitest project) and its seconds, when the table has them. */
export interface FileTiming {
  readonly project: string;
  readonly seconds: number | undefined;
}

/**
 * `files` ordered longest first within each run of files of one project (vitest sorts the projects
 * themselves; their order and each project's files stay together): the unlisted files first, in their
 * order, then the listed ones by seconds, longest first, ties in their order.
 */
export function longestFirst<T>(files: readonly T[], timingOf: (file: T) => FileTiming): T[] {
  const ordered: T[] = [];
  let start = 0;
  while (start < files.length) {
    const project = timingOf(files[start] as T).project;
    let end = start + 1;
    while (end < files.length && timingOf(files[end] as T).project === project) end++;
    const run = files
      .slice(start, end)
      .map((file, index) => ({ file, index, seconds: timingOf(file).seconds }));
    const unlisted = run.filter((entry) => entry.seconds === undefined);
    const listed = run
      .filter((entry) => entry.seconds !== undefined)
      .sort((a, b) => (b.seconds as number) - (a.seconds as number) || a.index - b.index);
    for (const entry of [...unlisted, ...listed]) ordered.push(entry.file);
    start = end;
  }
  return ordered;
}

/** The table's entries that are a number of seconds (anything else is left out, as unlisted). */
export function parseDurations(text: string): ReadonlyMap<string, number> {
  const table: unknown = JSON.parse(text);
  const durations = new Map<string, number>();
  if (table === null || typeof table !== "object" || Array.isArray(table)) return durations;
  for (const [file, seconds] of Object.entries(table)) {
    if (typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0) durations.set(file, seconds);
  }
  return durations;
}
