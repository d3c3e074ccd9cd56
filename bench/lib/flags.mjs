// Flag parsing for the bench scripts: integer flags with defaults and bounds, boolean switches, --help.
import { parseArgs } from "node:util";

/**
 * @typedef {object} FlagSpec
 * @property {"integer" | "boolean" | "string"} type
 * @property {string} help
 * @property {number} [default] default of an integer flag
 * @property {number} [min] smallest accepted integer
 * @property {number} [max] largest accepted integer
 */

/**
 * Parses `argv` against `specs`; prints the usage and exits on --help, throws on a bad value.
 * @param {readonly string[]} argv
 * @param {Record<string, FlagSpec>} specs
 * @param {string} usage first line of --help
 * @returns {Record<string, number | boolean | string | undefined>}
 */
export function parseBenchFlags(argv, specs, usage) {
  const options = { help: { type: "boolean" } };
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = { type: spec.type === "boolean" ? "boolean" : "string" };
  }
  const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  if (values.help) {
    const lines = Object.entries(specs).map(([name, spec]) => {
      const flag = `--${name}${spec.type === "boolean" ? "" : spec.type === "integer" ? " N" : " VALUE"}`;
      const fallback = spec.default === undefined ? "" : ` (default: ${spec.default})`;
      return `  ${flag.padEnd(26)}${spec.help}${fallback}`;
    });
    process.stdout.write(`Usage: ${usage}\n\nFlags:\n${lines.join("\n")}\n`);
    process.exit(0);
  }
  const flags = {};
  for (const [name, spec] of Object.entries(specs)) {
    const raw = values[name];
    if (spec.type === "boolean") flags[name] = raw === true;
    else if (spec.type === "string") flags[name] = raw;
    else if (raw === undefined) flags[name] = spec.default;
    else {
      const value = Number(raw);
      if (
        !Number.isInteger(value) ||
        value < (spec.min ?? 0) ||
        value > (spec.max ?? Number.MAX_SAFE_INTEGER)
      ) {
        throw new Error(
          `--${name} must be an integer in [${spec.min ?? 0}, ${spec.max ?? "∞"}], got "${raw}"`,
        );
      }
      flags[name] = value;
    }
  }
  return flags;
}
