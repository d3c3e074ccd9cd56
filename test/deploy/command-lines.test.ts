import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleTarget, healthzUrl, withConfigFile } from "../../deploy/healthcheck.mjs";
import { type AgentOptions, validateAgentOptions } from "../../src/agent/agent-options.js";
import { systemClock } from "../../src/clock.js";
import { AgentMetrics } from "../../src/console/agent-metrics.js";
import { ConsoleServer, FetchActivity } from "../../src/console/index.js";
import { createClusterCertificates } from "../../src/security/index.js";
import { parseHostPort } from "../../src/transport/index.js";
import { UBICRAWL_BIN } from "../agent/harness.js";
import { ubicrawlInProcess } from "../support/in-process-cli.js";
import {
  composeFile,
  DEPLOY_DIR,
  type Doc,
  dockerfileInstructions,
  execForm,
  expandKubernetesVars,
  manifestOfKind,
  parseAgentCommand,
} from "./deploy-files.js";

const HEALTHCHECK = join(DEPLOY_DIR, "healthcheck.mjs");

/** Every agent command line of deploy/: the compose services' and the StatefulSet's for each pod. */
function agentCommandLines(): { where: string; words: string[] }[] {
  const lines: { where: string; words: string[] }[] = [];
  for (const [name, service] of Object.entries<Doc>(composeFile().services)) {
    lines.push({ where: `compose ${name}`, words: service.command });
  }
  const statefulSet = manifestOfKind("StatefulSet");
  const container = statefulSet.spec.template.spec.containers[0];
  for (let ordinal = 0; ordinal < statefulSet.spec.replicas; ordinal++) {
    const env = { POD_NAME: `${statefulSet.metadata.name}-${ordinal}`, POD_NAMESPACE: "ubicrawl" };
    lines.push({
      where: `StatefulSet pod ${ordinal}`,
      words: expandKubernetesVars([...(container.command ?? []), ...container.args], env),
    });
  }
  return lines;
}

/** The Dockerfile's runtime stage (the last one). */
function runtimeStage() {
  const instructions = dockerfileInstructions();
  const last = Math.max(...instructions.map((instruction) => instruction.stage));
  return instructions.filter((instruction) => instruction.stage === last);
}

function args(keyword: string) {
  return runtimeStage()
    .filter((instruction) => instruction.keyword === keyword)
    .map((instruction) => instruction.args);
}

