/**
 * Bytes a set of downloads moved within a window of time, for the bandwidth tests' own measure (kept
 * apart from the laboratory's, which is under test with the controller).
 */

/** A download: when it started and ended (ms), and its bytes. */
export interface TimedDownload {
  readonly startMs: number;
  readonly endMs: number;
  readonly bytes: number;
}

/** Bytes within [from, to), each download's spread evenly over its duration. */
export function bytesWithin(downloads: readonly TimedDownload[], from: number, to: number): number {
  let bytes = 0;
  for (const d of downloads) {
    const overlap = Math.min(to, d.endMs) - Math.max(from, d.startMs);
    if (overlap > 0) bytes += (d.bytes * overlap) / (d.endMs - d.startMs);
  }
  return bytes;
}
