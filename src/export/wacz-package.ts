import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ZipFile } from "yazl";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";

/**
 * A WACZ 1.1 package (a ZIP file) written as a stream: files are added by path and read one at a time
 * as the ZIP is written, stored as they are (no compression, so a WARC file's offsets hold inside the
 * package and a reader can seek to a record), each one's SHA-256 and size taken on the way; then
 * `datapackage.json` lists them all and `datapackage-digest.json` hashes it. ZIP64 where sizes need it
 * (yazl's choice). Memory is bounded by the streams' buffers, whatever the files' sizes.
 */

/** The WACZ version written in `datapackage.json`. */
export const WACZ_VERSION = "1.1.1";

/** One file of the package as `datapackage.json` lists it. */
export interface WaczResource {
  /** Its file name. */
  readonly name: string;
  /** Its path in the package. */
  readonly path: string;
  /** `sha256:<hex>`. */
  readonly hash: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** What `datapackage.json` says of the package besides its files. */
export interface WaczDescription {
  readonly title: string;
  /** The software that wrote it. */
  readonly software: string;
  /** When it was written. */
  readonly created: Date;
}

/** Writes a WACZ package to one file: {@link add} each file, then {@link finish}. */
export class WaczPackage {
  private readonly zip = new ZipFile();
  private readonly written: Promise<void>;
  private readonly resources: Promise<WaczResource>[] = [];

  /** @param outPath the file written (created or replaced) */
  constructor(outPath: string) {
    this.written = pipeline(this.zip.outputStream, createWriteStream(outPath)).catch((error: unknown) => {
      throw new UbiError(ErrorCode.StorageFailed, `cannot write ${outPath}: ${errorMessage(error)}`, {
        cause: error,
      });
    });
    // Rejections are awaited in finish(); until then they must not count as unhandled.
    this.written.catch(() => {});
  }

  /** Adds the file at `sourcePath` as `path` in the package (read when its turn comes). */
  async add(sourcePath: string, path: string): Promise<void> {
    let bytes: number;
    try {
      bytes = (await stat(sourcePath)).size;
    } catch (error) {
      throw new UbiError(ErrorCode.StorageFailed, `cannot read ${sourcePath}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    const resource = new Promise<WaczResource>((resolve, reject) => {
      this.zip.addReadStreamLazy(path, { compress: false, size: bytes }, (callback) => {
        const hash = createHash("sha256");
        let seen = 0;
        const source = createReadStream(sourcePath);
        const hashing = new PassThrough();
        hashing.on("data", (chunk: Buffer) => {
          hash.update(chunk);
          seen += chunk.length;
        });
        source.on("error", (error) => {
          const failure = new UbiError(
            ErrorCode.StorageFailed,
            `cannot read ${sourcePath}: ${errorMessage(error)}`,
            { cause: error },
          );
          reject(failure);
          hashing.destroy(failure);
        });
        hashing.on("end", () => {
          if (seen !== bytes) {
            reject(
              new UbiError(
                ErrorCode.StorageFailed,
                `${sourcePath} changed while it was packaged (${bytes} bytes, then ${seen})`,
              ),
            );
            return;
          }
          resolve({ name: nameOf(path), path, hash: `sha256:${hash.digest("hex")}`, bytes });
        });
        source.pipe(hashing);
        callback(null, hashing);
      });
    });
    resource.catch(() => {});
    this.resources.push(resource);
  }

  /**
   * Writes `datapackage.json` and `datapackage-digest.json` once every file added is in, closes the
   * ZIP and waits for it to be written; returns the files listed.
   */
  async finish(description: WaczDescription): Promise<WaczResource[]> {
    let resources: WaczResource[];
    try {
      resources = await Promise.all(this.resources);
    } catch (error) {
      (this.zip.outputStream as Readable).destroy();
      await this.written.catch(() => {});
      throw error;
    }
    const datapackage = Buffer.from(
      `${JSON.stringify(
        {
          profile: "data-package",
          wacz_version: WACZ_VERSION,
          title: description.title,
          software: description.software,
          created: description.created.toISOString(),
          resources,
        },
        null,
        2,
      )}\n`,
    );
    const digest = Buffer.from(
      `${JSON.stringify({ path: DATAPACKAGE, hash: `sha256:${sha256(datapackage)}` }, null, 2)}\n`,
    );
    this.zip.addBuffer(datapackage, DATAPACKAGE, { compress: false });
    this.zip.addBuffer(digest, "datapackage-digest.json", { compress: false });
    this.zip.end();
    await this.written;
    return resources;
  }

  /** Stops writing (after a failure elsewhere); the caller removes the file. */
  async abandon(): Promise<void> {
    (this.zip.outputStream as Readable).destroy();
    await this.written.catch(() => {});
  }
}

/** The package's manifest. */
const DATAPACKAGE = "datapackage.json";

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}
