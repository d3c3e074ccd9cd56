import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AGENT_DEFAULTS } from "../agent/agent-options.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import {
  computeTruth,
  createTestWebCertificates,
  DEFAULT_MAX_ARTICLES_PER_HOST,
  DEFAULT_SHARED_ADDRESS_PERCENT,
  startTestWeb,
  TEST_WEB_CA_FILE,
  TEST_WEB_SCHEMES,
} from "../testweb/index.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";

const TESTWEB_FLAGS = {
  seed: { type: "integer", help: "seed of the generated web", default: 1, min: 0 },
  hosts: { type: "integer", help: "number of hosts", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages in all (about)", default: 20_000, min: 10, max: 1_000_000 },
  port: { type: "integer", help: "port of every host (0 picks a free one)", default: 0, min: 0, max: 65535 },
  "max-articles-per-host": {
    type: "integer",
    help: "largest number of articles on one host (with --biggest-host-percent, on every host but the biggest)",
    default: DEFAULT_MAX_ARTICLES_PER_HOST,
    min: 5,
    max: 1_000_000,
  },
  "biggest-host-percent": {
    type: "integer",
    help: "give the biggest host this share of all articles, in percent (a real web's biggest sites hold far more than the heavy-tailed draw under the cap gives them); default: sized like the others",
    min: 1,
    max: 90,
  },
  "gone-hosts": {
    type: "integer",
    help: "dead hosts: names pages link to that no hosts file resolves (default: 2% of --hosts, at least 1)",
    min: 1,
    max: 10_000,
  },
  "shared-address-percent": {
    type: "integer",
    help: "about this share of the hosts, in percent, reuse the address of the host before them (virtual hosting; 0: an address a host)",
    default: DEFAULT_SHARED_ADDRESS_PERCENT,
    min: 0,
    max: 100,
  },
  mirrors: {
    type: "integer",
    help: "mirror hosts, each serving a small host's responses byte for byte (default: 2, fewer on a tiny web)",
    min: 0,
  },
  "hosts-file": {
    type: "string",
    help: "write the /etc/hosts-format name file here (give it to agents as --hosts-file)",
    placeholder: "FILE",
  },
  "seeds-file": { type: "string", help: "write the seed URLs here, one a line", placeholder: "FILE" },
  truth: {
    type: "string",
    help: "write the ground truth (URLs a correct crawl fetches, one a line) here",
    placeholder: "FILE",
  },
  "truth-only": { type: "boolean", help: "write the files and exit without serving" },
  "max-depth": {
    type: "integer",
    help: "crawler limit the truth assumes",
    default: AGENT_DEFAULTS.maxDepth,
    min: 0,
  },
  "max-pages-per-host": {
    type: "integer",
    help: "crawler limit the truth assumes",
    default: AGENT_DEFAULTS.maxPagesPerHost,
    min: 1,
  },
  "user-agent": {
    type: "string",
    help: "crawler User-Agent the truth assumes",
    default: AGENT_DEFAULTS.userAgent,
  },
  scheme: {
    type: "string",
    help: "serve every host over http or https (with a throwaway CA, see --ca-out)",
    default: "http",
    choices: TEST_WEB_SCHEMES,
  },
  http2: {
    type: "boolean",
    help: "with --scheme https: offer HTTP/2 besides HTTP/1.1 (ALPN), for agents' --http2",
  },
  "ca-out": {
    type: "string",
    help: `with --scheme https: write the CA certificate here, for agents' --ca-file (default: ${TEST_WEB_CA_FILE} next to --hosts-file, or here)`,
    placeholder: "FILE",
  },
  "served-log": {
    type: "string",
    help: "append one line per request served to this file",
    placeholder: "FILE",
  },
} as const satisfies FlagSpecs;

const USAGE =
  "ubicrawl testweb [--hosts N] [--pages N] [--hosts-file FILE] [--seeds-file FILE] [--truth FILE]";
const DESCRIPTION = `Serves the built-in synthetic web on loopback (HTTP, or HTTPS with --scheme https): each host on
its own 127.1.x.y address (a few share one: --shared-address-percent), all on one port, with realistic pages, links, robots.txt files, redirects, 404s, binary
files, a crawler trap, mirror hosts and URL aliases serving the same bytes as other URLs. Content is generated from the URL and the seed, never stored. Runs until
SIGINT/SIGTERM and then prints what it served.`;

/**
 * `ubicrawl testweb`: serves the test web (and writes its hosts file, seeds and ground truth) until
 * SIGINT or SIGTERM, as an agent waits for them; `--help` on `io.stdout`, what it serves and served on
 * `io.stderr`.
 */
export async function testwebCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, TESTWEB_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, TESTWEB_FLAGS));
    return 0;
  }
  const caPath =
    flags["ca-out"] ??
    join(flags["hosts-file"] === undefined ? "." : dirname(flags["hosts-file"]), TEST_WEB_CA_FILE);
  const web = await startTestWeb(
    {
      seed: flags.seed,
      hosts: flags.hosts,
      pages: flags.pages,
      port: flags.port,
      maxArticlesPerHost: flags["max-articles-per-host"],
      ...(flags["biggest-host-percent"] === undefined
        ? {}
        : { biggestHostPercent: flags["biggest-host-percent"] }),
      ...(flags["gone-hosts"] === undefined ? {} : { goneHosts: flags["gone-hosts"] }),
      ...(flags.mirrors === undefined ? {} : { mirrors: flags.mirrors }),
      sharedAddressPercent: flags["shared-address-percent"],
      scheme: flags.scheme,
      http2: flags.http2,
      ...(flags["served-log"] === undefined ? {} : { servedLogPath: flags["served-log"] }),
    },
    (model) => createTestWebCertificates(model, caPath),
  );
  if (flags.scheme === "https")
    io.stderr.write(`test web CA certificate: ${caPath} (give it to agents as --ca-file)\n`);
  let stop = () => {};
  try {
    if (flags["hosts-file"] !== undefined) await web.writeHostsFile(flags["hosts-file"]);
    if (flags["seeds-file"] !== undefined) await writeFile(flags["seeds-file"], `${web.seeds.join("\n")}\n`);
    if (flags.truth !== undefined) {
      const truth = computeTruth(web.model, web.port, {
        maxDepth: flags["max-depth"],
        maxPagesPerHost: flags["max-pages-per-host"],
        userAgent: flags["user-agent"],
      });
      await writeFile(flags.truth, `${truth.urls.join("\n")}\n`);
      const biggest = biggestHost(truth.urls);
      io.stderr.write(
        `truth: ${truth.urls.length} URLs, ${truth.robotsDisallowed} disallowed by robots.txt, ` +
          `${truth.unresolvableHosts.length} unresolvable hosts${truth.depthExact ? "" : " (inexact: max-depth binds)"}; ` +
          `biggest host ${biggest.name}: ${biggest.urls} URLs (${((100 * biggest.urls) / Math.max(1, truth.urls.length)).toFixed(1)}%)\n`,
      );
    }
    // Handlers first: whoever reads the line below may signal at once.
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    io.stderr.write(
      `test web: ${web.model.hosts.length} hosts on port ${web.port}; seeds: ${web.seeds.join(" ")}\n`,
    );
    if (flags["truth-only"]) return 0;
    await stopped;
    const recorder = web.recorder;
    io.stderr.write(
      `served ${recorder.totalServed} requests; most concurrent requests to one host: ${recorder.maxConcurrencyPerHost()}\n`,
    );
    return 0;
  } finally {
    // Not left behind (--truth-only, a failure, or a run in a test's own process).
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await web.stop();
  }
}

/** The host with the most URLs among `urls`, and how many it has. */
function biggestHost(urls: readonly string[]): { name: string; urls: number } {
  const counts = new Map<string, number>();
  for (const url of urls) {
    const name = new URL(url).hostname;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  let best = { name: "-", urls: 0 };
  for (const [name, count] of counts) if (count > best.urls) best = { name, urls: count };
  return best;
}
