import { ErrorCode, UbiError } from "../errors.js";

/**
 * Bytes per second of one unit of each rate a byte rate may name, by its lower-case name. Bytes count
 * in powers of 1,024 (1 KB = 1 KiB = 1 k = 1,024 bytes, as the progress line counts them); bits, as
 * network links are rated, in powers of 1,000 (1 Mbit = 1,000,000 bits = 125,000 bytes).
 */
const UNITS: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  bit: 1 / 8,
  kbit: 1000 / 8,
  mbit: 1000 ** 2 / 8,
  gbit: 1000 ** 3 / 8,
};

/** What a byte rate may look like, in the errors that refuse one. */
const EXAMPLES = "5MB/s, 512k, 2MiB, 10Mbit/s or 250000 (bytes per second)";

/**
 * Bytes per second of a rate such as `5MB/s`, `800 KB/s`, `512k`, `5M`, `1.5GiB/s`, `10Mbit/s` or
 * `250000` (a number without a unit counts bytes per second): the unit is case-blind and `/s` may be
 * left out. Throws `InvalidArgument`, naming `flag` (e.g. `--max-bandwidth`), for anything else, a
 * rate that is not positive, or one under `min` bytes per second — saying then how many bytes per
 * second the text came to, since `5` alone means 5 bytes per second, not 5 MB.
 */
export function parseByteRate(text: string, flag: string, min = 0): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*(?:\/\s*s)?\s*$/i.exec(text);
  const multiplier = match ? UNITS[(match[2] ?? "").toLowerCase()] : undefined;
  const rate = match && multiplier !== undefined ? Number(match[1]) * multiplier : Number.NaN;
  if (!(rate > 0) || !Number.isFinite(rate)) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${flag} must be a positive rate such as ${EXAMPLES}, got "${text}"`,
    );
  }
  if (rate < min) {
    const unitless = match?.[2] === "";
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${flag} must be at least ${formatByteRate(min)} (${min.toLocaleString("en")} bytes per second), got "${text.trim()}": ` +
        `${formatBytesPerSecond(rate)}` +
        (unitless
          ? `, since a number without a unit counts bytes per second; write the unit, e.g. ${match?.[1]}KB/s or ${match?.[1]}MB/s`
          : ""),
    );
  }
  return rate;
}

/** A rate of bytes per second as the flags write it: `1KB/s`, `5MB/s`, `1.5GB/s`, or `512B/s`. */
export function formatByteRate(bytesPerSecond: number): string {
  for (const [unit, size] of [
    ["GB", 1024 ** 3],
    ["MB", 1024 ** 2],
    ["KB", 1024],
  ] as const) {
    if (bytesPerSecond >= size) return `${Number((bytesPerSecond / size).toFixed(2))}${unit}/s`;
  }
  return `${Number(bytesPerSecond.toFixed(2))}B/s`;
}

/** `n bytes per second`, with `byte` for one. */
function formatBytesPerSecond(rate: number): string {
  const bytes = Number(rate.toFixed(3));
  return `${bytes.toLocaleString("en")} ${bytes === 1 ? "byte" : "bytes"} per second`;
}
