import { relative } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import { createClusterCertificates, DEFAULT_CERT_HOSTS } from "../security/index.js";
import { type FlagSpecs, formatHelp, parseFlags } from "./flags.js";

const CERTS_FLAGS = {
  out: {
    type: "string",
    help: "folder of the certificates (created 0700; an existing CA in it is reused)",
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
Run it again on the same --out to add agents: the CA there is reused, so earlier certificates stay valid.

Then: ubicrawl agent ... --tls-ca DIR/ca.pem --tls-cert DIR/<id>.pem --tls-key DIR/<id>.key
      ubicrawl stats ... --tls-ca DIR/ca.pem --tls-cert DIR/operator.pem --tls-key DIR/operator.key`;

/** `ubicrawl certs`: creates (or extends) a cluster's CA and its agent and operator certificates. */
export async function certsCommand(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, CERTS_FLAGS);
  if (flags.help) {
    process.stdout.write(formatHelp(USAGE, DESCRIPTION, CERTS_FLAGS));
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
  for (const [id, files] of made.agents)
    lines.push(`agent ${id}: ${show(files.certPath)} ${show(files.keyPath)}`);
  if (made.operator) lines.push(`operator: ${show(made.operator.certPath)} ${show(made.operator.keyPath)}`);
  process.stdout.write(`${lines.join("\n")}\n`);
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
