// Frontier memory: one process queues N distinct URLs over a heavy-tailed set of hosts through the
// agent's own path (Frontier.add, then a group commit per batch, on a real LevelDB StateStore), then a
// real HostScheduler visits a sample of hosts (take, complete, commit) so windows refill from disk;
// then a second child reopens the folder, as a restart would. Prints peak RSS (VmHWM), RSS and heap
// after a forced GC, seen-set bytes per URL, LevelDB size on disk. Each size and each reopen runs in
// its own child process, so each peak is its own.
// Run after `npm run build`:  node bench/frontier.mjs [--urls 1000000,10000000] [--hosts 100000] [--json]
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseBenchFlags } from "./lib/flags.mjs";
import { openWorkspace } from "./lib/processes.mjs";
import { fixed, formatTable, MIB } from "./lib/report.mjs";

const FLAGS = {
  urls: {
    type: "string",
    help: "URLs to queue, one child process per comma-separated size (default 1000000,10000000)",
  },
  hosts: { type: "integer", help: "hosts the URLs spread over (Zipf, s = 1)", default: 100_000, min: 1 },
  batch: { type: "integer", help: "URLs added between two commits", default: 1000, min: 1 },
  "sample-urls": {
    type: "integer",
    help: "URLs taken and completed after the adds",
    default: 100_000,
    min: 0,
  },
  "max-active-hosts": { type: "integer", help: "hosts the scheduler visits at once", default: 256, min: 1 },
  quantum: {
    type: "integer",
    help: "URLs a visit takes before yielding (the agent's quantum)",
    default: 64,
    min: 1,
  },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the LevelDB folders and print where" },
  // Internal: run one size in this process and print its figures as JSON on stdout.
  child: { type: "string", help: "(internal) run one size with this state folder and snapshot" },
  // Internal: reopen what a `--child` run left in this folder, in a fresh process, and print its figures.
  reopen: { type: "string", help: "(internal) reopen the state folder a --child run left here" },
};

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/frontier.mjs [flags]");
const sizes = String(flags.urls ?? "1000000,10000000")
  .split(",")
  .map((text) => Number(text.trim()));
if (sizes.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`--urls must list positive integers, got "${flags.urls}"`);

if (flags.child !== undefined) await child(sizes[0], flags.child);
else if (flags.reopen !== undefined) await reopenChild(flags.reopen);
else await parent();

