import { readFile } from "node:fs/promises";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ErrorCode, UbiError } from "../errors.js";
import {
  type FlagSpecs,
  formatInstant,
  type ParsedFlags,
  parseByteRate,
  parseDuration,
  parseFlags,
  parseInstant,
  parseNumber,
} from "../flags/index.js";

/** Flags that steer the reading of a config file and cannot be set in one. */
const NOT_IN_FILES = new Set(["config", "print-config", "help"]);

/** A flag's value as a config file gives it. */
type ConfigValue = string | number | boolean | string[];

/**
 * Parses `argv` like {@link parseFlags}, and when it names `--config FILE` (YAML or JSON: JSON is
 * YAML), takes every flag it does not give from that file: its keys are the flags' names
 * (`delay-ms: 500`, `seeds: [a.txt, b.txt]`). Flags given on the command line win, a repeatable one
 * replacing the file's list. An unknown key or a bad value is refused with `InvalidArgument` naming
 * the key and the file.
 */
export async function parseFlagsWithConfig<S extends FlagSpecs>(
  argv: readonly string[],
  specs: S,
): Promise<ParsedFlags<S>> {
  const flags = parseFlags(argv, specs);
  const path = (flags as Record<string, unknown>).config;
  if (typeof path !== "string") return flags;
  const fromFile = await readConfigFile(path, specs);
  const given = givenFlags(argv);
  const merged: Record<string, unknown> = { ...flags };
  for (const [name, value] of Object.entries(fromFile)) {
    if (!given.has(name)) merged[name] = value;
  }
  return merged as ParsedFlags<S>;
}

/** Reads and checks a config file against `specs`: each key a flag's name, each value of its type. */
export async function readConfigFile(path: string, specs: FlagSpecs): Promise<Record<string, ConfigValue>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw bad(`cannot read --config ${path}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw bad(`--config ${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== "object" || Array.isArray(document)) {
    throw bad(`--config ${path} must be a mapping of flag names to values (e.g. delay-ms: 500)`);
  }
  const values: Record<string, ConfigValue> = {};
  for (const [key, raw] of Object.entries(document)) {
    const spec = specs[key];
    if (spec === undefined || NOT_IN_FILES.has(key)) {
      throw bad(
        `--config ${path}: unknown key "${key}" (the keys are the flags' names without --, see --help)`,
      );
    }
    const wrong = (what: string) =>
      bad(`--config ${path}: "${key}" must be ${what}, got ${JSON.stringify(raw)}`);
    switch (spec.type) {
      case "string":
        if (spec.choices) {
          if (typeof raw !== "string" || !spec.choices.includes(raw)) {
            throw wrong(`one of ${spec.choices.join(", ")}`);
          }
        } else if (typeof raw !== "string" || raw === "") {
          throw wrong("a non-empty string");
        }
        values[key] = raw;
        break;
      case "strings": {
        const list = typeof raw === "string" ? [raw] : raw;
        if (!Array.isArray(list) || list.some((item) => typeof item !== "string" || item === "")) {
          throw wrong("a string or a list of strings");
        }
        values[key] = list as string[];
        break;
      }
      case "boolean":
        if (typeof raw !== "boolean") throw wrong("true or false");
        values[key] = raw;
        break;
      case "byte-rate":
        // A number is bytes per second, as on the command line; a string may name a unit ("5MB/s").
        if ((typeof raw !== "string" && typeof raw !== "number") || raw === "")
          throw wrong("a rate such as 5MB/s");
        values[key] = parseByteRate(String(raw), `--config ${path}: "${key}"`, spec.min);
        break;
      case "duration":
        // A number is milliseconds, as on the command line (and as --print-config writes it).
        if ((typeof raw !== "string" && typeof raw !== "number") || raw === "")
          throw wrong("a duration such as 2s, 10m or 7d");
        values[key] = parseDuration(String(raw), `--config ${path}: "${key}"`);
        break;
      case "time":
        // A string, as --print-config writes it: a number of ms since the epoch is no date to read.
        if (typeof raw !== "string" || raw === "")
          throw wrong("a date and time such as 2026-12-24T18:00:00Z");
        values[key] = parseInstant(raw, `--config ${path}: "${key}"`);
        break;
      case "number":
        if (typeof raw !== "number" && typeof raw !== "string") throw wrong("a number");
        values[key] = parseNumber(String(raw), `--config ${path}: "${key}"`, spec.min);
        break;
      case "integer": {
        const range = `an integer${spec.min === undefined ? "" : ` >= ${spec.min}`}${spec.max === undefined ? "" : ` <= ${spec.max}`}`;
        if (typeof raw !== "number" || !Number.isSafeInteger(raw)) throw wrong(range);
        if ((spec.min !== undefined && raw < spec.min) || (spec.max !== undefined && raw > spec.max)) {
          throw wrong(range);
        }
        values[key] = raw;
        break;
      }
    }
  }
  return values;
}

/**
 * The effective configuration of `flags` as YAML: every flag with a value (defaults included),
 * in a form `--config` reads back.
 */
export function formatConfig(flags: Record<string, unknown>, specs: FlagSpecs): string {
  const effective: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (NOT_IN_FILES.has(name)) continue;
    const value = flags[name];
    if (value === undefined || (spec.type === "strings" && (value as string[]).length === 0)) continue;
    effective[name] = spec.type === "time" ? formatInstant(value as number) : value;
  }
  return stringifyYaml(effective);
}

/** The names of the flags `argv` gives (it parsed already, so every `--name` is a known flag). */
function givenFlags(argv: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const word of argv) {
    if (!word.startsWith("--")) continue;
    const eq = word.indexOf("=");
    names.add(word.slice(2, eq < 0 ? undefined : eq));
  }
  return names;
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}
