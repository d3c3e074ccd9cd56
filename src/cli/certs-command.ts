import { relative } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import { createClusterCertificates, DEFAULT_CERT_HOSTS } from "../security/index.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";

const CERTS_FLAGS = {
  out: {
    type: "string",
    help: "folder of the certificates (created 0700; the CA and certificates already in it are kept)",
    placeholder: "DIR",
  },
  agents: {
    type: "strings",
    help: "agent ids to issue certificates for (comma-separated or repeated)",
    placeholder: "ID,...",
  },
  hosts: {
    type: "strings",
    help: `host names and IPs the agents are dialed at (default: ${DEFAULT_CERT_HOSTS.join(",")})`,
    placeholder: "HOST,...",
  },
  days: { type: "integer", help: "validity of the issued certificates", default: 365, min: 1, max: 36_500 },
  "no-operator": { type: "boolean", help: "do not issue the operator client certificate" },
  openssl: { type: "string", help: "the openssl command", default: "openssl", placeholder: "PATH" },
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl certs --out DIR --agents ID,... [--hosts HOST,...] [--days N]";
const DESCRIPTION = `Makes the certificates for mutual TLS between agents, with the openssl command: a cluster CA
(ca.pem, ca.key), for each agent a key and a certificate signed by the CA (<id>.pem, <id>.key) valid for
the --hosts names and IPs as server and as client, and an operator client certificate
(operator.pem, operator.key) for 'ubicrawl stats'. Keys are written mode 0600; keep ca.key private.
Run it again on the same --out to add agents: the CA there is reused, and the certificates already there
(agents' and operator's) are kept as they are, so no file handed out changes; only the missing ones are
issued. To issue one again (other --hosts, a later expiry), remove its NAME.pem and NAME.key first.

Then: ubicrawl agent ... --tls-ca DIR/ca.pem --tls-cert DIR/<id>.pem --tls-key DIR/<id>.key
      ubicrawl stats ... --tls-ca DIR/ca.pem --tls-cert DIR/operator.pem --tls-key DIR/operator.key`;

/**
 * `ubicrawl certs`: creates (or extends) a cluster's CA and its agent and operator certificates,
 * keeping those already in --out and saying which it kept and which it made (on `io.stdout`).
 */
export async function certsCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, CERTS_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, CERTS_FLAGS));
    return 0;
  }
  if (flags.positionals.length > 0) throw bad(`unexpected argument "${flags.positionals[0]}"`);
  if (flags.out === undefined) throw bad("--out is required");
  const agents = splitList(flags.agents);
  const hosts = splitList(flags.hosts);
  if (agents.length === 0 && flags["no-operator"])
    throw bad("--agents is required (or leave out --no-operator)");
  const made = await createClusterCertificates({
    outDir: flags.out,
    agents,
    ...(hosts.length > 0 ? { hosts } : {}),
    days: flags.days,
    operator: !flags["no-operator"],
    opensslPath: flags.openssl,
  });
  const show = (path: string) => {
    const near = relative(process.cwd(), path);
    return near === "" || near.startsWith("..") ? path : near;
  };
  const lines = [`${made.ca.created ? "created" : "reused"} CA ${show(made.ca.certPath)}`];
  const certificates = [
    ...[...made.agents].map(([id, files]) => [`agent ${id}`, files] as const),
    ...(made.operator ? [["operator", made.operator] as const] : []),
  ];
  for (const [what, files] of certificates) {
    lines.push(
      `${files.created ? "created" : "kept"} ${what}: ${show(files.certPath)} ${show(files.keyPath)}` +
        (files.created ? "" : ` (as it was, valid until ${files.validTo})`),
    );
  }
  const kept = certificates.filter(([, files]) => !files.created).length;
  if (kept > 0) {
    lines.push(
      `kept ${kept} certificate${kept === 1 ? "" : "s"} already in ${show(flags.out)}, made ${certificates.length - kept}; ` +
        "to issue one again (other --hosts, a later expiry), remove its NAME.pem and NAME.key first",
    );
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

function splitList(values: readonly string[]): string[] {
  return values
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}
