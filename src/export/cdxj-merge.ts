import { type FileHandle, open } from "node:fs/promises";
import { Heap } from "heap-js";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";

/**
 * The k-way merge of sorted CDXJ indexes into one sorted index, streamed: one line of each index in
 * memory at a time, whatever their sizes. Each line's `filename` is rewritten to the name its WARC file
 * has in the merged collection.
 */

/** One sorted index to merge. */
export interface CdxjMergeInput {
  /** Path of the index file. */
  readonly indexPath: string;
  /** What every line's `filename` becomes in the merged index. */
  readonly filename: string;
}

/** The head line of one input, with the rest of its lines. */
interface Cursor {
  line: string;
  readonly rest: AsyncIterator<string>;
  readonly input: CdxjMergeInput;
}

/**
 * Yields the lines (without their newline) of `inputs` merged in text order, as pywb's indexer sorts
 * them, a line equal to the one before dropped.
 * @throws UbiError StorageFailed when an index cannot be read, InvalidArgument for a line with no
 *   `filename` field or one out of order in its index.
 */
export async function* mergeCdxjIndexes(inputs: readonly CdxjMergeInput[]): AsyncGenerator<string> {
  const heap = new Heap<Cursor>((a, b) => compareText(a.line, b.line));
  const handles: FileHandle[] = [];
  try {
    for (const input of inputs) {
      const handle = await openIndex(input.indexPath);
      handles.push(handle);
      const rest = handle.readLines({ encoding: "utf8" })[Symbol.asyncIterator]();
      const first = await nextLine(rest, input);
      if (first !== undefined) heap.push({ line: first, rest, input });
    }
    let previous: string | undefined;
    for (let cursor = heap.pop(); cursor !== undefined; cursor = heap.pop()) {
      if (cursor.line !== previous) yield cursor.line;
      previous = cursor.line;
      const next = await nextLine(cursor.rest, cursor.input);
      if (next === undefined) continue;
      if (compareText(next, cursor.line) < 0) {
        throw new UbiError(ErrorCode.InvalidArgument, `${cursor.input.indexPath} is not sorted`);
      }
      cursor.line = next;
      heap.push(cursor);
    }
  } finally {
    for (const handle of handles) await handle.close().catch(() => {});
  }
}

/** `line` with its `"filename": "…"` field set to `filename`. */
export function withFilename(line: string, filename: string, indexPath: string): string {
  const at = line.lastIndexOf(FILENAME_FIELD);
  if (at < 0 || !line.endsWith('"}')) {
    throw new UbiError(ErrorCode.InvalidArgument, `${indexPath} holds a line with no filename: ${line}`);
  }
  return `${line.slice(0, at)}${FILENAME_FIELD}${JSON.stringify(filename)}}`;
}

/** The last field of every line `cdxj.ts` writes. */
const FILENAME_FIELD = '"filename": ';

/** Plain text order (UTF-16 code units, the same as byte order for the ASCII keys). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The next non-empty line of an input, its filename rewritten, or undefined at its end. */
async function nextLine(rest: AsyncIterator<string>, input: CdxjMergeInput): Promise<string | undefined> {
  for (;;) {
    let next: IteratorResult<string>;
    try {
      next = await rest.next();
    } catch (error) {
      throw new UbiError(ErrorCode.StorageFailed, `cannot read ${input.indexPath}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    if (next.done) return undefined;
    if (next.value !== "") return withFilename(next.value, input.filename, input.indexPath);
  }
}

async function openIndex(path: string): Promise<FileHandle> {
  try {
    return await open(path, "r");
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot read ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
