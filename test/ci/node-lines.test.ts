import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, createServer as createTlsServer } from "node:tls";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterCertificates } from "../../src/security/index.js";

/**
 * What differs between the Node.js lines ubicrawl supports (package.json `engines`), checked on each
 * line CI runs: the dependencies' own engine ranges, the line itself, undici (the dependency, whatever
 * Node bundles), the TLS stack's stricter settings, the native LevelDB binding, timers.
 */

const REPO = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  engines: { node: string };
  dependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
};

/** The lowest release of each line the engines range allows (`^20.18.1 || ^22 || …`). */
function lowestOfEachLine(range: string): string[] {
  return new semver.Range(range).set.map((comparators) => {
    const lowest = comparators.find((c) => c.operator === ">=");
    if (!lowest) throw new Error(`no lower bound in ${range}`);
    return lowest.semver.version;
  });
}

describe("the supported Node.js lines", () => {
  /** The packages of the lock (dev ones too with `withDev`) whose engines refuse one of `versions`. */
  function refusedByEngines(versions: readonly string[], withDev: boolean): string[] {
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === "" || (entry.dev && !withDev)) continue;
      const engines = entry.engines;
      const range = Array.isArray(engines) ? undefined : engines?.node;
      if (range === undefined) continue;
      for (const version of versions) {
        if (!semver.satisfies(version, range))
          refused.push(`${path}@${entry.version} wants node ${range}, not ${version}`);
      }
    }
    return refused;
  }

  it("every package the agent installs accepts the lowest release of every line in engines", () => {
    const lowest = lowestOfEachLine(pkg.engines.node);
    expect(lowest.length).toBeGreaterThanOrEqual(4);
    expect(refusedByEngines(lowest, false)).toEqual([]);
  });

  it("the dev dependencies accept this Node.js too: npm ci on this line says no EBADENGINE", () => {
    // As npm judges them: against the running release (each CI line runs this test on its own).
    expect(refusedByEngines([process.version.slice(1)], true)).toEqual([]);
  });

  it("this Node.js is one of them", () => {
    expect(
      semver.satisfies(process.version, pkg.engines.node),
      `${process.version} vs ${pkg.engines.node}`,
    ).toBe(true);
  });

  it("fetches with the undici of its dependencies, not the one this Node bundles", async () => {
    const undici = await import("undici");
    const installed = JSON.parse(
      await readFile(join(REPO, "node_modules", "undici", "package.json"), "utf8"),
    ) as {
      version: string;
    };
    expect(semver.satisfies(installed.version, pkg.dependencies.undici as string)).toBe(true);
    // Node's bundled undici (process.versions.undici) differs by line; the fetcher's Agent is the package's.
    expect(typeof undici.Agent).toBe("function");
    const fetcherSource = await readFile(join(REPO, "src", "fetching", "fetcher.ts"), "utf8");
    expect(fetcherSource).toMatch(/import \{[^}]*\bAgent\b[^}]*\} from "undici";/);
    // No call of the global fetch anywhere (it would use the bundled undici, whatever the line's). A POSIX
    // class: in a bracket expression of git grep -E, \w stands for a backslash and a w.
    const sources = execFileSync("git", ["grep", "-nE", "(^|[^.[:alnum:]_])fetch\\(", "--", "src/*.ts"], {
      cwd: REPO,
      encoding: "utf8",
    }).split("\n");
    expect(sources.filter((line) => line !== "" && !/async fetch\(/.test(line))).toEqual([]);
  });

  it("loads the native LevelDB binding of this line (classic-level's prebuilt binary)", async () => {
    const { Level } = await import("level");
    const dir = await mkdtemp(join(tmpdir(), "ubicrawl-lines-"));
    try {
      const db = new Level<string, string>(dir);
      await db.put("k", "v");
      expect(await db.get("k")).toBe("v");
      await db.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("keeps a timer of the longest delay it sets (the one-hour takeover grace) for an hour, not 1 ms", async () => {
    // setTimeout clamps delays past 2^31 − 1 ms to 1 ms (with a warning): our longest must stay below.
    const hour = 3_600_000;
    let fired = false;
    const timer = setTimeout(() => {
      fired = true;
    }, hour);
    await new Promise((resolve) => setTimeout(resolve, 20));
    clearTimeout(timer);
    expect(fired).toBe(false);
    expect(hour).toBeLessThan(2 ** 31 - 1);
  });
});

describe("mutual TLS under the strictest OpenSSL settings a line may default to", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-lines-tls-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("`ubicrawl certs` keys and signatures pass OpenSSL security level 3, TLS 1.3 only", async () => {
    const certs = await createClusterCertificates({ outDir: join(dir, "certs"), agents: ["a1", "a2"] });
    const files = (id: string) => certs.agents.get(id) as { certPath: string; keyPath: string };
    const read = async (id: string) => ({
      cert: await readFile(files(id).certPath),
      key: await readFile(files(id).keyPath),
    });
    const ca = await readFile(certs.ca.certPath);
    const strict = { ciphers: "DEFAULT@SECLEVEL=3", minVersion: "TLSv1.3" as const };
    const server = createTlsServer({
      ...strict,
      ...(await read("a1")),
      ca,
      requestCert: true,
      rejectUnauthorized: true,
    });
    server.on("secureConnection", (socket) => socket.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const client = await read("a2");
      const answer = await new Promise<{ text: string; protocol: string | null; authorized: boolean }>(
        (resolve, reject) => {
          const socket = connect({
            ...strict,
            host: "127.0.0.1",
            port,
            servername: "localhost",
            ca,
            ...client,
          });
          let text = "";
          socket.setEncoding("utf8");
          socket.on("data", (chunk: string) => {
            text += chunk;
          });
          socket.on("end", () =>
            resolve({ text, protocol: socket.getProtocol(), authorized: socket.authorized }),
          );
          socket.on("error", reject);
        },
      );
      expect(answer).toEqual({ text: "ok", protocol: "TLSv1.3", authorized: true });
    } finally {
      server.close();
    }
  });
});
