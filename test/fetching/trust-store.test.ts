import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import { rootCertificates } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { readCaFiles, trustedCertificates } from "../../src/fetching/index.js";

/** --ca-file: read strictly, and added to Node's trust rather than replacing it. */

let dir: string;
const PEM = `-----BEGIN CERTIFICATE-----\n${"A".repeat(64)}\n-----END CERTIFICATE-----`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-trust-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readCaFiles", () => {
  it("reads every PEM certificate of every file, text around them ignored", async () => {
    await writeFile(
      join(dir, "two.pem"),
      `subject=CA one\n${PEM}\nsubject=CA two\n${PEM.replace("AAAA", "BBBB")}\n`,
    );
    const pems = await readCaFiles([join(dir, "two.pem")]);
    expect(pems).toHaveLength(2);
    expect(pems[0]).toBe(PEM);
  });

  it("names a file that is missing or holds no certificate", async () => {
    await writeFile(join(dir, "key.pem"), "-----BEGIN PRIVATE KEY-----\nxx\n-----END PRIVATE KEY-----\n");
    await expect(readCaFiles([join(dir, "key.pem")])).rejects.toMatchObject({
      code: ErrorCode.CertificateFailed,
      message: `--ca-file ${join(dir, "key.pem")}: no PEM certificate in it`,
    });
    await expect(readCaFiles([join(dir, "absent.pem")])).rejects.toMatchObject({
      code: ErrorCode.CertificateFailed,
      message: `--ca-file ${join(dir, "absent.pem")}: cannot read it`,
    });
  });
});

describe("trustedCertificates", () => {
  it("leaves Node's default trust alone when no CA is added", async () => {
    expect(await trustedCertificates([], {})).toBeUndefined();
  });

  it("adds the given CAs to Node's own roots (and, where Node cannot list them, NODE_EXTRA_CA_CERTS's)", async () => {
    const extra = PEM.replace("AAAA", "CCCC");
    await writeFile(join(dir, "extra.pem"), `${extra}\n`);
    const trusted = await trustedCertificates([PEM], { NODE_EXTRA_CA_CERTS: join(dir, "extra.pem") });
    expect(trusted).toContain(PEM);
    // Node's bundled roots stay trusted (on every line; 22.15+ lists them with getCACertificates).
    expect(trusted).toEqual(expect.arrayContaining([rootCertificates[0]]));
    expect(trusted?.length).toBeGreaterThan(rootCertificates.length / 2);
    // Node 22.15+ reads NODE_EXTRA_CA_CERTS itself at start and lists it among its defaults; before
    // that line, the file named in the environment given is read here.
    if (typeof (tls as { getCACertificates?: unknown }).getCACertificates !== "function") {
      expect(trusted).toContain(extra);
    }
  });
});