/** Runs each size in a child process (`--expose-gc`), then prints the table. */
async function parent() {
  const { dir } = await openWorkspace("frontier", flags.keep);
  const loadBefore = loadavg()[0];
  const results = [];
  for (const urls of sizes) {
    const data = join(dir, `frontier-${urls}`);
    await mkdir(data, { recursive: true });
    const args = [
      "--expose-gc",
      fileURLToPath(import.meta.url),
      ...[
        "--child",
        data,
        "--urls",
        String(urls),
        "--hosts",
        String(flags.hosts),
        "--batch",
        String(flags.batch),
      ],
      ...[
        "--sample-urls",
        String(flags["sample-urls"]),
        "--max-active-hosts",
        String(flags["max-active-hosts"]),
      ],
      ...["--quantum", String(flags.quantum)],
    ];
    process.stderr.write(`${urls} URLs over ${flags.hosts} hosts (child process)…\n`);
    const out = await runChild(args);
    // A restart is a new process: the reopen is measured in one, not beside the first frontier.
    const reopened = await runChild(["--expose-gc", fileURLToPath(import.meta.url), "--reopen", data]);
    if (reopened.waitingUrls !== out.waitingUrls || reopened.seenUrls !== out.seenUrls) {
      throw new Error(
        `reopened with ${reopened.waitingUrls} waiting, ${reopened.seenUrls} seen: not what was written`,
      );
    }
    results.push({ ...out, ...reopened.figures });
  }
  const loadAverage = { before: loadBefore, after: loadavg()[0] };
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ flags, results, loadAverage }, null, 2)}\n`);
    return;
  }
  const rows = [
    ["URLs queued", (r) => String(r.urlsQueued)],
    ["hosts (with ≥ 1 URL)", (r) => String(r.hostsUsed)],
    ["largest host (URLs)", (r) => String(r.largestHost)],
    ["hosts with ≤ 10 URLs", (r) => String(r.smallHosts)],
    ["add wall time (s)", (r) => fixed(r.addSeconds, 1)],
    ["adds/s", (r) => fixed(r.addsPerSecond, 0)],
    ["peak RSS after adds (MiB)", (r) => fixed(r.peakRssAfterAddsBytes / MIB, 0)],
    ["RSS after GC (MiB)", (r) => fixed(r.rssAfterGcBytes / MIB, 0)],
    ["malloc [heap] after GC (MiB)", (r) => fixed(r.mallocHeapAfterAddsBytes / MIB, 0)],
    ["mapped LevelDB tables after GC (MiB)", (r) => fixed(r.mappedTablesAfterAddsBytes / MIB, 0)],
    ["heap used after GC (MiB)", (r) => fixed(r.heapUsedAfterGcBytes / MIB, 1)],
    ["heap total after GC (MiB)", (r) => fixed(r.heapTotalAfterGcBytes / MIB, 1)],
    ["array buffers (MiB)", (r) => fixed(r.arrayBuffersBytes / MIB, 1)],
    ["URLs in memory windows", (r) => String(r.windowedUrls)],
    ["seen set (MiB)", (r) => fixed(r.seenSetBytes / MIB, 1)],
    ["seen set bytes / URL", (r) => fixed(r.seenBytesPerUrl, 2)],
    ["seen set peak in a growth (MiB)", (r) => fixed(r.seenGrowthPeakBytes / MIB, 1)],
    ["sample: URLs taken + completed", (r) => String(r.sampleTaken)],
    ["sample: hosts visited", (r) => String(r.sampleHosts)],
    ["sample: window loads from disk", (r) => String(r.windowLoads)],
    ["sample: URLs/s", (r) => fixed(r.sampleUrlsPerSecond, 0)],
    ["sample: out of order", (r) => String(r.outOfOrder)],
    ["peak RSS, adds + sample (MiB)", (r) => fixed(r.peakRssBytes / MIB, 0)],
    ["sample: RSS after GC (MiB)", (r) => fixed(r.rssAfterSampleBytes / MIB, 0)],
    ["sample: malloc [heap] after GC (MiB)", (r) => fixed(r.mallocHeapAfterSampleBytes / MIB, 0)],
    ["sample: mapped LevelDB tables (MiB)", (r) => fixed(r.mappedTablesAfterSampleBytes / MIB, 0)],
    ["LevelDB on disk (MiB)", (r) => fixed(r.diskBytes / MIB, 0)],
    ["reopen: Frontier.open (s)", (r) => fixed(r.reopenSeconds, 1)],
    ["reopen: peak RSS (MiB)", (r) => fixed(r.peakRssReopenBytes / MIB, 0)],
    ["reopen: RSS after GC (MiB)", (r) => fixed(r.rssAfterReopenBytes / MIB, 0)],
    ["reopen: malloc [heap] after GC (MiB)", (r) => fixed(r.mallocHeapAfterReopenBytes / MIB, 0)],
    ["reopen: mapped LevelDB tables (MiB)", (r) => fixed(r.mappedTablesAfterReopenBytes / MIB, 0)],
    ["reopen: heap used after GC (MiB)", (r) => fixed(r.heapAfterReopenBytes / MIB, 1)],
  ].map(([label, cell]) => [label, ...results.map(cell)]);
  process.stdout.write(
    `ubicrawl bench/frontier: hosts ${flags.hosts} (Zipf s = 1), commit every ${flags.batch} adds, ` +
      `sample ${flags["sample-urls"]} URLs through HostScheduler (${flags["max-active-hosts"]} active, quantum ${flags.quantum})\n\n` +
      `${formatTable(["", ...results.map((r) => `${r.urlsQueued} URLs`)], rows)}\n\n` +
      `load average ${fixed(loadAverage.before, 2)} before, ${fixed(loadAverage.after, 2)} after; node ${process.version}\n`,
  );
  if (results.some((r) => r.outOfOrder > 0)) process.exitCode = 1;
}

/** Runs one child, passing its stderr through; resolves with the JSON it prints. */
function runChild(args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (chunk) => {
      out += chunk;
    });
    const stop = () => proc.kill("SIGTERM");
    process.once("SIGINT", stop);
    proc.once("close", (code, signal) => {
      process.off("SIGINT", stop);
      if (code !== 0) reject(new Error(`child exited with ${code ?? signal}`));
      else resolve(JSON.parse(out));
    });
  });
}

/** Reads one field of /proc/self/status, in bytes. */
function statusBytes(field) {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** Resident bytes of glibc's main malloc arena (the `[heap]` mapping of /proc/self/smaps), or NaN. */
function mallocHeapBytes() {
  const smaps = readFileSync("/proc/self/smaps", "utf8");
  const at = smaps.indexOf("[heap]");
  const match = at < 0 ? null : /\nRss:\s+(\d+) kB/.exec(smaps.slice(at));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/**
 * Resident bytes of LevelDB's table files mapped into this process (`*.ldb` mappings of
 * /proc/self/smaps): LevelDB reads tables through mmap, so pages it read count in RSS although they are
 * page cache the kernel can drop.
 */
function mappedTablesBytes() {
  let total = 0;
  let inTable = false;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inTable = line.endsWith(".ldb");
    else if (inTable && line.startsWith("Rss:")) total += Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024;
  }
  return total;
}

/** Bytes of every file under `dir`. */
function folderBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size;
  }
  return total;
}

/**
 * Host of each URL drawn from a Zipf law (s = 1) over `hosts` ranks, like the web's heavy tail: with
 * 100,000 hosts and 10 M URLs the largest gets ~830,000 URLs and the smallest ~8. Inverse-CDF lookup.
 */
function zipfSampler(hosts, random) {
  const cdf = new Float64Array(hosts);
  let sum = 0;
  for (let r = 0; r < hosts; r++) {
    sum += 1 / (r + 1);
    cdf[r] = sum;
  }
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = hosts - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] ?? 0) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Host name of rank `r`: lengths like real ones (~20–30 characters). */
function hostName(r) {
  return `www.site-${r.toString(36)}-${((r * 2654435761) >>> 0).toString(36)}.example.com`;
}

/** The `k`-th URL of host `r` (~80 characters, like real URLs). */
function urlOf(host, k) {
  return `http://${host}/section-${k % 97}/articles/${k}/index-page-${(k * 40503) & 0xffff}.html`;
}

