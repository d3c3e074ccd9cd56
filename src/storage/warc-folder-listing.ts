import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { OPEN_SUFFIX, warcFileCompression } from "./warc-file-name.js";
import type { WarcFileExtent } from "./warc-file-slot.js";

/**
 * An agent's WARC folder as an operator downloads it (`ubicrawl export --agent`): its finished files
 * with their indexes, and the live one up to the whole records appended so far (a valid WARC file the
 * reader indexes itself). Read-only; only the names it lists can be read.
 */

/** One file of the listing. */
export interface WarcFolderFile {
  /** The WARC file's finished name. */
  readonly name: string;
  readonly bytes: number;
  /** Its index's length, 0 when it has none. */
  readonly indexBytes: number;
  /** The file being written (read from `<name>.open`). */
  readonly live: boolean;
}

/** Lists and reads the WARC files of one agent's folder. */
export class WarcFolderListing {
  constructor(
    private readonly folder: string,
    private readonly agentId: string,
    /** The live file's name and whole length, from its writer. */
    private readonly liveExtent: () => WarcFileExtent | undefined,
  ) {}

  /** Every WARC file of the folder (finished, and the live one), ordered by name. */
  async list(): Promise<{ agentId: string; files: WarcFolderFile[] }> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch (error) {
      throw new UbiError(ErrorCode.StorageFailed, `cannot read ${this.folder}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    const present = new Set(names);
    const live = this.liveExtent();
    const files: WarcFolderFile[] = [];
    for (const name of names.sort()) {
      if (warcFileCompression(name) === undefined) continue;
      if (name.endsWith(OPEN_SUFFIX)) {
        const finished = name.slice(0, -OPEN_SUFFIX.length);
        // Another writer's leftover (not this run's live file) is not whole: left out.
        if (live?.name === finished)
          files.push({ name: finished, bytes: live.bytes, indexBytes: 0, live: true });
        continue;
      }
      const bytes = await sizeOf(join(this.folder, name));
      if (bytes === undefined) continue;
      const index = present.has(`${name}.cdxj`) ? await sizeOf(join(this.folder, `${name}.cdxj`)) : undefined;
      files.push({ name, bytes, indexBytes: index ?? 0, live: false });
    }
    return { agentId: this.agentId, files };
  }

  /**
   * The first `bytes` (0: all) of file `name` of the listing, or of its index `<name>.cdxj`.
   * @throws UbiError InvalidArgument for any other name.
   */
  async open(name: string, bytes: number, chunkBytes: number): Promise<Readable> {
    const { files } = await this.list();
    const isIndex = name.endsWith(".cdxj");
    const file = files.find(
      (candidate) => candidate.name === (isIndex ? name.slice(0, -".cdxj".length) : name),
    );
    if (file === undefined || (isIndex && file.indexBytes === 0)) {
      throw new UbiError(ErrorCode.InvalidArgument, `${name} is not a file of this agent's archive`);
    }
    const path = join(this.folder, file.live ? `${name}${OPEN_SUFFIX}` : name);
    const length = isIndex ? file.indexBytes : Math.min(bytes === 0 ? file.bytes : bytes, file.bytes);
    if (length === 0) return Readable.from([]);
    return createReadStream(path, { start: 0, end: length - 1, highWaterMark: chunkBytes });
  }
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    // Moved off (the offload hook) between the listing and now.
    return undefined;
  }
}
