import { ErrorCode, UbiError } from "../errors.js";

/** Multipliers of the units a byte rate may name (1 KB = 1,024 bytes, as the progress line counts). */
const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Bytes per second of a rate such as `5MB/s`, `800 KB/s`, `1.5GiB/s` or `250000` (bytes per second);
 * the unit is case-blind and `/s` may be left out. Throws `InvalidArgument`, naming `flag`, for
 * anything else or a rate that is not positive.
 */
export function parseByteRate(text: string, flag: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?i?b)?\s*(?:\/\s*s)?\s*$/i.exec(text);
  const multiplier = match ? UNITS[(match[2] ?? "b").toLowerCase()] : undefined;
  const rate = match && multiplier !== undefined ? Number(match[1]) * multiplier : Number.NaN;
  if (!(rate > 0) || !Number.isFinite(rate)) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${flag} must be a positive rate such as 5MB/s, 800KB/s or 250000 (bytes per second), got "${text}"`,
    );
  }
  return rate;
}
