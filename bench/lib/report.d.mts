/** The median of `values` (mean of the middle two for an even count); NaN when none is finite. */
export function median(values: readonly number[]): number;
/** The per-field median of records with the same numeric fields. */
export function medianRecord<T extends Record<string, unknown>>(records: readonly T[]): T;
/** A text table: header, rule, rows; first column left-aligned, the others right-aligned. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string;
/** `value` with `digits` decimals, or "n/a". */
export function fixed(value: number | undefined, digits: number): string;
/** `fraction` as a percentage, or "n/a". */
export function percent(fraction: number | undefined, digits?: number): string;
/** Bytes per MiB. */
export const MIB: number;