/** Runs the health check script; its exit code and output. */
function runHealthcheck(
  argv: readonly string[],
  cwd?: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HEALTHCHECK, ...argv], {
      stdio: ["ignore", "pipe", "pipe"],
      ...(cwd === undefined ? {} : { cwd }),
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("the agent command lines of deploy/", () => {
  const lines = agentCommandLines();

  it("are accepted by the agent's own flag parser, with values it takes", () => {
    expect(lines).toHaveLength(6);
    for (const { where, words } of lines) {
      const flags = parseAgentCommand(words);
      expect(flags.positionals, where).toEqual([]);
      expect(flags.help, where).toBe(false);
      expect(
        () => validateAgentOptions({ id: flags.id, dataDir: flags.data } as AgentOptions),
        where,
      ).not.toThrow();
      expect(flags.data, where).toBe("/data");
      expect(["leave", "hold"], where).toContain(flags["on-stop"]);
      expect(["auto", "line", "log", "off"], where).toContain(flags.progress);
      for (const address of [flags.listen, flags.http]) {
        expect(parseHostPort(address ?? "", true), `${where}: ${address}`).toBeDefined();
      }
      for (const address of [flags.advertise, ...flags.join.flatMap((join) => join.split(","))]) {
        expect(parseHostPort(address ?? ""), `${where}: ${address}`).toBeDefined();
      }
      expect([flags["tls-ca"], flags["tls-cert"], flags["tls-key"]].every((path) => path !== undefined)).toBe(
        true,
      );
      expect(flags.insecure, where).toBe(false);
      expect(flags["suspect-after-ms"]).toBeGreaterThan(flags["heartbeat-ms"]);
    }
  });

  it("are accepted by the ubicrawl command itself (parsed, then --help)", async () => {
    // The first by the ubicrawl process, the others by its code in this process.
    const [first, ...others] = lines as [(typeof lines)[number], ...typeof lines];
    const run = spawnSync(process.execPath, [UBICRAWL_BIN, ...first.words, "--help"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(run.status, `${first.where}: ${run.stderr}`).toBe(0);
    expect(run.stdout, first.where).toMatch(/^Usage: ubicrawl agent/);
    for (const { where, words } of others) {
      const result = await ubicrawlInProcess([...words, "--help"]);
      expect(result.code, `${where}: ${result.stderr}`).toBe(0);
      expect(result.stdout, where).toMatch(/^Usage: ubicrawl agent/);
    }
  });

  it("serve the console on the port the image exposes, and gRPC too", () => {
    const exposed = args("EXPOSE")
      .flatMap((line) => line.split(/\s+/))
      .map(Number);
    for (const { where, words } of lines) {
      const flags = parseAgentCommand(words);
      expect(exposed, where).toContain(consoleTarget(words.slice(1))?.port);
      expect(exposed, where).toContain(parseHostPort(flags.listen ?? "")?.port);
    }
  });
});

describe("the Dockerfile (deploy/Dockerfile)", () => {
  const instructions = dockerfileInstructions();

  it("builds in stages from an official Node LTS image: npm ci and npm run build, then production deps", () => {
    const froms = instructions.filter((instruction) => instruction.keyword === "FROM");
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) {
      const major = /^node:(\d+)-[a-z]+(?:-slim)?(?:\s+AS\s+\w+)?$/i.exec(from.args)?.[1];
      expect(Number(major) % 2, from.args).toBe(0); // even majors are the LTS lines
    }
    const runs = instructions.filter((instruction) => instruction.keyword === "RUN").map((run) => run.args);
    expect(runs.some((run) => /^npm ci\b/.test(run) && !run.includes("--omit=dev"))).toBe(true);
    expect(runs).toContain("npm run build");
    expect(runs.some((run) => /npm ci --omit=dev/.test(run))).toBe(true);
  });

  it("copies into the runtime stage what the agent reads at run time", () => {
    const copied = args("COPY").map((line) => line.split(/\s+/).filter((word) => !word.startsWith("--")));
    const sources = copied.map((words) => words.slice(0, -1).join(" "));
    for (const needed of [
      "/src/node_modules/",
      "/src/dist/",
      "package.json",
      "bin/",
      "proto/",
      "assets/",
      "deploy/healthcheck.mjs",
    ]) {
      expect(sources, needed).toContain(needed);
    }
    // From the production-only dependencies stage, not the build stage's.
    expect(args("COPY")).toContain("--from=deps /src/node_modules/ node_modules/");
    // The build context lets in exactly those paths (and the sources), never certificates.
    const ignore = readFileSync(join(DEPLOY_DIR, "Dockerfile.dockerignore"), "utf8");
    const allowed = ignore
      .split("\n")
      .filter((line) => line.startsWith("!"))
      .map((line) => line.slice(1));
    for (const path of [
      "package.json",
      "package-lock.json",
      "src",
      "bin",
      "proto",
      "assets",
      "deploy/healthcheck.mjs",
    ]) {
      expect(allowed).toContain(path);
    }
    expect(allowed.filter((path) => path.includes("certs"))).toEqual([]);
  });

  it("runs as a non-root user with /data as a volume, the ubicrawl command as entrypoint", () => {
    const [user] = args("USER");
    expect(Number(user?.split(":")[0])).toBeGreaterThan(0);
    expect(args("VOLUME").map((volume) => execForm(volume))).toEqual([["/data"]]);
    const [workdir] = args("WORKDIR");
    const [entrypoint] = args("ENTRYPOINT").map(execForm);
    expect(entrypoint).toEqual(["node", `${workdir}/bin/ubicrawl`]);
    const [command] = args("CMD").map(execForm);
    expect(command?.[0]).toBe("agent");
    expect(() => parseAgentCommand(command ?? [])).not.toThrow();
  });

  it("checks health with the script it copies, with node (the slim image has no curl)", () => {
    const [healthcheck] = args("HEALTHCHECK");
    const [workdir] = args("WORKDIR");
    const command = execForm(healthcheck?.slice(healthcheck.indexOf("CMD ") + 4) ?? "");
    expect(command).toEqual(["node", `${workdir}/deploy/healthcheck.mjs`]);
    expect(healthcheck).toMatch(/--timeout=\d+s/);
  });
});

describe("the health check (deploy/healthcheck.mjs)", () => {
  let dir: string;
  const servers: ConsoleServer[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-deploy-"));
  });

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function startConsole(tls?: { caPem: string; certPem: string; keyPem: string }): Promise<number> {
    const server = new ConsoleServer(
      { listen: "127.0.0.1:0", ...(tls === undefined ? {} : { tls }) },
      { metrics: new AgentMetrics("h1"), activity: new FetchActivity({}, systemClock), onError: () => {} },
    );
    servers.push(server);
    const address = await server.start();
    return parseHostPort(address)?.port as number;
  }

  it("finds the console of a command line as the agent serves it", () => {
    const tls = ["--listen", "0.0.0.0:7000", "--tls-ca", "c", "--tls-cert", "a.pem", "--tls-key", "a.key"];
    expect(consoleTarget(["--id", "a"])).toBeUndefined();
    expect(consoleTarget(["--http", "0.0.0.0:8080", ...tls])).toEqual({
      host: "127.0.0.1",
      port: 8080,
      https: true,
    });
    expect(consoleTarget(["--http=[::]:8080", ...tls])).toEqual({ host: "::1", port: 8080, https: true });
    // Loopback stays plain HTTP, and so does an agent alone (its --tls-* are for a cluster).
    expect(consoleTarget(["--http", "127.0.0.1:8080", ...tls])?.https).toBe(false);
    expect(consoleTarget(["--http", "0.0.0.0:8080", ...tls.slice(2)])?.https).toBe(false);
    expect(healthzUrl({ host: "::1", port: 8080, https: true })).toBe("https://[::1]:8080/healthz");
  });

  it("passes on a plain console's /healthz, fails when nothing answers, passes with no console", async () => {
    const port = await startConsole();
    const up = await runHealthcheck(["agent", "--id", "a", "--http", `127.0.0.1:${port}`]);
    expect(up, up.output).toMatchObject({ code: 0 });
    expect(up.output).toContain(`http://127.0.0.1:${port}/healthz answered 200`);
    const closed = await startConsole();
    await servers.pop()?.stop();
    const down = await runHealthcheck(["agent", "--id", "a", "--http", `127.0.0.1:${closed}`]);
    expect(down.code, down.output).toBe(1);
    expect((await runHealthcheck(["agent", "--id", "a"])).code).toBe(0);
  });

  it("takes the console from --config as the agent does: the file's --http, the command line winning", async () => {
    const configDir = join(dir, "config");
    await mkdir(configDir, { recursive: true });
    await writeFile(join(configDir, "up.yaml"), "id: a\nhttp: 127.0.0.1:8081\n");
    await writeFile(join(configDir, "down.yaml"), "id: a\nhttp: 127.0.0.1:8082\n");
    // Where the check dials, in process (that it dials there and reports the answer: the tests above).
    const target = async (argv: string[], cwd?: string) => consoleTarget(await withConfigFile(argv, cwd));
    // A relative file is found from the agent's working directory.
    expect(await target(["agent", "--config", "up.yaml"], configDir)).toEqual({
      host: "127.0.0.1",
      port: 8081,
      https: false,
    });
    // An absolute one too: its console is the one asked, not "no console to ask".
    expect((await target(["agent", "--config", join(configDir, "down.yaml")]))?.port).toBe(8082);
    // --http given on the command line wins over the file's.
    const given = await target([
      "agent",
      `--config=${join(configDir, "down.yaml")}`,
      "--http",
      "127.0.0.1:8081",
    ]);
    expect(given?.port).toBe(8081);
    // A file the agent would refuse is reported, not taken as "no console": by the script itself.
    await writeFile(join(configDir, "bad.yaml"), "htp: 127.0.0.1:1\n");
    const bad = await runHealthcheck(["agent", "--config", join(configDir, "bad.yaml")]);
    expect(bad.code, bad.output).toBe(1);
    expect(bad.output).toContain('unknown key "htp"');
  });

  it("passes on an HTTPS console of the cluster's TLS, without a client certificate", async () => {
    const check = spawnSync("openssl", ["version"], { encoding: "utf8" });
    if (check.status !== 0) return; // no openssl to make certificates with (ubicrawl certs needs it)
    const certs = await createClusterCertificates({ outDir: join(dir, "certs"), agents: ["a1"] });
    const files = certs.agents.get("a1");
    if (!files) throw new Error("no certificate for a1");
    const tls = {
      caPem: await readFile(join(dir, "certs", "ca.pem"), "utf8"),
      certPem: await readFile(files.certPath, "utf8"),
      keyPem: await readFile(files.keyPath, "utf8"),
    };
    const port = await startConsole(tls);
    // As in the containers: --http on all addresses with the cluster's TLS (dialed on loopback here).
    const result = await runHealthcheck([
      "agent",
      "--listen",
      "0.0.0.0:7000",
      "--tls-ca",
      "ca.pem",
      "--tls-cert",
      "a1.pem",
      "--tls-key",
      "a1.key",
      "--http",
      `0.0.0.0:${port}`,
    ]);
    expect(result, result.output).toMatchObject({ code: 0 });
    expect(result.output).toContain(`https://127.0.0.1:${port}/healthz answered 200`);
    // The same agent with its cluster flags in a --config file: still HTTPS.
    const config = join(dir, "tls.yaml");
    await writeFile(
      config,
      [
        "listen: 0.0.0.0:7000",
        "tls-ca: ca.pem",
        "tls-cert: a1.pem",
        "tls-key: a1.key",
        `http: 0.0.0.0:${port}`,
        "",
      ].join("\n"),
    );
    const fromFile = await runHealthcheck(["agent", "--config", config]);
    expect(fromFile, fromFile.output).toMatchObject({ code: 0 });
    expect(fromFile.output).toContain(`https://127.0.0.1:${port}/healthz answered 200`);
  });
});
