// The hand-written mutants bench/mutants.mjs applies; test/bench/mutant-list.test.ts checks that each
// still finds its text and names tests that exist, so a refactoring cannot leave one stale unseen.

/**
 * The mutants: `file` has `from` exactly once; it becomes `to`; then at least one of `tests` (a test
 * file and the name of one of its tests) must fail.
 */
export const MUTANTS = [
  {
    name: "no-per-host-lock",
    claim: "a host is visited by one worker at a time",
    file: "src/frontier/scheduler.ts",
    from: "if (this.stopped || this.active.has(host) || this.ready.has(host) || this.parked.has(host)) return;",
    to: "if (this.stopped || this.ready.has(host) || this.parked.has(host)) return;",
    tests: [
      ["test/agent/one-request-at-a-time.test.ts", "waits the delay after each response"],
      ["test/chaos/single-agent-chaos.test.ts", "fetches again only what was not durable at a kill"],
    ],
  },
  {
    name: "no-ip-gate",
    claim: "at most --max-per-ip requests in flight to one address",
    file: "src/frontier/ip-gate.ts",
    from: "if (used < this.maxPerIp) {",
    to: "if (used < this.maxPerIp || true) {",
    tests: [["test/agent/one-request-at-a-time.test.ts", "keeps at most --max-per-ip requests in flight"]],
  },
  {
    name: "robots-ignored",
    claim: "no URL robots.txt disallows is fetched",
    file: "src/agent/url-checks.ts",
    from: 'return rules.isAllowed(url.entry.url) ? undefined : { kind: "drop", reason: "robots" };',
    to: "return undefined;",
    tests: [
      ["test/agent/url-checks.test.ts", "drops a URL robots.txt disallows"],
      ["test/agent/single-agent.test.ts", "requests no URL that robots.txt disallows"],
    ],
  },
  {
    name: "no-claims",
    claim: "a new owner gets a host's crawl from its previous owner before fetching",
    file: "src/cluster/cluster-hooks.ts",
    from: "const claimed = deps.claim(host);",
    to: "const claimed = (tenure.take(host), 0) as number | Promise<number>;",
    tests: [["test/cluster/membership-in-process.test.ts", "three joining half a second apart"]],
  },
  {
    name: "no-done-set",
    claim: "a hand-over carries the pages done on the host",
    file: "src/cluster/hand-over.ts",
    from: "done: packFingerprints(done),",
    to: "done: packFingerprints([]),",
    tests: [["test/cluster/membership-in-process.test.ts", "a graceful leave hands its hosts over"]],
  },
  {
    name: "sigterm-stops",
    claim: "SIGTERM is a graceful leave",
    file: "src/cli/agent-command.ts",
    from: 'settings.onStop === "leave"',
    to: 'settings.onStop === "never"',
    tests: [["test/cluster/membership.test.ts", "SIGTERM is a graceful leave"]],
  },
  {
    name: "attempts-dropped-at-hand-over",
    claim: "--max-fetch-attempts holds across owners",
    file: "src/cluster/view-stabilizer.ts",
    from: "exchange.send(ownership.ownerOfUrl(entry.url, host), entry.url, entry.depth, host, traitsOf(entry)),",
    to: "exchange.send(ownership.ownerOfUrl(entry.url, host), entry.url, entry.depth, host, {}),",
    tests: [["test/cluster/membership-in-process.test.ts", "tried maxFetchAttempts times in all"]],
  },
  {
    name: "stats-doubled",
    claim: "GetStats reports the pages fetched",
    file: "src/cluster/partition-stats.ts",
    from: "pagesFetched: counted.pagesFetched,",
    to: "pagesFetched: counted.pagesFetched * 2,",
    tests: [["test/cluster/stats-cli.test.ts", "prints every documented field"]],
  },
];
