// Small helpers to print benchmark figures: medians and a plain aligned text table.

/**
 * The median of `values` (the mean of the two middle ones for an even count); NaN when empty.
 * @param {readonly number[]} values
 */
export function median(values) {
  const finite = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = finite.length >>> 1;
  return finite.length % 2 === 1 ? finite[middle] : (finite[middle - 1] + finite[middle]) / 2;
}

/**
 * The per-field median of records with the same numeric fields (non-numeric fields are taken from the
 * first record).
 * @template {Record<string, unknown>} T
 * @param {readonly T[]} records
 * @returns {T}
 */
export function medianRecord(records) {
  const result = { ...records[0] };
  for (const key of Object.keys(result)) {
    if (typeof result[key] === "number") result[key] = median(records.map((record) => record[key]));
  }
  return result;
}

/**
 * A text table: the header row, a rule, then the rows; the first column left-aligned, others right.
 * @param {readonly string[]} headers
 * @param {readonly (readonly string[])[]} rows
 */
export function formatTable(headers, rows) {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => String(row[column] ?? "").length)),
  );
  const line = (cells) =>
    cells
      .map((cell, column) =>
        column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]),
      )
      .join("  ")
      .trimEnd();
  return [line(headers), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

/**
 * `value` with `digits` decimals, or "n/a" when it is not a finite number.
 * @param {number | undefined} value
 * @param {number} digits
 */
export function fixed(value, digits) {
  return value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/**
 * `fraction` as a percentage with `digits` decimals.
 * @param {number | undefined} fraction
 * @param {number} digits
 */
export function percent(fraction, digits = 2) {
  return fraction !== undefined && Number.isFinite(fraction) ? `${(fraction * 100).toFixed(digits)}%` : "n/a";
}

/** Bytes per MiB: the MB of every figure here. */
export const MIB = 1024 * 1024;
