import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MUTANTS } from "../../bench/lib/mutant-list.mjs";

/**
 * bench/mutants.mjs runs on demand, not in CI: its mutants are checked here against the tree, so a
 * moved line or a renamed test shows at once rather than at the next mutants run.
 */

const REPO = join(import.meta.dirname, "..", "..");

describe("the hand-written mutants", () => {
  it.each(MUTANTS.map((mutant) => [mutant.name, mutant] as const))(
    "%s finds its text once and names tests that exist",
    (_name, mutant) => {
      const source = readFileSync(join(REPO, mutant.file), "utf8");
      expect(source.split(mutant.from).length - 1).toBe(1);
      expect(mutant.to).not.toBe(mutant.from);
      for (const [file, name] of mutant.tests) {
        expect(readFileSync(join(REPO, file), "utf8"), `${file} names "${name}"`).toContain(name);
      }
    },
  );
});
