import type { FileHandle } from "node:fs/promises";
import { compareCdxjLines } from "./cdxj.js";

/**
 * Sorted runs of CDXJ lines in one file, merged in bounded memory: an index's lines spilled in sorted
 * chunks (see `cdxj-journal.ts`) are read back a small buffer per run at a time, so sorting the index
 * of a 1 GiB WARC file (~200,000 lines, ~50 MiB) holds a few MiB, not the whole index two or three times.
 */

/** One sorted run of lines in a file: its bytes. */
export interface CdxjRun {
  readonly offset: number;
  readonly length: number;
}

/** Bytes read from a run at a time. */
const READ_BYTES = 64 * 1024;

const NEWLINE = 0x0a;

/** The lines of one run, in order, read `READ_BYTES` at a time. */
async function* runLines(handle: FileHandle, run: CdxjRun): AsyncGenerator<string> {
  const end = run.offset + run.length;
  let position = run.offset;
  let rest: Buffer = Buffer.alloc(0);
  while (position < end) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_BYTES, end - position));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) throw new Error(`the run at ${run.offset} ends at ${position}, before ${end}`);
    position += bytesRead;
    let bytes =
      rest.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([rest, chunk.subarray(0, bytesRead)]);
    // A newline byte never occurs inside a multi-byte UTF-8 character: cutting after one is safe.
    for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE)) {
      yield bytes.toString("utf8", 0, newline + 1);
      bytes = bytes.subarray(newline + 1);
    }
    rest = bytes;
  }
  if (rest.length > 0) yield rest.toString("utf8");
}

/** A run being merged: its next line, and the rest of it. */
interface Head {
  line: string;
  readonly rest: AsyncIterator<string> | Iterator<string>;
}

/**
 * The lines of `runs` in `handle` and of `sorted` (lines in memory, sorted), merged in sorted order
 * (the order of `sortCdxjLines`). Memory: a read buffer and a line per run.
 */
export async function* mergeCdxjRuns(
  handle: FileHandle,
  runs: readonly CdxjRun[],
  sorted: readonly string[],
): AsyncGenerator<string> {
  const heap: Head[] = [];
  const sources: (AsyncIterator<string> | Iterator<string>)[] = [
    ...runs.map((run) => runLines(handle, run)),
    sorted[Symbol.iterator](),
  ];
  for (const rest of sources) {
    const first = await rest.next();
    if (first.done !== true) push(heap, { line: first.value, rest });
  }
  while (heap.length > 0) {
    const head = heap[0] as Head;
    yield head.line;
    const next = await head.rest.next();
    if (next.done === true) {
      const last = heap.pop() as Head;
      if (heap.length > 0) {
        heap[0] = last;
        siftDown(heap, 0);
      }
    } else {
      head.line = next.value;
      siftDown(heap, 0);
    }
  }
}

/** Adds `head` to the min-heap `heap` (ordered by line). */
function push(heap: Head[], head: Head): void {
  heap.push(head);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (compareCdxjLines((heap[parent] as Head).line, head.line) <= 0) break;
    heap[i] = heap[parent] as Head;
    i = parent;
  }
  heap[i] = head;
}

/** Restores the min-heap order below `i`, whose line grew. */
function siftDown(heap: Head[], i: number): void {
  const head = heap[i] as Head;
  for (;;) {
    let least = 2 * i + 1;
    if (least >= heap.length) break;
    const right = least + 1;
    if (right < heap.length && compareCdxjLines((heap[right] as Head).line, (heap[least] as Head).line) < 0) {
      least = right;
    }
    if (compareCdxjLines(head.line, (heap[least] as Head).line) <= 0) break;
    heap[i] = heap[least] as Head;
    i = least;
  }
  heap[i] = head;
}
