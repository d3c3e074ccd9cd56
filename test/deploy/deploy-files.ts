/**
 * Reading `deploy/`: its YAML files (parsed with the `yaml` package, as YAML 1.1 like Kubernetes and
 * Compose), the Dockerfile's instructions, and the agent command lines they hold.
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { AGENT_FLAGS } from "../../src/flags/agent-flags.js";
import { type ParsedFlags, parseFlags } from "../../src/flags/flag-parser.js";
import { REPO_ROOT } from "../agent/harness.js";

export const DEPLOY_DIR = join(REPO_ROOT, "deploy");
export const KUBERNETES_DIR = join(DEPLOY_DIR, "kubernetes");

/** A loosely typed YAML or JSON value, read with checks by the tests. */
// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, navigated by the tests and checked there
export type Doc = any;

/** Every document of a YAML file; throws on any parse error or warning. */
export function readYamlDocuments(path: string): Doc[] {
  const documents = parseAllDocuments(readFileSync(path, "utf8"), { version: "1.1", uniqueKeys: true });
  if (!Array.isArray(documents)) throw new Error(`${path}: no YAML document`);
  return documents.map((document) => {
    const problems = [...document.errors, ...document.warnings];
    if (problems.length > 0) throw new Error(`${path}: ${problems.map((p) => p.message).join("; ")}`);
    return document.toJS({ maxAliasCount: 100 });
  });
}

/** The Kubernetes manifests of `deploy/kubernetes/`: each document with the file it is in. */
export function kubernetesManifests(): { file: string; doc: Doc }[] {
  return readdirSync(KUBERNETES_DIR)
    .filter((name) => name.endsWith(".yaml") || name.endsWith(".yml"))
    .sort()
    .flatMap((file) => readYamlDocuments(join(KUBERNETES_DIR, file)).map((doc) => ({ file, doc })));
}

/** The one manifest of `kind` (throws when there is not exactly one). */
export function manifestOfKind(kind: string): Doc {
  const found = kubernetesManifests().filter(({ doc }) => doc?.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind} in deploy/kubernetes, found ${found.length}`);
  return found[0]?.doc;
}

/** `deploy/compose.yaml`, parsed (merge keys `<<` resolved). */
export function composeFile(): Doc {
  const [doc] = readYamlDocuments(join(DEPLOY_DIR, "compose.yaml"));
  return doc;
}

/** One Dockerfile instruction: its stage (0-based), keyword and argument text (continuations joined). */
export interface DockerInstruction {
  readonly stage: number;
  readonly keyword: string;
  readonly args: string;
}

/** The instructions of `deploy/Dockerfile`, in order. */
export function dockerfileInstructions(): DockerInstruction[] {
  const text = readFileSync(join(DEPLOY_DIR, "Dockerfile"), "utf8");
  const instructions: DockerInstruction[] = [];
  let stage = -1;
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = `${pending}${line}`.trim();
    pending = "";
    const [keyword = ""] = whole.split(/\s+/);
    const upper = keyword.toUpperCase();
    if (upper === "FROM") stage++;
    instructions.push({ stage, keyword: upper, args: whole.slice(keyword.length).trim() });
  }
  return instructions;
}

/** The JSON (exec) form of an instruction's arguments, e.g. `["node", "x"]`; throws on the shell form. */
export function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((word) => typeof word === "string")) {
    throw new Error(`not an exec-form argument list: ${args}`);
  }
  return parsed;
}

/** Kubernetes' `$(VAR)` expansion in a container's command and args, with `env`'s sample values. */
export function expandKubernetesVars(
  words: readonly string[],
  env: Readonly<Record<string, string>>,
): string[] {
  return words.map((word) =>
    word.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole),
  );
}

/** The parsed flags of an `agent` command line (`agent --id ...`), parsed by the agent's own parser. */
export function parseAgentCommand(words: readonly string[]): ParsedFlags<typeof AGENT_FLAGS> {
  if (words[0] !== "agent") throw new Error(`not an agent command line: ${words.join(" ")}`);
  return parseFlags(words.slice(1), AGENT_FLAGS);
}

/** The `--agents` and `--hosts` lists of the first `ubicrawl certs` command in `text` (a comment or a README). */
export function certsCommand(text: string): { agents: string[]; hosts: string[] } {
  // Continuation lines joined, also inside `#` comments.
  const joined = text.replace(/\\\n\s*(?:#\s*)?/g, " ");
  const line = joined.split("\n").find((candidate) => /ubicrawl certs\s/.test(candidate));
  if (line === undefined) throw new Error("no `ubicrawl certs` command found");
  const words = line.slice(line.indexOf("ubicrawl certs")).trim().split(/\s+/);
  const list = (flag: string) => {
    const at = words.indexOf(flag);
    return at < 0 ? [] : (words[at + 1] ?? "").split(",").filter((word) => word !== "");
  };
  return { agents: list("--agents"), hosts: list("--hosts") };
}
