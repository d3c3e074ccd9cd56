import { AGENT_DEFAULTS } from "../agent/agent-options.js";
import { CRAWL_DELAY_POLICIES } from "../agent/crawl-delay-bound.js";
import { LINK_MODES } from "../agent/link-router.js";
import { PROGRESS_MODES } from "../agent/progress.js";
import { SITEMAP_MODES } from "../agent/sitemap-reader.js";
import {
  DEFAULT_BATCH_URLS,
  DEFAULT_IP_LIMIT,
  DEFAULT_JOIN_TIMEOUT_MS,
  DEFAULT_LEAVE_TIMEOUT_MS,
  DEFAULT_PARTITIONING,
  DEFAULT_RECOVERY_K,
  DEFAULT_TAKEOVER_DELAY_MS,
  IP_LIMITS,
  PARTITIONINGS,
} from "../cluster/index.js";
import { DEDUP_MODES } from "../dedup/index.js";
import { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SUSPECT_AFTER_MS } from "../failure-detector/index.js";
import { BANDWIDTH_CONTROLS } from "../fetching/index.js";
import { DEFAULT_LOG_LEVEL, LOG_FORMATS, LOG_LEVELS } from "../logging/index.js";
import { RECRAWL_MODES } from "../recrawl/index.js";
import { WARC_COMPRESSIONS, ZSTD_NODE_VERSION } from "../storage/index.js";
import { MAX_URLS_PER_BATCH } from "../transport/index.js";
import type { FlagSpecs } from "./flag-parser.js";

/**
 * The least `--max-bandwidth` taken, in bytes per second (1 KB/s): a bound under it is surely a
 * rate given without its unit (`5` for 5 MB/s), and would hold the crawl to a page every few minutes.
 */
export const MIN_MAX_BANDWIDTH = 1024;

