// A preload for measuring where a process's memory goes (bench/README, "Where Node 26's extra memory
// goes"): `UBICRAWL_MEMORY_PROBE_DIR=/tmp/probe NODE_OPTIONS="--require $PWD/bench/memory-probe.cjs"
// node bench/run.mjs`. In every process and worker thread it loads into, it samples every 300 ms and,
// at each new peak of the process's RSS, writes to <dir>/<pid>-<threadId>.json: process.memoryUsage(),
// V8's heap spaces, and (main threads) resident memory by mapping from /proc/self/smaps, in MiB.
// CommonJS so that `--require` loads it before any ES module.
const { readFileSync, writeFileSync } = require("node:fs");
const { getHeapSpaceStatistics } = require("node:v8");
const { isMainThread, threadId } = require("node:worker_threads");

const dir = process.env.UBICRAWL_MEMORY_PROBE_DIR;
const MIB = 2 ** 20;

/** Resident MiB by kind of mapping: a file's name, [heap], [stack], or anonymous mappings by size. */
function residentByMapping() {
  const byKind = {};
  let kind = "";
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const kib = (Number.parseInt(mapping[2], 16) - Number.parseInt(mapping[1], 16)) / 1024;
      const name = mapping[3];
      if (name === "")
        kind =
          kib >= 60_000 ? "anon ≥ 60 MiB (malloc arenas)" : kib >= 2_000 ? "anon 2–60 MiB" : "anon < 2 MiB";
      else kind = name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byKind[kind] = (byKind[kind] ?? 0) + Number(rss[1]) / 1024;
  }
  const top = Object.entries(byKind)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  return Object.fromEntries(top.map(([name, mib]) => [name, Math.round(mib)]));
}

if (dir) {
  let peak = 0;
  const timer = setInterval(() => {
    const usage = process.memoryUsage();
    if (usage.rss <= peak) return;
    peak = usage.rss;
    const mib = (bytes) => Math.round(bytes / MIB);
    const sample = {
      argv: process.argv.slice(1, 3).join(" "),
      thread: isMainThread ? "main" : `worker ${threadId}`,
      rss: mib(usage.rss),
      heapTotal: mib(usage.heapTotal),
      heapUsed: mib(usage.heapUsed),
      external: mib(usage.external),
      arrayBuffers: mib(usage.arrayBuffers),
      heapSpaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, mib(s.space_size)])),
      ...(isMainThread ? { residentByMapping: residentByMapping() } : {}),
    };
    writeFileSync(`${dir}/${process.pid}-${threadId}.json`, `${JSON.stringify(sample, null, 2)}\n`);
  }, 300);
  timer.unref();
}
