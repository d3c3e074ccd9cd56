import { relative } from "node:path";
import type { Reporter, TestCase, TestModule } from "vitest/node";

/**
 * Names, at the end of a run, each test that failed and then passed when retried (CI retries the
 * system and timed tiers once: vitest.config.ts), with the error of its failed try. A retry keeps a
 * loaded shared machine's late timer from failing the run; this keeps the flake in sight, to be fixed.
 */
export default class FlakyReporter implements Reporter {
  readonly #flaky: TestCase[] = [];

  onTestCaseResult(testCase: TestCase): void {
    if (testCase.result().state === "passed" && testCase.diagnostic()?.flaky === true) {
      this.#flaky.push(testCase);
    }
  }

  onTestRunEnd(_modules: readonly TestModule[]): void {
    if (this.#flaky.length === 0) return;
    const lines = [`\nflaky: ${this.#flaky.length} test(s) failed, then passed when retried:`];
    for (const testCase of this.#flaky) {
      const retries = testCase.diagnostic()?.retryCount ?? 0;
      const result = testCase.result();
      const error = result.state === "passed" ? result.errors?.[0]?.message.split("\n")[0] : undefined;
      lines.push(
        `  ${relative(process.cwd(), testCase.module.moduleId)} > ${testCase.fullName} (retried ${retries}×)`,
      );
      if (error) lines.push(`    first try: ${error}`);
    }
    console.log(lines.join("\n"));
  }
}
