import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { LOOPBACK_CIDR, readCrawlLogOf, runUbicrawl, startWebFixture } from "../agent/harness.js";
import { tempFiles } from "../support/temp-files.js";

/** `ubicrawl agent` with `args`; its exit code and output. */
async function agent(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runUbicrawl(["agent", ...args]).waitForExit(60_000);
}

/**
 * `ubicrawl agent --config` as a real process, once each: a file's configuration printed, a bad file
 * refused, a crawl configured by a file alone. Every other case, in process: test/commands/agent-config.test.ts.
 */
describe("ubicrawl agent --config", () => {
  const temp = tempFiles("ubicrawl-config-");
  const file = temp.file;

  it("prints the configuration a YAML file gives, with the defaults, on stdout", async () => {
    const seeds = await file("one.txt", "http://a.test/\n");
    const config = await file(
      "agent.yaml",
      ["id: a1", "data: ./a1", "delay-ms: 250", `seeds: [${seeds}]`, ""].join("\n"),
    );
    const printed = await agent("--config", config, "--print-config");
    expect(printed.code, printed.stderr).toBe(0);
    const effective = parseYaml(printed.stdout) as Record<string, unknown>;
    expect(effective).toMatchObject({
      id: "a1",
      data: "./a1",
      "delay-ms": 250,
      seeds: [seeds],
      "max-active-hosts": expect.any(Number),
    });
  });

  it("refuses a bad file with exit 2, naming the key and the file on stderr", async () => {
    const config = await file("bad.yaml", "id: a1\ndelay: 100\n");
    const { code, stderr } = await agent("--config", config, "--print-config");
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown key "delay"/);
    expect(stderr).toContain(config);
  });

  it("runs a crawl configured by the file alone", async () => {
    const fixture = await startWebFixture({ hosts: 3, pages: 60, seedCount: 1 });
    try {
      const data = join(fixture.dir, "data");
      const config = await file(
        "crawl.yaml",
        [
          "id: c1",
          `data: ${data}`,
          `seeds: ${fixture.seedsFile}`,
          `hosts-file: ${fixture.hostsFile}`,
          `allow-net: [${LOOPBACK_CIDR}]`,
          "delay-ms: 0",
          "robots-retry-ms: 100",
          "max-robots-attempts: 2",
          "exit-when-done: true",
          "progress: off",
          "",
        ].join("\n"),
      );
      const run = await agent("--config", config);
      expect(run.code, run.stderr).toBe(0);
      const logged = await readCrawlLogOf(data);
      expect(logged.filter((entry) => entry.status > 0).length).toBeGreaterThan(10);
    } finally {
      await fixture.stop();
    }
  });
});
