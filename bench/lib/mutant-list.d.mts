/** A hand-written mutant of bench/mutants.mjs. */
export interface Mutant {
  readonly name: string;
  /** The guarantee it breaks. */
  readonly claim: string;
  /** The file it changes, from the repository's root. */
  readonly file: string;
  /** Text found exactly once in `file`… */
  readonly from: string;
  /** …and what it becomes. */
  readonly to: string;
  /** Test files and names of tests in them, at least one of which must then fail. */
  readonly tests: readonly (readonly [string, string])[];
}

/** The mutants, in the order they run. */
export const MUTANTS: readonly Mutant[];
