import type { ServerResponse } from "node:http";
import { createRandom } from "../prng.js";

/** A small well-formed HTML page linking to `hrefs` (written as given, so they may be relative). */
export function htmlPage(title: string, hrefs: readonly string[], extra = ""): string {
  const items = hrefs.map((href) => `<li><a href="${href}">${href}</a></li>`).join("\n");
  return `<!doctype html>\n<html><head><title>${title}</title></head>\n<body><h1>${title}</h1>\n<ul>\n${items}\n</ul>\n${extra}</body></html>\n`;
}

/** 64 KiB of HTML-looking text, the unit every generated body is written in (never reallocated). */
export const FILLER_CHUNK: Buffer = Buffer.from(
  "<p>hostile filler text, the same paragraph again and again until the reader gives up.</p>\n"
    .repeat(1024)
    .slice(0, 64 * 1024),
);

/** `length` deterministic pseudo-random bytes (NULs, control bytes and invalid UTF-8 included). */
export function randomBytes(seed: number, length: number): Buffer {
  const random = createRandom(seed);
  const bytes = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

/**
 * Writes `chunk` to `res` until `totalBytes` (Infinity: forever) have been written or the client goes
 * away, honouring back-pressure so memory stays flat whatever the size.
 */
export function streamRepeated(res: ServerResponse, chunk: Buffer, totalBytes: number): void {
  let left = totalBytes;
  const pump = (): void => {
    while (!res.destroyed && left > 0) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (left === 0) {
        res.end(piece);
        return;
      }
      if (!res.write(piece)) {
        res.once("drain", pump);
        return;
      }
    }
  };
  pump();
}
