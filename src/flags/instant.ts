import { ErrorCode, UbiError } from "../errors.js";

/**
 * An ISO 8601 date and time with its offset from UTC (`2026-12-24T18:00:00Z`,
 * `2026-12-24T19:00+01:00`; seconds and their fraction may be left out): a time without an offset
 * would mean a different instant on each machine of a cluster, so it is refused.
 */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Milliseconds since the epoch of an instant written as ISO 8601 with its offset (see `ISO_INSTANT`);
 * `what` names the flag or key in the error that refuses anything else (a date that does not exist,
 * such as February 30, included).
 */
export function parseInstant(text: string, what: string): number {
  const trimmed = text.trim();
  const value = ISO_INSTANT.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  // Date.parse rolls February 30 over to March 2: the date it read must be the one written.
  const written = trimmed.slice(0, 10);
  const offsetMs = offsetOf(trimmed);
  if (!Number.isFinite(value) || new Date(value + offsetMs).toISOString().slice(0, 10) !== written) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${what} must be a date and time with its offset from UTC, such as 2026-12-24T18:00:00Z or 2026-12-24T19:00+01:00, got "${text}"`,
    );
  }
  return value;
}

/** `instant` (ms since the epoch) as `--print-config` writes it, and `parseInstant` reads it back. */
export function formatInstant(instant: number): string {
  return new Date(instant).toISOString();
}

/** The offset from UTC an ISO instant ends with, ms (0 for `Z` or no match). */
function offsetOf(text: string): number {
  const match = /([+-])(\d{2}):(\d{2})$/.exec(text);
  if (match === null) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return (match[1] === "-" ? -1 : 1) * minutes * 60_000;
}