/** Flags of `ubicrawl agent`. Their names are a contract other tools rely on. */
export const AGENT_FLAGS = {
  id: { type: "string", help: "unique id of this agent (letters, digits, . _ -)", placeholder: "ID" },
  data: {
    type: "string",
    help: "this agent's folder of durable state, WARC files (each with its .cdxj index) and crawl log (a new folder starts a new crawl)",
    placeholder: "DIR",
  },
  "warc-dir": {
    type: "string",
    help: "folder of the WARC files and their .cdxj indexes, when not DIR/warc (another volume, say); the same folder at every start: the agent checks its files there against its state",
    placeholder: "DIR",
  },
  "on-warc-closed": {
    type: "string",
    help: "shell command run (/bin/sh -c) once per finished WARC file, with its path in $UBICRAWL_WARC_FILE and its index's in $UBICRAWL_CDXJ_FILE, one at a time: to move closed files off this machine (a file it moves away is recorded as moved, not lost; one it leaves is offered again at the next start)",
    placeholder: "CMD",
  },
  seeds: {
    type: "strings",
    help: "seed http(s) URLs, or files with one URL a line",
    placeholder: "FILE|URL...",
  },
  "replicated-urls": {
    type: "string",
    help: "file of URLs (one a line) every agent is given, as --seeds too: links to them are never sent to their owners, who queue them as seeds (Cho and Garcia-Molina's replication of the most linked URLs)",
    placeholder: "FILE",
  },
  "hosts-file": {
    type: "string",
    help: "resolve names only with this /etc/hosts-format file (names missing fail at once, no DNS), the crawled hosts' and the --join names'; an edit is read within a second (write it whole: a bad one is refused and the names before kept), and a host whose line changes moves to its new address's per-IP limits",
    placeholder: "FILE",
  },
  "allow-net": {
    type: "strings",
    help: "allow this private/loopback/link-local CIDR (refused by default)",
    placeholder: "CIDR",
  },
  "delay-ms": {
    type: "integer",
    help: "delay between requests to one host",
    default: AGENT_DEFAULTS.delayMs,
    min: 0,
  },
  "delay-factor": {
    type: "integer",
    help: "wait this many times the last fetch's duration before a host's next request, when longer than --delay-ms (a slow server gets a slower crawler; 0: never)",
    default: AGENT_DEFAULTS.delayFactor,
    min: 0,
    max: 100,
  },
  "max-crawl-delay": {
    type: "integer",
    help: "longest robots.txt Crawl-delay honoured as asked, in seconds (Heritrix's bound); a host asking for longer gets --crawl-delay-policy",
    default: AGENT_DEFAULTS.maxCrawlDelaySeconds,
    min: 1,
    placeholder: "S",
  },
  "crawl-delay-policy": {
    type: "string",
    help: "a host whose Crawl-delay is over --max-crawl-delay: cap (crawled one request every --max-crawl-delay, as Heritrix does) or skip (its pages dropped without a request, counted as crawl-delay-too-long and written to the crawl log with skipped, as Nutch and StormCrawler do)",
    default: AGENT_DEFAULTS.crawlDelayPolicy,
    choices: CRAWL_DELAY_POLICIES,
  },
  "max-active-hosts": {
    type: "integer",
    help: "hosts visited at once (one worker each)",
    default: AGENT_DEFAULTS.maxActiveHosts,
    min: 1,
  },
  "max-per-ip": {
    type: "integer",
    help: "requests in flight to one IP address at most, from the whole cluster (pages, retries, sitemaps and robots.txt alike; each counted at, and sent to, the first address its host resolves to then)",
    default: AGENT_DEFAULTS.maxPerIp,
    min: 1,
  },
  "ip-delay-ms": {
    type: "integer",
    help: "least time between the starts of two requests to one IP address, whichever hosts they are for (the whole cluster's with --ip-limit cluster; a host's robots.txt Crawl-delay, when longer, spaces its address too); default: --delay-ms",
    min: 0,
  },
  "max-pages-per-host": {
    type: "integer",
    help: "fetches per host at most (against traps)",
    default: AGENT_DEFAULTS.maxPagesPerHost,
    min: 1,
  },
  "max-depth": {
    type: "integer",
    help: "per-host link depth at most (against traps)",
    default: AGENT_DEFAULTS.maxDepth,
    min: 0,
  },
  "user-agent": {
    type: "string",
    help: "User-Agent header; the name of its first product (before its /version or (comment)) is the product token robots.txt groups are matched by: letters, _ and - only, or the agent obeys only the User-agent: * groups",
    default: AGENT_DEFAULTS.userAgent,
    placeholder: "UA",
  },
  scope: {
    type: "strings",
    help: "crawl only hosts equal to or under this domain (none: broad crawl)",
    placeholder: "DOMAIN",
  },
  "exit-when-done": {
    type: "boolean",
    help: "stop when the crawl is complete and print a summary; exit 1 when every URL tried failed",
  },
  "robots-retry-ms": {
    type: "integer",
    help: "wait before asking again for an unavailable robots.txt",
    default: AGENT_DEFAULTS.robotsRetryMs,
    min: 0,
  },
  "max-robots-attempts": {
    type: "integer",
    help: "attempts at an unavailable robots.txt before the host is given up",
    default: AGENT_DEFAULTS.maxRobotsAttempts,
    min: 1,
  },
  "max-fetch-attempts": {
    type: "integer",
    help: "attempts at a URL whose server refused, dropped or did not answer the connection, or answered 429 or 503",
    default: AGENT_DEFAULTS.maxFetchAttempts,
    min: 1,
  },
  "fetch-retry-ms": {
    type: "integer",
    help: "wait before retrying such a fetch (doubling at each further retry)",
    default: AGENT_DEFAULTS.fetchRetryMs,
    min: 0,
  },
  "max-body-bytes": {
    type: "integer",
    help: "body size cap per fetch",
    default: AGENT_DEFAULTS.maxBodyBytes,
    min: 1024,
  },
  "scrub-interval-ms": {
    type: "integer",
    help: "read a finished WARC file back against its .cdxj index every this many ms, file after file, while the agent runs: the pages of records found cut off, deleted or damaged are fetched again (a warc-damaged warning, UBI_ERR_STORAGE_CORRUPT); 0 for none (the files are still checked at each start)",
    default: AGENT_DEFAULTS.scrubIntervalMs,
    min: 0,
  },
  "fetch-timeout-ms": {
    type: "integer",
    help: "whole-fetch deadline",
    default: AGENT_DEFAULTS.fetchTimeoutMs,
    min: 100,
  },
  "ca-file": {
    type: "strings",
    help: "also trust the CA certificates in this PEM file for https: targets (besides Node's, the system's and NODE_EXTRA_CA_CERTS); a target whose certificate fails verification is never fetched, and fails as UBI_ERR_TLS",
    placeholder: "FILE",
  },
  "min-bytes-per-s": {
    type: "integer",
    help: "abort a body that brings fewer bytes a second than this over a whole --min-rate-window-ms (a server dripping bytes holds a worker for one window; 0: never)",
    default: AGENT_DEFAULTS.minBytesPerSecond,
    min: 0,
  },
  "min-rate-window-ms": {
    type: "integer",
    help: "the window --min-bytes-per-s is measured over",
    default: AGENT_DEFAULTS.minRateWindowMs,
    min: 100,
  },
  listen: {
    type: "string",
    help: "join a cluster: serve agent-to-agent gRPC on this address (port 0 picks one)",
    placeholder: "HOST:PORT",
  },
  advertise: {
    type: "string",
    help: "address other agents reach this one at, e.g. behind NAT or a proxy (default: the bound --listen)",
    placeholder: "HOST:PORT",
  },
  join: {
    type: "strings",
    help: "addresses of agents to join through, whichever answers (comma-separated or repeated; one live is enough); a restart also tries every agent its data dir saw alive (peers.json), so it rejoins while these are down. Only the agent that is the first address (or has no --join) starts a cluster when none answers; the others wait for one, so every agent may be given the same list. A name that resolves to several addresses (a headless Service) is tried at each but this agent's own, each peer's certificate checked against the name",
    placeholder: "HOST:PORT",
  },
  capacity: {
    type: "integer",
    help: "this agent's capacity: its share of hosts is proportional to it",
    default: 1,
    min: 1,
    max: 1000,
  },
  "heartbeat-ms": {
    type: "integer",
    help: "heartbeat interval of the failure detector",
    default: DEFAULT_HEARTBEAT_INTERVAL_MS,
    min: 10,
  },
  "suspect-after-ms": {
    type: "integer",
    help: "an agent silent this long is suspected dead",
    default: DEFAULT_SUSPECT_AFTER_MS,
    min: 20,
  },
  "recovery-k": {
    type: "integer",
    help: "agents asked at most, along the circle, for a host this agent now owns (its previous owners hand it over with the pages done there) before taking one none of them holds; 0 takes hosts without asking",
    default: DEFAULT_RECOVERY_K,
    min: 0,
    max: 1000,
  },
  "batch-urls": {
    type: "integer",
    help: "URLs a batch of links to another agent holds at most; a full batch goes at once, a smaller one within 30 s, or 250 ms when its destination is short of work (1: each URL in a message of its own)",
    default: DEFAULT_BATCH_URLS,
    min: 1,
    max: MAX_URLS_PER_BATCH,
  },
  "takeover-delay-ms": {
    type: "integer",
    help: "how long a crashed agent's hosts wait for it to come back before others crawl them",
    default: DEFAULT_TAKEOVER_DELAY_MS,
    min: 0,
  },
  sitemaps: {
    type: "string",
    help: "sitemaps read: all (those robots.txt lists, or else /sitemap.xml), listed (only those robots.txt lists) or off; their pages are queued like links, with their <lastmod> and <changefreq> kept as hints for --recrawl adaptive",
    default: AGENT_DEFAULTS.sitemaps,
    choices: SITEMAP_MODES,
  },
  http2: {
    type: "boolean",
    help: "offer HTTP/2 to https: servers (TLS ALPN; the server chooses); off by default until measured (bench/http2.mjs)",
  },
  dedup: {
    type: "string",
    help: "duplicate payloads (mirrors, URL aliases) stored once, the others as WARC revisit records: cluster (each payload digest asked of the agent that owns it), local (this agent's own index only) or off",
    default: AGENT_DEFAULTS.dedup,
    choices: DEDUP_MODES,
  },
  recrawl: {
    type: "string",
    help: "continuous crawling: off (each URL fetched once per data dir), fixed (every page fetched again every --recrawl-interval) adaptive (each page's interval from its estimated change rate, within --recrawl-min and --recrawl-max under --recrawl-budget; until a page's visits give an estimate, the period its sitemap's <changefreq> says, within the same bounds) or proportional (visits in proportion to the estimated rates, under the same bounds: worse than adaptive, for experiments that compare them); a page fetched again is asked for with If-None-Match / If-Modified-Since, and a 304 or an unchanged payload is written as a WARC revisit record; with revisits planned the agent is idle, not done, so --exit-when-done needs --recrawl-horizon",
    default: AGENT_DEFAULTS.recrawlMode,
    choices: RECRAWL_MODES,
  },
  "recrawl-interval": {
    type: "duration",
    help: "with --recrawl fixed: time between two fetches of a page (2s, 10m, 7d)",
    default: AGENT_DEFAULTS.recrawlInterval,
  },
  "recrawl-min": {
    type: "duration",
    help: "with --recrawl adaptive or proportional: the shortest interval a page gets",
    default: AGENT_DEFAULTS.recrawlMin,
  },
  "recrawl-max": {
    type: "duration",
    help: "with --recrawl adaptive or proportional: the longest interval a page gets (a page that never changes ends there, and so does one changing too often to be kept fresh at the budget)",
    default: AGENT_DEFAULTS.recrawlMax,
  },
  "recrawl-budget": {
    type: "number",
    help: "with --recrawl adaptive or proportional: pages a second this agent adds to the revisits, shared out to keep its pages freshest (Cho and Garcia-Molina's optimal policy) or in proportion to their change rates; in a cluster the agents' budgets are spent together, each agent spending their sum in proportion to the pages it revisits",
    default: AGENT_DEFAULTS.recrawlBudget,
    min: 0.000001,
    placeholder: "PAGES/S",
  },
  "recrawl-horizon": {
    type: "duration",
    help: "with --recrawl: plan no revisit later than this long after the agent started, so the crawl ends (--exit-when-done needs it or --recrawl-until); default: revisit for ever",
  },
  "recrawl-until": {
    type: "time",
    help: "with --recrawl: plan no revisit after this date and time (ISO 8601 with its offset from UTC: 2026-12-24T18:00:00Z), the same instant for every agent of a cluster whenever each started or joined (--exit-when-done needs it or --recrawl-horizon; with both, the earlier ends); default: revisit for ever",
  },
  "max-bandwidth": {
    type: "byte-rate",
    help: "bound on the bandwidth of this agent's page downloads together, in bytes per second with a unit: 5MB/s, 800KB/s, 512k, 2MiB, 1.5GB/s or 10Mbit/s (1 KB = 1 KiB = 1 k = 1,024 bytes; bits in powers of 1,000; /s may be left out; a bare number counts bytes per second; at least 1KB/s): a download starts only when the rates forecast from its server's past, with those in flight, stay under it (Diligenti et al.); politeness still holds; default: unbounded",
    min: MIN_MAX_BANDWIDTH,
    placeholder: "RATE",
  },
  "bandwidth-search-depth": {
    type: "integer",
    help: "with --max-bandwidth: waiting downloads (of ready hosts) looked at for one that fits the free bandwidth when the first does not",
    default: AGENT_DEFAULTS.bandwidthSearchDepth,
    min: 1,
    max: 100_000,
  },
  "bandwidth-control": {
    type: "string",
    help: "with --max-bandwidth: predictive (forecasts, as above) or stop-and-go (every download starts while the last second's bytes are under the bound, none while over: the naive control, for experiments)",
    default: AGENT_DEFAULTS.bandwidthControl,
    choices: BANDWIDTH_CONTROLS,
  },
  mode: {
    type: "string",
    help: "links found to other agents' hosts, as Cho and Garcia-Molina's modes: exchange (sent to their owners), firewall (dropped: some pages are never found) or cross (crawled here once this agent's own hosts are done: pages fetched twice, and two agents may visit one host at once); firewall and cross are for experiments",
    default: AGENT_DEFAULTS.linkMode,
    choices: LINK_MODES,
  },
  partition: {
    type: "string",
    help: "how URLs are spread over the agents: host (by their host's hash: one agent crawls each host) or url (by the URL's own hash: every agent crawls every host, each polite only on its own, and robots.txt is fetched by each; Cho and Garcia-Molina's URL-hash partitioning, for experiments: no hand-over or page recovery, so the membership must not change while crawling); every agent of a cluster must use the same: a newcomer that differs is refused",
    default: DEFAULT_PARTITIONING,
    choices: PARTITIONINGS,
  },
  "ip-limit": {
    type: "string",
    help: "whose requests --max-per-ip and --ip-delay-ms count: the whole cluster's (cluster: each address's politeness is kept by its authority, the agent owning the address's key on the circle, which leases an address one agent uses alone to that agent and grants a slot a request at a shared one; a 429 or 503 holds every agent's requests there; a graceful leave hands its addresses to their next authorities, and after a crash every agent tells their new authorities what it still holds there: an address leased to a live agent goes on at once, a shared one, or one with a report missing, waits a lease's time, --fetch-timeout-ms and --suspect-after-ms; the dead agent's own requests count for a lease's time and --fetch-timeout-ms) or this agent's own (agent: n agents may send n times --max-per-ip to a shared server)",
    default: DEFAULT_IP_LIMIT,
    choices: IP_LIMITS,
  },
  "warc-compression": {
    type: "string",
    help: `WARC files' compression: gzip (.warc.gz, one member a record) or zstd (.warc.zst, the IIPC Zstandard profile: a dictionary per file, one frame a record; about 17% smaller than gzip for about 25% more CPU; needs Node.js ${ZSTD_NODE_VERSION} or later)`,
    default: AGENT_DEFAULTS.warcCompression,
    choices: WARC_COMPRESSIONS,
  },
  "on-stop": {
    type: "string",
    help: "what SIGTERM/SIGINT does in a cluster: leave (hand every host and queued URL to its next owner, then exit) or hold (stop; the others hold this agent's hosts for --takeover-delay-ms, for a restart)",
    default: "leave",
    choices: ["leave", "hold"],
  },
  "leave-timeout-ms": {
    type: "integer",
    help: "longest a graceful leave may take before the agent stops anyway",
    default: DEFAULT_LEAVE_TIMEOUT_MS,
    min: 100,
  },
  "join-timeout-ms": {
    type: "integer",
    help: "how long to keep trying --join addresses that do not answer (a TLS/plaintext mismatch or a refused certificate fails at once)",
    default: DEFAULT_JOIN_TIMEOUT_MS,
    min: 100,
  },
  insecure: { type: "boolean", help: "plaintext agent-to-agent traffic (loopback demos and tests only)" },
  "tls-ca": {
    type: "string",
    help: "PEM of the cluster CA (mutual TLS between agents)",
    placeholder: "FILE",
  },
  "tls-cert": { type: "string", help: "PEM certificate of this agent", placeholder: "FILE" },
  "tls-key": { type: "string", help: "PEM private key of this agent", placeholder: "FILE" },
  http: {
    type: "string",
    help: "serve the read-only console on this address: a live dashboard at / (its recent fetches linked to their replay in ReplayWeb.page, from this agent's WARC files), /metrics (Prometheus), /api/stats, /healthz, /readyz (a non-loopback address needs --http-token-file, or the cluster's --tls-* for HTTPS with operator certificates)",
    placeholder: "HOST:PORT",
  },
  "http-token-file": {
    type: "string",
    help: "file whose first line is a bearer token (16+ characters) the console then requires, but for /healthz and /readyz",
    placeholder: "FILE",
  },
  config: {
    type: "string",
    help: "read flags from this YAML or JSON file (keys are the flags' names: delay-ms: 500); flags given here win",
    placeholder: "FILE",
  },
  "print-config": {
    type: "boolean",
    help: "print the effective configuration (file, flags and defaults) as YAML and exit",
  },
  progress: {
    type: "string",
    help: "progress output: auto (a live line on a terminal, log records otherwise), line, log or off",
    default: "auto",
    choices: PROGRESS_MODES,
  },
  "log-level": {
    type: "string",
    help: "least severe log records written",
    default: DEFAULT_LOG_LEVEL,
    choices: LOG_LEVELS,
  },
  "log-format": {
    type: "string",
    help: "log records as JSON lines (json), as lines for people (pretty), or pretty on a terminal and JSON otherwise (auto)",
    default: "auto",
    choices: LOG_FORMATS,
  },
} as const satisfies FlagSpecs;

