import { execFile } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { certsCommand } from "../../src/cli/certs-command.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { createClusterCertificates, KEY_FILE_MODE, subjectAltNames } from "../../src/security/index.js";
import { runUbicrawl } from "../agent/harness.js";
import { type InProcessRun, ubicrawlInProcess } from "../support/in-process-cli.js";

const run = promisify(execFile);
const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "ubicrawl-certs-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** `openssl verify` against the CA for a TLS purpose; true when openssl says OK. */
async function verifies(ca: string, cert: string, purpose: "sslserver" | "sslclient"): Promise<boolean> {
  try {
    const { stdout } = await run("openssl", ["verify", "-CAfile", ca, "-purpose", purpose, cert]);
    return stdout.trim() === `${cert}: OK`;
  } catch {
    return false;
  }
}

async function certs(args: readonly string[]) {
  return runUbicrawl(["certs", ...args], { cwd: root }).waitForExit(30_000);
}

/** `ubicrawl certs ARGS…` in this process (as `main` runs it): its exit code and output. */
function certsInProcess(args: readonly string[]): Promise<InProcessRun> {
  return ubicrawlInProcess(["certs", ...args]);
}

/** `text` as it reads, inside a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function certificate(path: string): Promise<X509Certificate> {
  return new X509Certificate(await readFile(path));
}

describe("ubicrawl certs", () => {
  it("makes a CA, agent and operator certificates that openssl verifies, with 0600 keys", async () => {
    const out = join(root, "cluster");
    const result = await certs([
      "--out",
      out,
      "--agents",
      "a1,a2",
      "--hosts",
      "127.0.0.1,localhost,node-1.lan",
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/created CA/);
    // Paths under the working directory are shown relative to it.
    expect(result.stdout).toMatch(/^created agent a1: cluster\/a1\.pem cluster\/a1\.key$/m);
    expect((await readdir(out)).sort()).toEqual(
      ["a1.key", "a1.pem", "a2.key", "a2.pem", "ca.key", "ca.pem", "operator.key", "operator.pem"].sort(),
    );
    for (const key of ["ca.key", "a1.key", "a2.key", "operator.key"]) {
      expect(((await stat(join(out, key))).mode & 0o777).toString(8), key).toBe(KEY_FILE_MODE.toString(8));
    }
    const ca = join(out, "ca.pem");
    for (const agent of ["a1", "a2"]) {
      const pem = join(out, `${agent}.pem`);
      expect(await verifies(ca, pem, "sslserver"), agent).toBe(true);
      expect(await verifies(ca, pem, "sslclient"), agent).toBe(true);
      const cert = await certificate(pem);
      expect(cert.subject).toContain(`CN=${agent}`);
      expect(cert.subjectAltName).toBe("IP Address:127.0.0.1, DNS:localhost, DNS:node-1.lan");
      expect(cert.keyUsage?.sort()).toEqual([SERVER_AUTH, CLIENT_AUTH].sort());
      expect(cert.ca).toBe(false);
      expect(cert.checkPrivateKey(createPrivateKey(await readFile(join(out, `${agent}.key`))))).toBe(true);
    }
    // The operator may only be a client: it cannot pose as an agent's server.
    const operator = join(out, "operator.pem");
    expect(await verifies(ca, operator, "sslclient")).toBe(true);
    expect(await verifies(ca, operator, "sslserver")).toBe(false);
    expect((await certificate(operator)).keyUsage).toEqual([CLIENT_AUTH]);
    expect((await certificate(ca)).ca).toBe(true);
    // Nothing half-made is left behind.
    expect((await readdir(out)).some((name) => name.startsWith("."))).toBe(false);
  });

  it("reuses the CA in --out to add agents later, and defaults to the loopback names (in process)", async () => {
    const out = join(root, "grow");
    expect((await certsInProcess(["--out", out, "--agents", "a1"])).code).toBe(0);
    const caBefore = await readFile(join(out, "ca.pem"), "utf8");
    const a1Before = await readFile(join(out, "a1.pem"), "utf8");
    const given = ["a1.pem", "a1.key", "operator.pem", "operator.key"];
    const before = await Promise.all(given.map((name) => readFile(join(out, name), "utf8")));
    const again = await certsInProcess(["--out", out, "--agents", "a2", "--days", "30"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/reused CA/);
    // The operator's certificate, handed out already, is kept, and the run says so.
    // Outside the working directory (the repository's, in process), paths are shown whole.
    expect(again.stdout).toMatch(
      new RegExp(`^created agent a2: ${literal(out)}/a2\\.pem ${literal(out)}/a2\\.key$`, "m"),
    );
    expect(again.stdout).toMatch(
      new RegExp(
        `^kept operator: ${literal(out)}/operator\\.pem ${literal(out)}/operator\\.key \\(as it was, valid until \\w+ +\\d+ [\\d:]+ \\d{4} GMT\\)$`,
        "m",
      ),
    );
    expect(again.stdout).toContain(`kept 1 certificate already in ${out}, made 1; to issue one again`);
    // Asked again for a1 with a new one: a1 is kept (key and all), a3 made.
    const more = await certsInProcess(["--out", out, "--agents", "a1,a3"]);
    expect(more.code, more.stderr).toBe(0);
    expect(more.stdout).toMatch(
      new RegExp(`^kept agent a1: ${literal(out)}/a1\\.pem ${literal(out)}/a1\\.key \\(as it was`, "m"),
    );
    expect(more.stdout).toMatch(/^created agent a3: /m);
    expect(more.stdout).toContain(`kept 2 certificates already in ${out}, made 1`);
    expect(await Promise.all(given.map((name) => readFile(join(out, name), "utf8")))).toEqual(before);
    expect(await verifies(join(out, "ca.pem"), join(out, "a3.pem"), "sslserver")).toBe(true);
    expect(await readFile(join(out, "ca.pem"), "utf8")).toBe(caBefore);
    expect(await readFile(join(out, "a1.pem"), "utf8")).toBe(a1Before);
    expect(await verifies(join(out, "ca.pem"), join(out, "a1.pem"), "sslserver")).toBe(true);
    expect(await verifies(join(out, "ca.pem"), join(out, "a2.pem"), "sslserver")).toBe(true);
    const a2 = await certificate(join(out, "a2.pem"));
    expect(a2.subjectAltName).toMatch(
      /^IP Address:127\.0\.0\.1, IP Address:(0:0:0:0:0:0:0:1|::1), DNS:localhost$/,
    );
    const days = (Date.parse(a2.validTo) - Date.parse(a2.validFrom)) / 86_400_000;
    expect(days).toBe(30);
  });

  it("refuses bad ids, hosts and flags (exit code 2) before writing anything", async () => {
    const out = join(root, "bad");
    const cli = await certs(["--out", out, "--agents", "../escape"]);
    expect(cli.code, cli.stderr).toBe(2);
    expect(cli.stderr).toMatch(/\[UBI_ERR_INVALID_ARGUMENT\]/);
    // The rest in-process: the same command function, without a process start each.
    for (const args of [
      ["--agents", "ca"],
      ["--agents", "operator"],
      ["--agents", "a1", "--hosts", "not a host!"],
      ["--agents", "a1", "--days", "0"],
      ["--agents", "a1", "--bogus"],
      ["stray", "--agents", "a1"],
      ["--no-operator"],
    ]) {
      const error = await certsCommand(["--out", out, ...args]).catch((caught: unknown) => caught);
      expect(isUbiError(error, ErrorCode.InvalidArgument), args.join(" ")).toBe(true);
    }
    const noOut = await certsCommand(["--agents", "a1"]).catch((caught: unknown) => caught);
    expect(isUbiError(noOut, ErrorCode.InvalidArgument)).toBe(true);
    await expect(stat(out)).rejects.toThrow();
  });

  it("fails clearly without openssl, with a lone CA file, or with a CA key that is not the CA's", async () => {
    const missing = await certsInProcess([
      "--out",
      join(root, "no-openssl"),
      "--agents",
      "a1",
      "--openssl",
      "/nonexistent/openssl",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/openssl command was not found.*\[UBI_ERR_CERTIFICATE\]/);
    expect(await readdir(join(root, "no-openssl"))).toEqual([]);

    const certificateError = (outDir: string, agents: string[]) =>
      createClusterCertificates({ outDir, agents }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
    const lone = join(root, "lone");
    await createClusterCertificates({ outDir: lone, agents: ["a1"] });
    await rm(join(lone, "ca.key"));
    const loneError = await certificateError(lone, ["a2"]);
    expect(isUbiError(loneError, ErrorCode.CertificateFailed), String(loneError)).toBe(true);
    expect(String(loneError)).toMatch(/ca\.pem but not ca\.key/);
    await expect(stat(join(lone, "a2.pem"))).rejects.toThrow();

    const other = join(root, "other");
    await createClusterCertificates({ outDir: other, agents: ["a1"] });
    await copyFile(join(root, "cluster", "ca.key"), join(other, "ca.key"));
    const mismatch = await certificateError(other, ["a2"]);
    expect(isUbiError(mismatch, ErrorCode.CertificateFailed), String(mismatch)).toBe(true);
    expect(String(mismatch)).toMatch(/is not the key of/);
    expect((await readdir(other)).some((name) => name.startsWith("."))).toBe(false);
  });

  it("refuses to keep a pair it cannot vouch for, issuing nothing, and says how to issue it again", async () => {
    const certificateError = (outDir: string, agents: string[]) =>
      createClusterCertificates({ outDir, agents }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
    const folder = join(root, "vouch");
    await createClusterCertificates({ outDir: folder, agents: ["a1", "a2"] });
    const foreign = join(root, "vouch-foreign");
    await createClusterCertificates({ outDir: foreign, agents: ["a1"], operator: false });
    const cases: [string, () => Promise<void>, RegExp][] = [
      [
        "a lone key",
        () => rm(join(folder, "a1.pem")),
        /has a1\.key but not a1\.pem; restore the missing file, or remove a1\.pem and a1\.key/,
      ],
      [
        "another CA's certificate",
        async () => {
          await copyFile(join(foreign, "a1.pem"), join(folder, "a1.pem"));
          await copyFile(join(foreign, "a1.key"), join(folder, "a1.key"));
        },
        /a1\.pem was not signed by the CA .*ca\.pem; remove a1\.pem and a1\.key to issue a1's certificate again/,
      ],
      [
        "another agent's key",
        async () => {
          await createClusterCertificates({ outDir: folder, agents: ["a1"], operator: false });
          await copyFile(join(folder, "a2.key"), join(folder, "a1.key"));
        },
        /a1\.key is not the key of .*a1\.pem; remove a1\.pem and a1\.key/,
      ],
    ];
    for (const [what, damage, message] of cases) {
      await rm(join(folder, "a1.pem"), { force: true });
      await rm(join(folder, "a1.key"), { force: true });
      await createClusterCertificates({ outDir: folder, agents: ["a1"], operator: false });
      await damage();
      const error = await certificateError(folder, ["a3", "a1"]);
      expect(isUbiError(error, ErrorCode.CertificateFailed), `${what}: ${String(error)}`).toBe(true);
      expect(String(error), what).toMatch(message);
      // Checked before anything was issued: a3, asked for first, was not made.
      await expect(stat(join(folder, "a3.pem")), what).rejects.toThrow();
    }
    // Without the CA that signed them, nothing is kept or made, and no new CA either.
    const orphan = join(root, "vouch-orphan");
    await createClusterCertificates({ outDir: orphan, agents: ["a1"], operator: false });
    await rm(join(orphan, "ca.pem"));
    await rm(join(orphan, "ca.key"));
    const orphanError = await certificateError(orphan, ["a1", "a2"]);
    expect(isUbiError(orphanError, ErrorCode.CertificateFailed), String(orphanError)).toBe(true);
    expect(String(orphanError)).toMatch(/has a1\.pem, a1\.key but no ca\.pem and ca\.key, which signed them/);
    expect((await readdir(orphan)).sort()).toEqual(["a1.key", "a1.pem"]);
    // Removing the pair, as the message says, issues it again.
    await rm(join(folder, "a1.pem"));
    await rm(join(folder, "a1.key"));
    const again = await createClusterCertificates({ outDir: folder, agents: ["a1"] });
    expect(again.agents.get("a1")?.created).toBe(true);
    expect(again.operator?.created).toBe(false);
    expect(await verifies(join(folder, "ca.pem"), join(folder, "a1.pem"), "sslclient")).toBe(true);
  });

  it("documents itself in --help and in the command list (in process)", async () => {
    const help = await ubicrawlInProcess(["certs", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--out DIR/);
    expect(help.stdout).toMatch(/--tls-cert DIR\/<id>\.pem/);
    expect(help.stdout).toMatch(/certificates already there\s+\(agents' and operator's\) are kept/);
    const list = await ubicrawlInProcess(["--help"]);
    expect(list.stdout).toMatch(/certs\s+make the CA/);
  });
});

describe("createClusterCertificates", () => {
  it("checks its options before touching the disk", async () => {
    const out = join(root, "options");
    const attempts = [
      { outDir: out, agents: ["a1"], days: 1.5 },
      { outDir: out, agents: ["a/b"] },
      { outDir: out, agents: [".."] },
      { outDir: out, agents: ["a1"], hosts: [] },
      { outDir: "", agents: ["a1"] },
    ];
    for (const options of attempts) {
      const error = await createClusterCertificates(options).catch((caught: unknown) => caught);
      expect(isUbiError(error, ErrorCode.InvalidArgument), JSON.stringify(options)).toBe(true);
    }
    await expect(stat(out)).rejects.toThrow();
  });

  it("issues only what it is asked for", async () => {
    const made = await createClusterCertificates({
      outDir: join(root, "lib"),
      agents: ["x"],
      operator: false,
    });
    expect(made.ca.created).toBe(true);
    expect(made.operator).toBeUndefined();
    expect([...made.agents.keys()]).toEqual(["x"]);
    expect((await readdir(join(root, "lib"))).sort()).toEqual(["ca.key", "ca.pem", "x.key", "x.pem"]);
    await writeFile(join(root, "lib", "note"), "kept");
    const again = await createClusterCertificates({ outDir: join(root, "lib"), agents: [] });
    expect(again.ca.created).toBe(false);
    expect(again.operator?.certPath).toBe(join(root, "lib", "operator.pem"));
    expect(again.operator?.created).toBe(true);
    const third = await createClusterCertificates({ outDir: join(root, "lib"), agents: ["x"] });
    expect(third.operator?.created).toBe(false);
    expect(third.agents.get("x")?.created).toBe(false);
  });
});

describe("subjectAltNames", () => {
  it("turns IPs and names into SAN entries, without duplicates", () => {
    expect(subjectAltNames(["127.0.0.1", "[::1]", "LocalHost", "localhost.", "a-b.example.org"])).toBe(
      "IP:127.0.0.1,IP:::1,DNS:localhost,DNS:a-b.example.org",
    );
  });

  it("refuses what is neither an IP nor a DNS name", () => {
    for (const bad of [
      "",
      "a b",
      "-lead.example",
      "x..y",
      "under_score.example",
      `${"a".repeat(64)}.example`,
    ]) {
      expect(() => subjectAltNames([bad]), bad).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
    expect(() => subjectAltNames([])).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
  });
});
