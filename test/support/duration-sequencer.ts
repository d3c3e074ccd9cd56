import { existsSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { DURATIONS_FILE, longestFirst, parseDurations } from "./longest-first.js";

/**
 * Vitest's sequencer with each tier's files started longest first, by test/durations.json
 * (longest-first.ts says why and where unlisted files go). Vitest's own sort runs first: it keeps the
 * tiers' order (`sequence.groupOrder`), and its order of the unlisted files is theirs (by the results
 * cache's durations when there is one, else larger files first). A file that failed in the last run
 * (the results cache says so) counts as unlisted, so it starts first, as vitest would run it.
 * Sharding is vitest's.
 */
export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const byVitest = await super.sort(files);
    const root = this.ctx.config.root;
    const table = join(root, DURATIONS_FILE);
    const durations = existsSync(table)
      ? parseDurations(readFileSync(table, "utf8"))
      : new Map<string, number>();
    return longestFirst(byVitest, (spec) => {
      const file = relative(root, spec.moduleId).split(sep).join("/");
      const failed = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.failed === true;
      return { project: spec.project.name, seconds: failed ? undefined : durations.get(file) };
    });
  }
}
