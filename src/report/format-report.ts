import type { CrawlReport } from "./crawl-tally.js";

/**
 * The report as text lines (no trailing newline), each starting with `indent`: coverage (with a truth),
 * overlap, URLs outside the truth, failures and retries, then a table of the agents' shares.
 */
export function formatReport(report: CrawlReport, indent = "  "): string[] {
  const lines: string[] = [];
  const { coverage } = report;
  if (coverage !== null) {
    lines.push(
      `coverage: ${coverage.covered}/${coverage.truthSize} = ${percent(coverage.fraction)} of the ground truth`,
    );
  }
  lines.push(
    `overlap: ${percent(report.overlap)} (${report.repeatedFetches} repeated fetches of ${report.distinctUrls} URLs; ` +
      `${report.repeatedUrls} URLs fetched more than once)`,
  );
  if (coverage !== null) lines.push(`outside the truth: ${coverage.outsideTruth} URLs fetched`);
  const most = report.mostFailedAttempts;
  lines.push(
    `failures: ${report.failures} (status 0, not retried); retried attempts: ${report.retries}` +
      (most === null ? "" : `; most failed attempts at one URL: ${most.attempts} (${most.url})`),
  );
  const { archives } = report;
  if (archives !== null) {
    lines.push(
      archives.unarchived === 0
        ? `WARC records: every page fetched has one (${archives.files} WARC files read)`
        : `WARC records MISSING: ${archives.unarchived} pages of the crawl logs are in no WARC file ` +
            `(${archives.files} read), e.g. ${archives.examples.join(", ")}; not counted as covered`,
      ...archives.unreadable.map((file) => `WARC file not read to its end: ${file}`),
      ...archives.missingFolders.map(
        (folder) => `WARC folder not found (its agent's pages not checked): ${folder}`,
      ),
    );
  }
  const rows = report.agents.map((agent) => [
    agent.agent,
    String(agent.pages),
    percent(agent.share),
    String(agent.failures),
    String(agent.retries),
    agent.agent === agent.dir ? "" : agent.dir,
  ]);
  lines.push(
    `pages fetched by agent (${report.fetches} in all):`,
    ...table(["agent", "pages", "share", "failures", "retries", "data"], rows).map((row) => `  ${row}`),
  );
  const torn = report.agents.filter((agent) => agent.tornLine).map((agent) => agent.agent);
  if (torn.length > 0) {
    lines.push(`a torn last line was skipped in the crawl log of ${torn.join(", ")} (killed, or running)`);
  }
  return lines.map((line) => indent + line);
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(2)}%`;
}

/** Columns aligned: the first and the last left-aligned, the others right-aligned. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const last = header.length - 1;
  const format = (row: string[]) =>
    row
      .map((cell, column) =>
        column === 0 || column === last
          ? cell.padEnd(widths[column] ?? 0)
          : cell.padStart(widths[column] ?? 0),
      )
      .join("  ")
      .trimEnd();
  return [format(header), ...rows.map(format)];
}
