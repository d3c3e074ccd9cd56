// WARC compression: the built-in test web's pages written as WARC records by the agent's own
// WarcWriter (compressing on the calling thread, so process CPU is the compression's), for each
// compression, level and zstd dictionary size, on this Node and on another line side by side in one
// run (zstd needs Node 22.15+; the other line comes from the npm registry's node package). Prints CPU
// per page (finishing: SHA-1 digests, compression, the append) and bytes per page for each.
// Run after `npm run build`:  node bench/warc-zstd.mjs [--pages 4000] [--line 26] [--json]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseBenchFlags } from "./lib/flags.mjs";
import { fixed, formatTable } from "./lib/report.mjs";

const FLAGS = {
  pages: { type: "integer", help: "test-web responses archived per configuration", default: 4000, min: 10 },
  line: {
    type: "integer",
    help: "the other Node.js line, from the npm registry (0: this Node only)",
    default: 26,
    min: 0,
  },
  json: { type: "boolean", help: "print JSON instead of a table" },
  // Internal: run one configuration in this process and print its figures as JSON on stdout.
  child: { type: "string", help: "(internal) compression:level:dictionaryBytes" },
};

/** What is measured: compression, level, zstd dictionary bytes per file (0: none). */
const CONFIGS = [
  ["gzip", 1, 0],
  ["gzip", 6, 0],
  ["zstd", 1, 0],
  ["zstd", 3, 0],
  ["zstd", 1, 16_384],
  ["zstd", 3, 16_384],
  ["zstd", 3, 65_536],
  ["zstd", 6, 16_384],
];

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/warc-zstd.mjs [flags]");
if (flags.child) {
  process.stdout.write(JSON.stringify(await runOne(flags.child, flags.pages)));
} else {
  await main();
}

async function main() {
  const lines = [{ label: process.version, command: [process.execPath] }];
  if (flags.line > 0) {
    const version = execFileSync("npx", ["-y", `node@${flags.line}`, "--version"], {
      encoding: "utf8",
    }).trim();
    lines.push({ label: version, command: ["npx", "-y", `node@${flags.line}`] });
  }
  const rows = [];
  for (const [compression, level, dictionaryBytes] of CONFIGS) {
    for (const { label, command } of lines) {
      const [bin, ...pre] = command;
      const child = spawnSync(
        bin,
        [
          ...pre,
          fileURLToPath(import.meta.url),
          "--child",
          `${compression}:${level}:${dictionaryBytes}`,
          "--pages",
          String(flags.pages),
        ],
        { encoding: "utf8" },
      );
      if (child.status !== 0) {
        const why = /needs Node\.js [\d.]+/.exec(child.stderr)?.[0] ?? child.stderr.trim().split("\n").at(-1);
        rows.push({ node: label, compression, level, dictionaryBytes, error: why });
        continue;
      }
      rows.push({ node: label, compression, level, dictionaryBytes, ...JSON.parse(child.stdout) });
    }
  }
  if (flags.json) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  const base = rows.find(
    (row) => row.node === process.version && row.compression === "gzip" && row.level === 1,
  );
  console.log(`${flags.pages} test-web responses per row; ratios against gzip level 1 on ${process.version}`);
  console.log(
    formatTable(
      ["node", "compression", "level", "dictionary", "CPU µs/page", "× CPU", "bytes/page", "× bytes"],
      rows.map((row) =>
        row.error
          ? [row.node, row.compression, String(row.level), String(row.dictionaryBytes), row.error, "", "", ""]
          : [
              row.node,
              row.compression,
              String(row.level),
              row.compression === "zstd" ? String(row.dictionaryBytes) : "-",
              fixed(row.cpuMicrosPerPage, 1),
              base ? fixed(row.cpuMicrosPerPage / base.cpuMicrosPerPage, 2) : "",
              fixed(row.bytesPerPage, 0),
              base ? fixed(row.bytesPerPage / base.bytesPerPage, 2) : "",
            ],
      ),
    ),
  );
}

/** Archives `pages` test-web responses with one configuration; CPU and bytes per page. */
async function runOne(config, pages) {
  const [compression, level, dictionaryBytes] = config.split(":");
  const { buildModel, computeTruth, respond } = await import("../dist/testweb/index.js");
  const { WarcWriter } = await import("../dist/storage/warc-writer.js");
  const model = buildModel({ hosts: 60, seed: 3 });
  const hostIndex = new Map(model.hosts.map((host) => [host.name, host.index]));
  const truth = computeTruth(model, 8080, { maxDepth: 20, maxPagesPerHost: 50_000, userAgent: "ubicrawl" });
  // The pages a crawl fetches, hosts interleaved as an agent's workers meet them.
  const byHost = new Map();
  for (const url of truth.urls) {
    const { hostname } = new URL(url);
    if (!hostIndex.has(hostname)) continue;
    if (!byHost.has(hostname)) byHost.set(hostname, []);
    byHost.get(hostname).push(url);
  }
  const queues = [...byHost.values()];
  const exchanges = [];
  for (let round = 0; exchanges.length < pages && queues.some((q) => q.length > round); round++) {
    for (const queue of queues) {
      const url = queue[round];
      if (url === undefined || exchanges.length >= pages) continue;
      const { hostname, pathname, search, host } = new URL(url);
      const target = pathname + search;
      const answer = respond(model, 8080, hostIndex.get(hostname), target);
      const body = Buffer.from(answer.body);
      const date = new Date();
      exchanges.push({
        url,
        ip: "127.1.0.1",
        date,
        requestHeaderBlock: `GET ${target} HTTP/1.1\r\nhost: ${host}\r\nuser-agent: ubicrawl/0.1\r\naccept: */*\r\n\r\n`,
        responseHeaderBlock: `HTTP/1.1 ${answer.status} OK\r\nContent-Type: ${answer.contentType}\r\nContent-Length: ${body.length}\r\nDate: ${date.toUTCString()}\r\n\r\n`,
        body,
      });
    }
  }
  if (exchanges.length < pages)
    throw new Error(`the test web has ${exchanges.length} pages, fewer than --pages`);
  const dir = await mkdtemp(join(tmpdir(), "ubicrawl-bench-warc-"));
  try {
    const writer = new WarcWriter({
      dir,
      agentId: "bench",
      compression,
      level: Number(level),
      dictionaryBytes: Number(dictionaryBytes),
      compressInWorker: false,
      // Files of about 1,000 pages: later files' dictionaries are learned from the crawl.
      maxFileBytes: 4 * 1024 * 1024,
    });
    await writer.open();
    // Warm-up: the first file, its seed dictionary, JIT.
    const warm = Math.min(200, Math.floor(pages / 10));
    for (let i = 0; i < warm; i++) await writer.write(exchanges[i]);
    const bytesBefore = writer.stats().bytes;
    const cpu = process.cpuUsage();
    for (let i = warm; i < exchanges.length; i++) await writer.write(exchanges[i]);
    const used = process.cpuUsage(cpu);
    const bytes = writer.stats().bytes - bytesBefore;
    await writer.close();
    const measured = pages - warm;
    return {
      cpuMicrosPerPage: (used.user + used.system) / measured,
      bytesPerPage: bytes / measured,
      files: writer.stats().files,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
