import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "csv-stringify/sync";
import type { ExperimentResult, Table } from "./experiment.js";
import { renderSvg } from "./plot.js";

/** How a report was made: for its header, so a report says how to make it again. */
export interface RunInfo {
  /** The command line, as typed. */
  readonly command: string;
  readonly startedAt: Date;
  readonly seconds: number;
  /** Node.js version and machine, e.g. `v20.20.2, 2 CPUs`. */
  readonly platform: string;
}

/**
 * Writes `result` under `outDir`: each table as `<name>.csv`, each plot as `<name>.svg`, and
 * `report.md` (method, parameters, the claims checked, sections, plots, the tables' files). Returns the
 * files written, report first.
 */
export async function writeReport(outDir: string, result: ExperimentResult, run: RunInfo): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const table of result.tables) {
    const path = join(outDir, `${table.name}.csv`);
    await writeFile(path, stringify([table.columns, ...table.rows]));
    written.push(path);
  }
  for (const plot of result.plots) {
    const path = join(outDir, `${plot.name}.svg`);
    await writeFile(path, await renderSvg(plot.spec));
    written.push(path);
  }
  const report = join(outDir, "report.md");
  await writeFile(report, reportMarkdown(result, run));
  return [report, ...written];
}

function reportMarkdown(result: ExperimentResult, run: RunInfo): string {
  const held = result.checks.filter((check) => check.holds).length;
  const lines = [
    `# ${result.title}`,
    "",
    `\`${run.command}\` — ${run.startedAt.toISOString()}, ${run.seconds.toFixed(1)} s, ${run.platform}.`,
    "",
    "## Method",
    "",
    result.method,
    "",
    "## Parameters",
    "",
    markdownTable(
      ["parameter", "value"],
      Object.entries(result.parameters).map(([name, value]) => [name, String(value)]),
    ),
    "",
    `## The papers' claims: ${held} of ${result.checks.length} hold`,
    "",
    markdownTable(
      ["claim", "holds", "figures"],
      result.checks.map((check) => [check.claim, check.holds ? "yes" : "**no**", check.detail]),
    ),
    "",
  ];
  for (const section of result.sections) lines.push(`## ${section.heading}`, "", section.body, "");
  if (result.plots.length > 0) {
    lines.push("## Plots", "");
    for (const plot of result.plots)
      lines.push(`![${plot.title}](${plot.name}.svg)`, "", `*${plot.title}*`, "");
  }
  lines.push(
    "## Data",
    "",
    ...result.tables.map(
      (table) => `- \`${table.name}.csv\`: ${table.columns.join(", ")} (${table.rows.length} rows)`,
    ),
    "",
  );
  return lines.join("\n");
}

/** A Markdown table; `|` in cells is escaped. */
export function markdownTable(
  columns: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cell = (value: string | number) => String(value).replaceAll("|", "\\|");
  return [
    `| ${columns.map(cell).join(" | ")} |`,
    `| ${columns.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ].join("\n");
}

/**
 * A Markdown table of one figure per agent count (rows) and series (columns): the experiments' "by
 * agents" sections. `figure` gives the cell of a count and a series, undefined (an empty cell) where
 * that pair was not run.
 */
export function byAgentsTable<S extends string>(
  agentCounts: readonly number[],
  series: readonly S[],
  label: (each: S) => string,
  figure: (agents: number, each: S) => string | undefined,
): string {
  return markdownTable(
    ["agents", ...series.map(label)],
    agentCounts.map((agents) => [String(agents), ...series.map((each) => figure(agents, each) ?? "")]),
  );
}

/** `table` as aligned text columns (numbers right-aligned), for the terminal. */
export function formatTextTable(table: Table): string {
  const cells = [table.columns.map(String), ...table.rows.map((row) => row.map(String))];
  const widths = table.columns.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? "").length)));
  const numeric = table.columns.map((_, c) => table.rows.every((row) => typeof row[c] === "number"));
  const line = (row: readonly string[]) =>
    row
      .map((value, c) => (numeric[c] ? value.padStart(widths[c] ?? 0) : value.padEnd(widths[c] ?? 0)))
      .join("  ");
  return [
    line(cells[0] ?? []),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.slice(1).map(line),
  ].join("\n");
}
