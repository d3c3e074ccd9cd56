import ms from "ms";
import { ErrorCode, UbiError } from "../errors.js";

/**
 * Milliseconds of a duration such as `2s`, `10m`, `1.5h` or `7d` (a bare number counts milliseconds),
 * as the `ms` package reads them: its units (ms, s, m, h, d, w, y and their long names) are what people
 * write, and it is a small, widely used parser. `what` names the flag or key in the error that refuses
 * anything else, zero or a negative duration included.
 */
export function parseDuration(text: string, what: string): number {
  let value: number | undefined;
  try {
    // ms() gives undefined (typed number) for text it cannot read, and throws for an empty one.
    value = ms(text.trim() as ms.StringValue) as number | undefined;
  } catch {
    value = undefined;
  }
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${what} must be a duration such as 2s, 10m, 1.5h or 7d, got "${text}"`,
    );
  }
  return Math.round(value);
}
