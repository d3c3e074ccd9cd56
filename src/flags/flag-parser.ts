import { ErrorCode, UbiError } from "../errors.js";
import { parseByteRate } from "./byte-rate.js";
import { parseDuration } from "./duration.js";
import { parseInstant } from "./instant.js";

/** One command-line flag: its type, default and help line. */
export type FlagSpec =
  | {
      readonly type: "string";
      readonly help: string;
      readonly default?: string;
      readonly placeholder?: string;
      /** The only values allowed (listed in the help, checked in flags and config files alike). */
      readonly choices?: readonly string[];
    }
  | { readonly type: "strings"; readonly help: string; readonly placeholder?: string }
  | {
      readonly type: "integer";
      readonly help: string;
      readonly default?: number;
      readonly min?: number;
      readonly max?: number;
      readonly placeholder?: string;
    }
  | {
      /** A rate in bytes per second, given with a unit (`5MB/s`, `512k`, `10Mbit/s`) or as a bare number of bytes. */
      readonly type: "byte-rate";
      readonly help: string;
      /** The least bytes per second accepted: a smaller rate is refused, with what it came to. */
      readonly min?: number;
      readonly placeholder?: string;
    }
  | {
      /** A duration with a unit (`2s`, `10m`, `7d`, see duration.ts), parsed to milliseconds. */
      readonly type: "duration";
      readonly help: string;
      /** As written (`1d`), shown so in the help. */
      readonly default?: string;
      readonly placeholder?: string;
    }
  | {
      /** An instant, ISO 8601 with its offset from UTC (`2026-12-24T18:00:00Z`, see instant.ts), parsed to ms since the epoch. */
      readonly type: "time";
      readonly help: string;
      readonly placeholder?: string;
    }
  | {
      /** A decimal number (`3`, `0.5`). */
      readonly type: "number";
      readonly help: string;
      readonly default?: number;
      /** The least value accepted. */
      readonly min?: number;
      readonly placeholder?: string;
    }
  | { readonly type: "boolean"; readonly help: string };

/** A command's flags, by long name (without `--`). */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** The parsed value type of a spec. */
type ValueOf<S extends FlagSpec> = S extends {
  type: "string";
  default: string;
  choices: readonly (infer C extends string)[];
}
  ? C
  : S extends { type: "string"; default: string }
    ? string
    : S extends { type: "string" }
      ? string | undefined
      : S extends { type: "strings" }
        ? string[]
        : S extends { type: "integer"; default: number }
          ? number
          : S extends { type: "integer" }
            ? number | undefined
            : S extends { type: "byte-rate" }
              ? number | undefined
              : S extends { type: "duration"; default: string }
                ? number
                : S extends { type: "duration" }
                  ? number | undefined
                  : S extends { type: "time" }
                    ? number | undefined
                    : S extends { type: "number"; default: number }
                      ? number
                      : S extends { type: "number" }
                        ? number | undefined
                        : boolean;

/** Parsed flags: one property per spec, plus the positional arguments. */
export type ParsedFlags<S extends FlagSpecs> = { -readonly [K in keyof S]: ValueOf<S[K]> } & {
  readonly positionals: string[];
  readonly help: boolean;
};

/**
 * Parses `argv` against `specs`: `--name value`, `--name=value`, repeated `strings` flags, and for
 * `strings` flags every following word up to the next flag (`--seeds a b c`). Unknown flags, missing
 * values and bad numbers raise `InvalidArgument` errors that name the flag.
 */