/** One size, in this process: adds, then a scheduled sample, then the figures as JSON on stdout. */
async function child(urls, data) {
  const log = (text) => process.stderr.write(`  [${urls}] ${text}\n`);
  const { Frontier, HostScheduler, GroupCommit, StateStore, UrlFingerprinter, Mt19937 } =
    await loadUbicrawl(data);

  const stateDir = join(data, "state");
  const store = await StateStore.open(stateDir);
  let windowLoads = 0;
  // Counts the refills of windows from disk (the bench's own instrumentation of the real store): the
  // point reads of the queue's range (`q`), one a window (a window past a hole scans the rest too).
  const range = store.range.bind(store);
  store.range = (keyRange) => {
    const reader = range(keyRange);
    if (keyRange.name !== "q") return reader;
    return new Proxy(reader, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        if (name !== "getMany") return value.bind(target);
        return (...args) => {
          windowLoads++;
          return value.apply(target, args);
        };
      },
    });
  };
  const committer = new GroupCommit((ops) => store.write(ops));
  const fingerprinter = await UrlFingerprinter.create();
  const readyHosts = [];
  const frontier = await Frontier.open(
    {},
    { store, committer, fingerprinter, onHostReady: (host) => readyHosts.push(host) },
  );

  const hostsCount = flags.hosts;
  const names = Array.from({ length: hostsCount }, (_, r) => hostName(r));
  const perHost = new Uint32Array(hostsCount);
  const generator = new Mt19937(Uint32Array.of(20261126));
  // A uniform double in [0, 1) from two draws (mt19937ar.c's genrand_res53).
  const random = () => ((generator.next() >>> 5) * 67108864 + (generator.next() >>> 6)) / 9007199254740992;
  const nextHost = zipfSampler(hostsCount, random);

  const started = performance.now();
  let lastReport = started;
  for (let i = 0; i < urls; ) {
    const end = Math.min(urls, i + flags.batch);
    for (; i < end; i++) {
      const r = nextHost();
      const host = names[r];
      if (!frontier.add(urlOf(host, perHost[r]), 1, host))
        throw new Error("a distinct URL was seen as a duplicate");
      perHost[r]++;
    }
    await frontier.commit();
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      const { heapUsed, heapTotal } = process.memoryUsage();
      log(
        `${i} queued, RSS ${fixed(statusBytes("VmRSS") / MIB, 0)} MiB (anon ${fixed(statusBytes("RssAnon") / MIB, 0)}), ` +
          `heap ${fixed(heapUsed / MIB, 0)} / ${fixed(heapTotal / MIB, 0)} MiB`,
      );
    }
  }
  const addSeconds = (performance.now() - started) / 1000;
  const peakRssAfterAddsBytes = statusBytes("VmHWM");
  globalThis.gc?.();
  const memory = process.memoryUsage();
  const rssAfterGcBytes = statusBytes("VmRSS");
  const mallocHeapAfterAddsBytes = mallocHeapBytes();
  const mappedTablesAfterAddsBytes = mappedTablesBytes();
  log(`added in ${fixed(addSeconds, 1)} s; peak RSS ${fixed(peakRssAfterAddsBytes / MIB, 0)} MiB`);

  // The sample: a real HostScheduler over every host with work, each visit taking up to a quantum of
  // URLs one at a time (take, complete, commit), as the agent's HostVisitor does, until enough are done.
  const expectedNext = new Uint32Array(hostsCount);
  const rankOf = new Map(names.map((name, r) => [name, r]));
  let sampleTaken = 0;
  let outOfOrder = 0;
  const visited = new Set();
  const sampleStarted = performance.now();
  let finish;
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const scheduler = new HostScheduler(
    { maxActiveHosts: flags["max-active-hosts"] },
    {
      visit: async (host, signal) => {
        visited.add(host);
        const r = rankOf.get(host);
        for (let n = 0; n < flags.quantum; n++) {
          if (signal.aborted || sampleTaken >= flags["sample-urls"]) return { kind: "yielded" };
          const entry = await frontier.take(host);
          if (!entry) return { kind: "drained" };
          // FIFO per host: the k-th URL taken is the k-th URL added.
          if (entry.url !== urlOf(host, expectedNext[r])) outOfOrder++;
          expectedNext[r]++;
          frontier.complete(host, entry, { fetched: true, counted: true });
          await frontier.commit();
          if (++sampleTaken >= flags["sample-urls"]) finish();
        }
        return { kind: "yielded" };
      },
      hasWork: (host) => frontier.waitingOf(host) > 0,
      onVisitError: (host, error) => {
        log(`visit of ${host} failed: ${error}`);
        outOfOrder++;
        finish();
      },
    },
  );
  const loadsBefore = windowLoads;
  if (flags["sample-urls"] > 0) {
    for (const host of frontier.hostsWithWork()) scheduler.markReady(host);
    await finished;
  }
  await scheduler.stop(10_000);
  await frontier.commit();
  const sampleSeconds = (performance.now() - sampleStarted) / 1000;
  log(`sample: ${sampleTaken} URLs of ${visited.size} hosts in ${fixed(sampleSeconds, 1)} s`);

  const seen = frontier.seen;
  const windowedUrls = typeof frontier.windowedUrls === "number" ? frontier.windowedUrls : Number.NaN;
  const urlsQueued = frontier.waitingUrls + sampleTaken;
  const peakRssBytes = statusBytes("VmHWM");
  globalThis.gc?.();
  const rssAfterSampleBytes = statusBytes("VmRSS");
  const mallocHeapAfterSampleBytes = mallocHeapBytes();
  const mappedTablesAfterSampleBytes = mappedTablesBytes();
  await store.close();
  const diskBytes = folderBytes(stateDir);

  const sorted = [...perHost].sort((a, b) => b - a);
  const result = {
    urlsQueued,
    hosts: hostsCount,
    hostsUsed: perHost.filter((n) => n > 0).length,
    largestHost: sorted[0],
    smallHosts: perHost.filter((n) => n > 0 && n <= 10).length,
    addSeconds,
    addsPerSecond: urls / addSeconds,
    peakRssAfterAddsBytes,
    rssAfterGcBytes,
    mallocHeapAfterAddsBytes,
    mappedTablesAfterAddsBytes,
    heapUsedAfterGcBytes: memory.heapUsed,
    heapTotalAfterGcBytes: memory.heapTotal,
    externalBytes: memory.external,
    arrayBuffersBytes: memory.arrayBuffers,
    windowedUrls,
    seenUrls: seen.size,
    seenSetBytes: seen.memoryBytes,
    seenBytesPerUrl: seen.memoryBytes / seen.size,
    // A growth holds a segment's old and new tables at once.
    seenGrowthPeakBytes: seen.memoryBytes + (seen.growthPeakBytes ?? seen.memoryBytes / 1.25),
    sampleTaken,
    sampleHosts: visited.size,
    windowLoads: windowLoads - loadsBefore,
    sampleUrlsPerSecond: sampleTaken / sampleSeconds,
    outOfOrder,
    peakRssBytes,
    rssAfterSampleBytes,
    mallocHeapAfterSampleBytes,
    mappedTablesAfterSampleBytes,
    diskBytes,
    waitingUrls: frontier.waitingUrls,
    readyHostsReported: readyHosts.length,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * A restart on what a {@link child} run left in `data`, in this fresh process: `Frontier.open` scans
 * the queues and reloads the seen set from disk. Prints the counts found and the figures as JSON.
 */
async function reopenChild(data) {
  const { Frontier, GroupCommit, StateStore, UrlFingerprinter } = await loadUbicrawl(data);
  const started = performance.now();
  const store = await StateStore.open(join(data, "state"));
  const frontier = await Frontier.open(
    {},
    {
      store,
      committer: new GroupCommit((ops) => store.write(ops)),
      fingerprinter: await UrlFingerprinter.create(),
      onHostReady: () => {},
    },
  );
  const reopenSeconds = (performance.now() - started) / 1000;
  const peakRssReopenBytes = statusBytes("VmHWM");
  globalThis.gc?.();
  const figures = {
    reopenSeconds,
    peakRssReopenBytes,
    rssAfterReopenBytes: statusBytes("VmRSS"),
    mallocHeapAfterReopenBytes: mallocHeapBytes(),
    mappedTablesAfterReopenBytes: mappedTablesBytes(),
    heapAfterReopenBytes: process.memoryUsage().heapUsed,
  };
  await store.close();
  process.stderr.write(`  reopened in ${fixed(reopenSeconds, 1)} s\n`);
  const result = { waitingUrls: frontier.waitingUrls, seenUrls: frontier.seen.size, figures };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * The modules measured, from the snapshot openWorkspace took next to `data`, so a rebuild of dist/
 * meanwhile cannot change the code measured.
 */
async function loadUbicrawl(data) {
  const dist = join(data, "..", "ubicrawl", "dist");
  const { Frontier, HostScheduler } = await import(join(dist, "frontier/index.js"));
  const { GroupCommit, StateStore } = await import(join(dist, "storage/index.js"));
  const { UrlFingerprinter } = await import(join(dist, "url/index.js"));
  const { Mt19937 } = await import(join(dist, "hashing/mt19937.js"));
  return { Frontier, HostScheduler, GroupCommit, StateStore, UrlFingerprinter, Mt19937 };
}
