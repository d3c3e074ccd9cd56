#!/usr/bin/env node
// The container's health check (the Dockerfile's HEALTHCHECK): GET /healthz on the console of the
// ubicrawl agent running in the container, at the address of its own --http flag, so the check follows
// whatever command line the agent was given. Exit 0 healthy, 1 not. With arguments, checks the agent
// command line they make instead (`node healthcheck.mjs agent --http 127.0.0.1:8080 ...`).
//
// An agent started with --config FILE takes the flags its command line does not give from that file;
// so does this check, reading the file with the agent's own reader (dist/cli/config-file.js) and
// resolving a relative FILE against the agent's working directory, as the agent did.
//
// The console is HTTPS when the agent has the cluster's mutual TLS (--tls-*) and --http is not a
// loopback address; /healthz needs no client certificate nor token, and the server's certificate is
// not checked (it names the agent's hosts, not 127.0.0.1, and /healthz carries nothing secret).

import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIPv4 } from "node:net";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** How long one request may take, in milliseconds (the HEALTHCHECK's --timeout is 5 s). */
const TIMEOUT_MS = 2000;

/**
 * Where the agent of `argv` (its arguments from `agent` on, or a whole command line) serves /healthz:
 * the host to dial (a wildcard address becomes loopback), the port, and whether it is HTTPS. Undefined
 * without --http.
 * @param {readonly string[]} argv
 * @returns {{ host: string; port: number; https: boolean } | undefined}
 */
export function consoleTarget(argv) {
  const http = flagValue(argv, "http");
  if (http === undefined) return undefined;
  const colon = http.lastIndexOf(":");
  const port = Number(http.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65_535) return undefined;
  const bound = http.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const host = bound === "0.0.0.0" ? "127.0.0.1" : bound === "::" ? "::1" : bound;
  const loopback = bound === "localhost" || bound === "::1" || (isIPv4(bound) && bound.startsWith("127."));
  // As the agent decides: the cluster's TLS (--listen with --tls-*) makes a non-loopback console HTTPS.
  const tls = flagValue(argv, "listen") !== undefined && flagValue(argv, "tls-cert") !== undefined;
  const https = tls && !loopback;
  return { host, port, https };
}

/** The flags {@link consoleTarget} reads, which a --config file may give instead of the command line. */
const CONSOLE_FLAGS = ["http", "listen", "tls-ca", "tls-cert", "tls-key"];

/**
 * `argv` (an agent command line, as {@link consoleTarget} takes it) with the console's flags its
 * `--config FILE` gives and it does not added, so that {@link consoleTarget} sees what the agent
 * serves: flags on the command line win, as they do for the agent. The file is read and checked by the
 * agent's own config reader; a relative FILE is taken from `cwd` (the agent's working directory).
 * Rejects when the file cannot be read or is not one the agent would take.
 * @param {readonly string[]} argv
 * @param {string} [cwd]
 * @returns {Promise<string[]>}
 */
export async function withConfigFile(argv, cwd = process.cwd()) {
  const path = flagValue(argv, "config");
  if (path === undefined) return [...argv];
  const [{ readConfigFile }, { AGENT_FLAGS }] = await Promise.all([
    import(new URL("../dist/cli/config-file.js", import.meta.url).href),
    import(new URL("../dist/flags/agent-flags.js", import.meta.url).href),
  ]);
  const fromFile = await readConfigFile(resolve(cwd, path), AGENT_FLAGS);
  const added = [];
  for (const name of CONSOLE_FLAGS) {
    const value = fromFile[name];
    if (typeof value === "string" && flagValue(argv, name) === undefined) added.push(`--${name}=${value}`);
  }
  return [...argv, ...added];
}

/** The URL {@link consoleTarget} checks. @param {{ host: string; port: number; https: boolean }} target */
export function healthzUrl(target) {
  const host = target.host.includes(":") ? `[${target.host}]` : target.host;
  return `${target.https ? "https" : "http"}://${host}:${target.port}/healthz`;
}

/** The value of `--name VALUE` or `--name=VALUE` in `argv` (the last one given). */
function flagValue(argv, name) {
  let value;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === `--${name}`) value = argv[i + 1];
    else if (word.startsWith(`--${name}=`)) value = word.slice(name.length + 3);
  }
  return value;
}

/**
 * The arguments of the ubicrawl agent running in this container and its working directory (from
 * /proc), or undefined.
 */
function runningAgent() {
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    if (Number(pid) === process.pid) continue;
    let words;
    try {
      words = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const bin = words.findIndex((word) => word.endsWith("bin/ubicrawl"));
    if (bin >= 0 && words[bin + 1] === "agent") {
      let cwd;
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        cwd = process.cwd(); // not ours to read: a relative --config is then taken from here
      }
      return { args: words.slice(bin + 1).filter((word) => word !== ""), cwd };
    }
  }
  return undefined;
}

/** GET `url`; resolves to the status code, rejects when no answer comes. */
function get(url) {
  const request = url.startsWith("https:") ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, timeout: TIMEOUT_MS }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** Checks the agent of `argv` (or the one running here); returns the exit code. */
async function main(argv) {
  const agent = argv.length > 0 ? { args: argv, cwd: process.cwd() } : runningAgent();
  if (agent === undefined) {
    console.error("unhealthy: no ubicrawl agent process runs here");
    return 1;
  }
  let args;
  try {
    args = await withConfigFile(agent.args, agent.cwd);
  } catch (error) {
    console.error(`unhealthy: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const target = consoleTarget(args);
  if (target === undefined) {
    console.log("healthy: the agent runs (it has no --http console to ask)");
    return 0;
  }
  const url = healthzUrl(target);
  try {
    const status = await get(url);
    if (status === 200) {
      console.log(`healthy: ${url} answered 200`);
      return 0;
    }
    console.error(`unhealthy: ${url} answered ${status}`);
  } catch (error) {
    console.error(`unhealthy: ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