export function parseFlags<S extends FlagSpecs>(argv: readonly string[], specs: S): ParsedFlags<S> {
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  let help = false;
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type === "strings") values[name] = [];
    else if (spec.type === "boolean") values[name] = false;
    else if (spec.type === "duration")
      values[name] = spec.default === undefined ? undefined : parseDuration(spec.default, `--${name}`);
    else if (spec.type !== "byte-rate" && spec.type !== "time") values[name] = spec.default;
  }
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === "--help" || word === "-h") {
      help = true;
      continue;
    }
    if (!word.startsWith("--")) {
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const name = word.slice(2, eq < 0 ? undefined : eq);
    const spec = specs[name];
    if (!spec) throw bad(`unknown flag --${name} (see --help)`);
    const inline = eq < 0 ? undefined : word.slice(eq + 1);
    if (spec.type === "boolean") {
      if (inline !== undefined && inline !== "true" && inline !== "false") {
        throw bad(`--${name} takes no value (or =true/=false), got "${inline}"`);
      }
      values[name] = inline !== "false";
      continue;
    }
    if (spec.type === "strings") {
      const list = values[name] as string[];
      if (inline !== undefined) list.push(inline);
      else {
        const start = i;
        while (i + 1 < argv.length && !(argv[i + 1] as string).startsWith("--"))
          list.push(argv[++i] as string);
        if (i === start) throw bad(`--${name} needs a value`);
      }
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined || (inline === undefined && raw.startsWith("--")))
      throw bad(`--${name} needs a value`);
    if (spec.type === "string") {
      if (spec.choices && !spec.choices.includes(raw)) {
        throw bad(`--${name} must be one of ${spec.choices.join(", ")}, got "${raw}"`);
      }
      values[name] = raw;
      continue;
    }
    if (spec.type === "byte-rate") {
      values[name] = parseByteRate(raw, `--${name}`, spec.min);
      continue;
    }
    if (spec.type === "duration") {
      values[name] = parseDuration(raw, `--${name}`);
      continue;
    }
    if (spec.type === "time") {
      values[name] = parseInstant(raw, `--${name}`);
      continue;
    }
    if (spec.type === "number") {
      values[name] = parseNumber(raw, `--${name}`, spec.min);
      continue;
    }
    if (!/^-?\d+$/.test(raw)) throw bad(`--${name} must be an integer, got "${raw}"`);
    const number = Number(raw);
    if (spec.min !== undefined && number < spec.min)
      throw bad(`--${name} must be at least ${spec.min}, got ${raw}`);
    if (spec.max !== undefined && number > spec.max)
      throw bad(`--${name} must be at most ${spec.max}, got ${raw}`);
    values[name] = number;
  }
  return { ...values, positionals, help } as ParsedFlags<S>;
}

/** The help text of a command: usage line, description, then one line per flag with its default. */
export function formatHelp(usage: string, description: string, specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const choices = spec.type === "string" ? spec.choices : undefined;
    const placeholder =
      spec.type === "boolean"
        ? ""
        : ` ${choices ? choices.join("|") : "placeholder" in spec && spec.placeholder ? spec.placeholder : spec.type === "integer" ? "N" : spec.type === "byte-rate" ? "RATE" : spec.type === "duration" ? "DURATION" : spec.type === "time" ? "TIME" : "VALUE"}`;
    const left = `  --${name}${placeholder}`;
    let right = spec.help;
    if ("default" in spec && spec.default !== undefined) right += ` (default: ${spec.default})`;
    if (spec.type === "strings") right += " (repeatable)";
    return [left, right] as const;
  });
  const width = Math.min(34, Math.max(...rows.map(([left]) => left.length)) + 2);
  const lines = rows.map(([left, right]) =>
    left.length + 2 > width ? `${left}\n${" ".repeat(width)}${right}` : left.padEnd(width) + right,
  );
  return `Usage: ${usage}\n\n${description}\n\nFlags:\n${lines.join("\n")}\n  --help${" ".repeat(width - 8)}Show this help\n`;
}

/**
 * Rows of `name` and `summary` as an aligned list, each row indented two spaces and every summary
 * starting in one column, at least two spaces after the longest name (a name as long as any other
 * is still set apart from its summary).
 */
export function formatNameList(rows: readonly (readonly [name: string, summary: string])[]): string {
  const width = Math.max(0, ...rows.map(([name]) => name.length)) + 2;
  return rows.map(([name, summary]) => `  ${name.padEnd(width)}${summary}`).join("\n");
}

/** A decimal number of at least `min` (`3`, `0.5`); `what` names the flag or key in the error. */
export function parseNumber(raw: string, what: string, min?: number): number {
  if (!/^-?(\d+(\.\d*)?|\.\d+)$/.test(raw.trim())) throw bad(`${what} must be a number, got "${raw}"`);
  const value = Number(raw);
  if (min !== undefined && value < min) throw bad(`${what} must be at least ${min}, got ${raw}`);
  return value;
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}
