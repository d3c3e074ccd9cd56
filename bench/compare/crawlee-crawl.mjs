// Crawlee's CheerioCrawler on the ubicrawl test web, for bench/compare.mjs (run as its own process so its
// CPU and memory are measured apart). Names resolve only through the test web's hosts file: dns.lookup
// and every dns Resolver method are replaced before Crawlee loads, and answer only with the loopback
// addresses of that file, so no DNS query and no connection can leave the machine.
//   node bench/compare/crawlee-crawl.mjs --seeds F --hosts-file F --out F --concurrency N --storage DIR
import dns from "node:dns";
import { appendFileSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    seeds: { type: "string" },
    "hosts-file": { type: "string" },
    out: { type: "string" },
    concurrency: { type: "string", default: "64" },
    "max-depth": { type: "string", default: "20" },
    storage: { type: "string" },
  },
});
for (const name of ["seeds", "hosts-file", "out", "storage"]) {
  if (values[name] === undefined) throw new Error(`--${name} is required`);
}

/** Host name → IPv4 from the hosts file; only loopback addresses are accepted. */
const hosts = new Map();
for (const line of readFileSync(values["hosts-file"], "utf8").split("\n")) {
  if (line === "" || line.startsWith("#")) continue;
  const [ip, ...names] = line.trim().split(/\s+/);
  if (!ip?.startsWith("127.")) throw new Error(`hosts file entry is not loopback: ${line}`);
  for (const name of names) hosts.set(name.toLowerCase(), ip);
}
const notFound = (hostname) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (not in the test web's hosts file)`), {
    code: "ENOTFOUND",
    hostname,
  });

function lookup(hostname, options, callback) {
  const done = typeof options === "function" ? options : callback;
  const all = typeof options === "object" && options?.all;
  const ip = hosts.get(String(hostname).toLowerCase());
  process.nextTick(() => {
    if (ip === undefined) done(notFound(hostname));
    else if (all) done(null, [{ address: ip, family: 4 }]);
    else done(null, ip, 4);
  });
}
dns.lookup = lookup;
dns.promises.lookup = async (hostname, options) => {
  const ip = hosts.get(String(hostname).toLowerCase());
  if (ip === undefined) throw notFound(hostname);
  return options?.all ? [{ address: ip, family: 4 }] : { address: ip, family: 4 };
};
// Resolvers would query real DNS servers: refuse every method on both APIs.
for (const proto of [dns.Resolver.prototype, dns.promises.Resolver.prototype]) {
  for (const method of Object.getOwnPropertyNames(proto)) {
    if (!method.startsWith("resolve") && method !== "reverse") continue;
    proto[method] = function refuse(hostname, ...rest) {
      const callback = rest.find((arg) => typeof arg === "function");
      if (callback) return process.nextTick(() => callback(notFound(hostname)));
      return Promise.reject(notFound(hostname));
    };
  }
}

process.env.CRAWLEE_STORAGE_DIR = values.storage;
process.env.CRAWLEE_LOG_LEVEL ??= "ERROR";
const { CheerioCrawler, Configuration, EnqueueStrategy } = await import("crawlee");

const concurrency = Number(values.concurrency);
const maxDepth = Number(values["max-depth"]);
const seeds = readFileSync(values.seeds, "utf8").split("\n").filter(Boolean);
// Links are followed like ubicrawl follows them: <a>/<area> without rel=nofollow, frames, per-host depth.
const LINKS = "a[href]:not([rel~=nofollow]), area[href]:not([rel~=nofollow]), frame[src], iframe[src]";
let answered = 0;
let failed = 0;
let lines = [];
const flush = () => {
  if (lines.length > 0) appendFileSync(values.out, `${lines.join("\n")}\n`);
  lines = [];
};
const record = (url, status) => {
  lines.push(`${status}\t${url}`);
  if (lines.length >= 1000) flush();
};

const crawler = new CheerioCrawler(
  {
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    maxRequestRetries: 0,
    respectRobotsTxtFile: true,
    additionalMimeTypes: ["application/pdf", "image/png", "application/octet-stream", "text/plain"],
    // 404s and the like are pages too (ubicrawl archives them): no error for any status.
    ignoreHttpErrorStatusCodes: [400, 401, 403, 404, 405, 410, 429, 500, 502, 503, 504],
    async requestHandler({ request, response, $, enqueueLinks }) {
      answered++;
      record(request.url, response.statusCode);
      // A followed redirect: the target was fetched too (ubicrawl logs each hop as a page).
      if (request.loadedUrl && request.loadedUrl !== request.url)
        record(request.loadedUrl, response.statusCode);
      if ($ === undefined || typeof $ !== "function") return;
      const robots = $('meta[name="robots" i]').attr("content") ?? "";
      if (/nofollow|none/i.test(robots)) return;
      const from = new URL(request.loadedUrl ?? request.url);
      const depth = request.userData.depth ?? 0;
      await enqueueLinks({
        selector: LINKS,
        strategy: EnqueueStrategy.All,
        transformRequestFunction(options) {
          const url = new URL(options.url);
          if (url.protocol !== "http:" || !url.hostname.endsWith(".ubi.test")) return false;
          const next = url.host === from.host ? depth + 1 : 0;
          if (next > maxDepth) return false;
          options.userData = { depth: next };
          return options;
        },
      });
    },
    failedRequestHandler({ request }) {
      failed++;
      record(request.url, 0);
    },
  },
  new Configuration({ persistStorage: false, purgeOnStart: true }),
);
await crawler.run(seeds.map((url) => ({ url, userData: { depth: 0 } })));
flush();
process.stdout.write(`${JSON.stringify({ answered, failed })}\n`);
