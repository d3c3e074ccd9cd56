import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type InProcessRun, ubicrawlInProcess } from "../support/in-process-cli.js";
import { tempFiles } from "../support/temp-files.js";

/**
 * `ubicrawl agent --config` and `--print-config`, run in this process: what a config file may hold,
 * how it merges with the command line, and every refusal's exit code and message. The same with real
 * processes, once each, and a crawl configured by a file alone: test/cli/config-file.test.ts.
 */

/** `ubicrawl agent` with `args`, in this process; its exit code and output. */
function agent(...args: string[]): Promise<InProcessRun> {
  return ubicrawlInProcess(["agent", ...args]);
}

describe("ubicrawl agent --config, in process", () => {
  const temp = tempFiles("ubicrawl-config-");
  const file = temp.file;

  it("takes flags from a YAML file, flags given win, and --print-config shows the result with the defaults", async () => {
    const [one, two, three] = await Promise.all(
      ["one.txt", "two.txt", "three.txt"].map((name) => file(name, "http://a.test/\n")),
    );
    const config = await file(
      "agent.yaml",
      ["id: a1", "data: ./a1", "delay-ms: 250", `seeds: [${one}, ${two}]`, "allow-net: 127.0.0.0/8", ""].join(
        "\n",
      ),
    );
    const printed = await agent("--config", config, "--print-config");
    expect(printed.code, printed.stderr).toBe(0);
    const effective = parseYaml(printed.stdout) as Record<string, unknown>;
    expect(effective).toMatchObject({
      id: "a1",
      data: "./a1",
      "delay-ms": 250,
      seeds: [one, two],
      "allow-net": ["127.0.0.0/8"],
      "max-active-hosts": expect.any(Number),
    });
    expect(effective).not.toHaveProperty("config");

    const overridden = await agent(
      "--config",
      config,
      "--delay-ms",
      "40",
      "--seeds",
      three,
      "--print-config",
    );
    expect(overridden.code).toBe(0);
    expect(parseYaml(overridden.stdout)).toMatchObject({ id: "a1", "delay-ms": 40, seeds: [three] });

    const json = await file("agent.json", JSON.stringify({ id: "j1", data: "./j1", "exit-when-done": true }));
    const fromJson = await agent("--config", json, "--print-config");
    expect(fromJson.code).toBe(0);
    expect(parseYaml(fromJson.stdout)).toMatchObject({ id: "j1", "exit-when-done": true });
  });

  it.each([
    ["an unknown key", "id: a1\ndelay: 100\n", /unknown key "delay"/],
    ["a bad integer", "id: a1\ndelay-ms: fast\n", /"delay-ms" must be an integer >= 0, got "fast"/],
    ["a value out of range", "capacity: 0\n", /"capacity" must be an integer >= 1 <= 1000, got 0/],
    ["a wrong type", "insecure: yes please\n", /"insecure" must be true or false/],
    [
      "a value not among its choices",
      "on-stop: sometimes\n",
      /"on-stop" must be one of leave, hold, got "sometimes"/,
    ],
    ["a log level that does not exist", "log-level: loud\n", /"log-level" must be one of fatal, error, warn/],
    ["a key that steers the reading", "config: other.yaml\n", /unknown key "config"/],
    ["a list at the top", "- id\n- a1\n", /must be a mapping of flag names/],
    ["broken YAML", "id: [a1\n", /is not valid YAML or JSON/],
  ])("refuses %s with exit 2, naming the key and the file", async (_what, text, message) => {
    const config = await file("bad.yaml", text);
    const { code, stderr } = await agent("--config", config, "--print-config");
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).toContain(config);
  });

  it("checks every value before printing the configuration, and creates no data folder for a refused run", async () => {
    const config = await file("odd.yaml", "id: a1\ndata: ./a1\n");
    const printed = await agent("--config", config, "--on-stop", "sometimes", "--print-config");
    expect(printed.code).toBe(2);
    expect(printed.stderr).toMatch(/--on-stop must be one of leave, hold, got "sometimes"/);
    for (const [flags, message] of [
      [["--listen", "1.2.3", "--insecure"], /--listen must be HOST:PORT/],
      [
        ["--listen", "127.0.0.1:0", "--join", "127.0.0.1", "--insecure"],
        /--join: "127.0.0.1" is not HOST:PORT/,
      ],
      [["--http", "0.0.0.0:0"], /not a loopback address: give --http-token-file/],
      [["--http", "127.0.0.1:99999"], /--http must be HOST:PORT/],
      [["--allow-net", "banana"], /banana/],
    ] as const) {
      const data = join(temp.dir, "never-made");
      const run = await agent("--id", "n1", "--data", data, "--seeds", "http://a.test/", ...flags);
      expect(run.code, flags.join(" ")).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(existsSync(data), `${flags.join(" ")} made --data`).toBe(false);
    }
  });

  it("reads max-bandwidth in a file as on the command line: a unit, or a bare number of bytes per second from 1 KB/s", async () => {
    const withUnit = await file("rate-unit.yaml", "id: a1\ndata: ./a1\nmax-bandwidth: 5MB/s\n");
    const printed = await agent("--config", withUnit, "--print-config");
    expect(printed.code, printed.stderr).toBe(0);
    expect(parseYaml(printed.stdout)).toMatchObject({ "max-bandwidth": 5 * 1024 * 1024 });
    // What --print-config writes reads back the same.
    const again = await agent("--config", await file("rate-printed.yaml", printed.stdout), "--print-config");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(printed.stdout);
    // A YAML number is bytes per second, as a bare number on the command line.
    const number = await agent(
      "--config",
      await file("rate-number.yaml", "id: a1\ndata: ./a1\nmax-bandwidth: 2097152\n"),
      "--print-config",
    );
    expect(number.code, number.stderr).toBe(0);
    expect(parseYaml(number.stdout)).toMatchObject({ "max-bandwidth": 2 * 1024 * 1024 });
    for (const value of ["5", '"5"', "512 B/s"]) {
      const config = await file("rate-tiny.yaml", `id: a1\ndata: ./a1\nmax-bandwidth: ${value}\n`);
      const tiny = await agent("--config", config, "--print-config");
      expect(tiny.code, value).toBe(2);
      expect(tiny.stderr).toContain(
        `--config ${config}: "max-bandwidth" must be at least 1KB/s (1,024 bytes per second)`,
      );
    }
    // The command line wins over the file, and is checked the same way.
    const flag = await agent("--config", withUnit, "--max-bandwidth", "5", "--print-config");
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--max-bandwidth must be at least 1KB/s (1,024 bytes per second), got "5"');
    const flagUnit = await agent("--config", withUnit, "--max-bandwidth", "512k", "--print-config");
    expect(flagUnit.code, flagUnit.stderr).toBe(0);
    expect(parseYaml(flagUnit.stdout)).toMatchObject({ "max-bandwidth": 512 * 1024 });
  });

  it("refuses a config file that cannot be read", async () => {
    const { code, stderr } = await agent("--config", join(temp.dir, "missing.yaml"));
    expect(code).toBe(2);
    expect(stderr).toMatch(/cannot read --config .*missing\.yaml/);
  });
});