/** The usage line of `ubicrawl agent --help`. */
export const AGENT_USAGE =
  "ubicrawl agent --id ID --data DIR [--seeds FILE|URL...] [--listen HOST:PORT [--join HOST:PORT,...]] [--config FILE] [flags]";
/** What `ubicrawl agent --help` says before the flags. */
export const AGENT_DESCRIPTION = `Runs one crawler agent. Alone, it owns every host. It visits hosts breadth-first, one worker
per host, politely, obeying robots.txt; it writes WARC files and a crawl log under --data, and resumes
from there after a restart (even after SIGKILL). It runs until SIGINT/SIGTERM, or with
--exit-when-done until the crawl is complete. Alone (no --listen) with nothing to do at the start, no
seed to queue and nothing queued in --data, nothing could ever give it work: it says so and exits,
0 when its data dir holds a crawl (complete), 2 when it holds none (give --seeds).

In a cluster, SIGTERM or SIGINT is a graceful leave (--on-stop leave, the default): the agent stops
fetching, hands every host it crawled (with the pages it fetched there) and every queued URL to their
next owners, tells the others and exits 0, within --leave-timeout-ms; a second signal stops at once.
Use it to scale down for good. --on-stop hold keeps today's stop for rolling restarts: the agent just
stops, and the others hold its hosts for --takeover-delay-ms so that, restarted on the same --data by
then, it takes them back untouched.

With --listen it is one agent of a decentralized cluster: it joins through --join (any live agent),
owns the hosts that identifier-seeded consistent hashing gives it, sends links of other agents' hosts
to them over gRPC, and takes over the hosts of agents that die. Behind NAT, a container or a proxy,
--advertise names the address the others are told to reach it at. Agent-to-agent traffic uses mutual
TLS (--tls-ca, --tls-cert, --tls-key), or plaintext with --insecure.

It logs to stderr: lines for people on a terminal, one JSON record a line otherwise (for a log
pipeline: level, time, agent, event, msg and fields; --log-format, --log-level).

A URL is tried once per data dir: rerun on the same --data, a crawl resumes what is queued, and says
so when its seeds were all done before (to crawl them again, give a new --data folder). With --recrawl
fixed or adaptive the crawl is continuous instead: each page fetched is fetched again when due
(conditionally; a 304 or an unchanged page is a WARC revisit record), so an agent with only future
revisits is idle, not done, and runs until stopped; with --exit-when-done it needs --recrawl-horizon,
and stops once no revisit is planned within it. In a cluster each page's schedule moves with its host
(joins, leaves, claims): it is revisited when due by its host's owner, once. Exit codes: 0 done or stopped, 1 an error (the message
says what to do), 2 a bad flag.`;
