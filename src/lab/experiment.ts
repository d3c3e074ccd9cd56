import type { TopLevelSpec } from "vega-lite";
import type { FlagSpecs, ParsedFlags } from "../flags/index.js";

/**
 * The crawl laboratory's shape: an experiment reproduces a measurement of the papers ubicrawl comes from
 * and returns what its report is made of — tables (CSV), plots (SVG), the paper's claims checked against
 * the figures, and the text around them.
 */

/** A table of figures: written as `<name>.csv`. */
export interface Table {
  /** File name without `.csv`; the first table of a result is its main one, `summary`. */
  readonly name: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
}

/** A plot: a Vega-Lite specification with its data inline, rendered to `<name>.svg`. */
export interface Plot {
  readonly name: string;
  /** Its caption in the report. */
  readonly title: string;
  readonly spec: TopLevelSpec;
}

/** One claim of a paper, checked against this run's figures. */
export interface Check {
  /** The claim, as the paper makes it (and who makes it). */
  readonly claim: string;
  readonly holds: boolean;
  /** The figures it was judged on. */
  readonly detail: string;
}

/** A part of the report: a heading and Markdown text (tables included). */
export interface Section {
  readonly heading: string;
  readonly body: string;
}

/** What an experiment found, for {@link writeReport}. */
export interface ExperimentResult {
  readonly title: string;
  /** What was done, in a paragraph or two of Markdown. */
  readonly method: string;
  /** The parameters of the run, as given or defaulted. */
  readonly parameters: Readonly<Record<string, string | number>>;
  /** The first is the main table (`summary.csv`, printed at the end of the run). */
  readonly tables: readonly Table[];
  readonly plots: readonly Plot[];
  readonly checks: readonly Check[];
  readonly sections: readonly Section[];
}

/** What an experiment gets besides its flags. */
export interface ExperimentContext {
  /** Progress lines (on stderr), for a run that takes a while. */
  progress(line: string): void;
}

/** One `ubicrawl experiment NAME`. */
export interface Experiment<F extends FlagSpecs = FlagSpecs> {
  readonly name: string;
  /** One line, for the list of experiments. */
  readonly summary: string;
  /** Its `--help` text. */
  readonly description: string;
  /** Its flags besides `--out`. */
  readonly flags: F;
  run(flags: ParsedFlags<F>, context: ExperimentContext): Promise<ExperimentResult>;
}
