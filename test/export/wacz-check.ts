import { createHash } from "node:crypto";
import { WARCParser } from "warcio";
import yauzl from "yauzl";

/**
 * Reading a WACZ package back with an independent ZIP reader (yauzl, not the writer's yazl) and WARC
 * reader (warcio), for the export's tests.
 */

/** One file of a ZIP: its bytes and how it was stored (0: stored, 8: deflated). */
export interface ZipEntryRead {
  readonly bytes: Buffer;
  readonly compressionMethod: number;
}

/** Every file of the ZIP at `path`, by its path in the ZIP, in the ZIP's order. */
export function readZip(path: string): Promise<Map<string, ZipEntryRead>> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (openError, zip) => {
      if (openError || !zip) return reject(openError);
      const entries = new Map<string, ZipEntryRead>();
      zip.on("error", reject);
      zip.on("end", () => resolve(entries));
      zip.on("entry", (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError);
          const chunks: Buffer[] = [];
          stream.on("data", (chunk: Buffer) => chunks.push(chunk));
          stream.on("error", reject);
          stream.on("end", () => {
            entries.set(entry.fileName, {
              bytes: Buffer.concat(chunks),
              compressionMethod: entry.compressionMethod,
            });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** `sha256:<hex>` of `bytes`. */
export function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** One index line: SURT key, timestamp and its JSON fields. */
export interface IndexLine {
  readonly text: string;
  readonly key: string;
  readonly timestamp: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** The lines of CDXJ text. */
export function parseIndex(text: string): IndexLine[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const match = /^(\S+) (\d{14}) (\{.*\})$/.exec(line);
      if (!match) throw new Error(`not a CDXJ line: ${line}`);
      return {
        text: line,
        key: match[1] as string,
        timestamp: match[2] as string,
        fields: JSON.parse(match[3] as string) as Record<string, string>,
      };
    });
}

/** A record as {@link recordAt} reads it. */
export interface RecordRead {
  readonly type: string;
  readonly url: string;
  /** Its HTTP payload as UTF-8 text (empty for a revisit). */
  readonly payload: string;
  /** The bytes read held this record and nothing more. */
  readonly alone: boolean;
}

/** The WARC record warcio reads at `offset` in `warc`, reading exactly `length` bytes. */
export async function recordAt(
  warc: Buffer,
  offset: number,
  length: number,
): Promise<RecordRead | undefined> {
  const slice = warc.subarray(offset, offset + length);
  async function* source(): AsyncGenerator<Uint8Array> {
    yield slice;
  }
  const parser = new WARCParser(source());
  const record = await parser.parse();
  if (!record) return undefined;
  const payload = Buffer.from(await record.readFully(false)).toString("utf8");
  const type = record.warcType ?? "";
  const url = record.warcTargetURI ?? "";
  // The slice holds that record only.
  const alone = (await parser.parse()) === null;
  return { type, url, payload, alone };
}
