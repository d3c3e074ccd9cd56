import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { MAX_RECRAWL_BUDGET } from "../../src/transport/limits.js";
import {
  validateAgentStats,
  validateBlacklistSync,
  validateClaimReply,
  validateClaimRequest,
  validateControlReply,
  validateControlRequest,
  validateDigestCheck,
  validateDigestSettleAck,
  validateDigestSettlements,
  validateDigestVerdicts,
  validateHandOverReply,
  validateHandOverRequest,
  validateHeartbeatReply,
  validateHeartbeatRequest,
  validateJoinReply,
  validateJoinRequest,
  validateMember,
  validateSequence,
  validateStatsReply,
  validateStatsRequest,
  validateUrlBatch,
  validateUrlBatchAck,
} from "../../src/transport/validate.js";
import { LOAD, member, STATS } from "./helpers.js";

/** The message of the BadMessage error `check` throws, or "accepted". */
function refusal(check: () => unknown): string {
  try {
    check();
  } catch (error) {
    if (!isUbiError(error, ErrorCode.BadMessage)) throw error;
    return error.message;
  }
  return "accepted";
}

const handOver = (overrides: Record<string, unknown> = {}) => ({
  host: "h1.test:80",
  status: "GRANTED",
  holder: null,
  done: new Uint8Array(16),
  more: false,
  pagesFetched: 2,
  abandoned: "",
  pages: [],
  ...overrides,
});

const DIGEST = `sha1:${"ABCDEFGH".repeat(4)}`;
const ORIGINAL = {
  url: "http://a.test/",
  date: "2026-11-27T10:00:00.000Z",
  recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
};

/** Every validator with a valid message; `path` is what its errors put before a field's name. */
const MESSAGES: { name: string; validate: (value: unknown) => unknown; path: string; value: object }[] = [
  { name: "Member", validate: validateMember, path: "member.", value: member("a") },
  { name: "JoinRequest", validate: validateJoinRequest, path: "", value: { member: member("a") } },
  { name: "JoinReply", validate: validateJoinReply, path: "", value: { members: [member("a")] } },
  {
    name: "HeartbeatRequest",
    validate: validateHeartbeatRequest,
    path: "",
    value: { from: member("a"), members: [member("b")], load: LOAD, unanswered: true },
  },
  {
    name: "HeartbeatReply",
    validate: validateHeartbeatReply,
    path: "",
    value: { members: [member("b")], load: LOAD, from: member("b") },
  },
  {
    name: "UrlBatch",
    validate: validateUrlBatch,
    path: "",
    value: { batchId: "b1", fromId: "a", urls: [{ url: "http://x.test/", depth: 1, attempts: 2 }] },
  },
  {
    name: "UrlBatchAck",
    validate: validateUrlBatchAck,
    path: "",
    value: { accepted: 1, forwarded: 2, duplicates: 3 },
  },
  {
    name: "ClaimRequest",
    validate: validateClaimRequest,
    path: "",
    value: { claimant: member("a"), hosts: [{ host: "h1.test:80", skip: 3, skipPages: 2 }] },
  },
  {
    name: "ClaimReply",
    validate: validateClaimReply,
    path: "",
    value: { hosts: [handOver({ status: "PASSED", holder: member("c") })] },
  },
  {
    name: "HandOverRequest",
    validate: validateHandOverRequest,
    path: "",
    value: { from: member("a"), hosts: [handOver({ holder: member("c"), abandoned: "disk full" })] },
  },
  { name: "HandOverReply", validate: validateHandOverReply, path: "", value: { taken: 4 } },
  { name: "StatsRequest", validate: validateStatsRequest, path: "", value: { cluster: true } },
  { name: "AgentStats", validate: validateAgentStats, path: "stats.", value: STATS },
  { name: "StatsReply", validate: validateStatsReply, path: "", value: { agents: [STATS] } },
  {
    name: "ControlRequest",
    validate: validateControlRequest,
    path: "",
    value: { action: "BLACKLIST_ADD", argument: "x.test", urls: [] },
  },
  { name: "ControlReply", validate: validateControlReply, path: "", value: { ok: true, message: "done" } },
  {
    name: "BlacklistSync",
    validate: validateBlacklistSync,
    path: "",
    value: {
      entries: [{ pattern: "*.spam.test", blocked: true, changedAtMs: 1_700_000_000_000, changedBy: "a" }],
    },
  },
  {
    name: "DigestCheck",
    validate: validateDigestCheck,
    path: "",
    value: {
      fromId: "a",
      digests: [DIGEST],
      settlements: [{ digest: DIGEST, original: ORIGINAL }],
      fromIncarnation: 7,
    },
  },
  {
    name: "DigestVerdicts",
    validate: validateDigestVerdicts,
    path: "",
    value: { verdicts: [{ state: "DIGEST_SEEN", original: ORIGINAL }] },
  },
  {
    name: "DigestSettlements",
    validate: validateDigestSettlements,
    path: "",
    value: { fromId: "b", settlements: [{ digest: DIGEST, original: ORIGINAL }] },
  },
  { name: "DigestSettleAck", validate: validateDigestSettleAck, path: "", value: {} },
];

/** A copy of `root` with the value at `keys` replaced. */
function replaced(root: unknown, keys: readonly (string | number)[], value: unknown): unknown {
  if (keys.length === 0) return value;
  const [key, ...rest] = keys;
  if (Array.isArray(root)) {
    const copy: unknown[] = [...root];
    copy[key as number] = replaced(copy[key as number], rest, value);
    return copy;
  }
  const copy = { ...(root as Record<string, unknown>) };
  copy[key as string] = replaced(copy[key as string], rest, value);
  return copy;
}

interface Field {
  readonly keys: readonly (string | number)[];
  /** How the validator names the field in its errors. */
  readonly path: string;
  /** A value of the wrong kind there, and how the refusal ends. */
  readonly wrong: unknown;
}

/** Every field of `value`, nested ones included, with a wrong value for it. */
function* fields(value: unknown, keys: (string | number)[], path: string): Generator<Field> {
  if (value instanceof Uint8Array) {
    yield { keys, path, wrong: "bytes?" };
  } else if (Array.isArray(value)) {
    yield { keys, path, wrong: "a list?" };
    yield* fields(value[0], [...keys, 0], `${path}[0]`);
  } else if (typeof value === "object" && value !== null) {
    if (keys.length > 0) yield { keys, path, wrong: [] };
    const isCounts = path.endsWith(".errors");
    for (const [key, inner] of Object.entries(value)) {
      const innerPath = isCounts ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
      yield* fields(inner, [...keys, key], innerPath);
    }
  } else {
    // A symbol is no string, number or boolean, nor a message.
    yield { keys, path, wrong: Symbol("wrong") };
  }
}

describe("message validation, field by field", () => {
  it.each(MESSAGES)("accepts a valid $name as an equal, clean copy", ({ validate, value }) => {
    const copy = validate({ ...value, unknownField: 1 });
    expect(copy).toEqual(value);
    expect(copy).not.toBe(value);
  });

  it.each(MESSAGES)("refuses a $name that is missing or not a message", ({ name, validate, path }) => {
    const at = path === "" ? name : path.slice(0, -1);
    for (const wrong of [undefined, null, "text", 7, []]) {
      expect(refusal(() => validate(wrong))).toBe(`${at}: missing or not a message`);
    }
  });

  it.each(MESSAGES.filter(({ value }) => Object.keys(value).length > 0))(
    "refuses a wrong value in each field of a $name, naming the field",
    ({ validate, path, value }) => {
      const prefix = path.slice(0, -1);
      let checked = 0;
      for (const field of fields(value, [], prefix)) {
        const message = refusal(() => validate(replaced(value, field.keys, field.wrong)));
        expect(message.startsWith(`${field.path}: `), `${field.path} → ${message}`).toBe(true);
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
    },
  );
});

describe("message validation, value by value", () => {
  const withMember = (overrides: Record<string, unknown>) => () =>
    validateMember({ ...member("a"), ...overrides });
  const withStats = (overrides: Record<string, unknown>) => () =>
    validateAgentStats({ ...STATS, ...overrides });
  const batch = (overrides: Record<string, unknown>) => () =>
    validateUrlBatch({
      batchId: "b1",
      fromId: "a",
      urls: [{ url: "http://x.test/", depth: 0 }],
      ...overrides,
    });
  const urlBatchOf = (url: unknown) => batch({ urls: [{ url, depth: 0 }] });

  it("says why a value is refused", () => {
    expect(refusal(withMember({ id: "" }))).toBe("member.id: empty");
    expect(refusal(withMember({ id: 5 }))).toBe("member.id: not a string");
    expect(refusal(withMember({ id: "a/b" }))).toBe("member.id: agent ids use only [A-Za-z0-9._-]");
    expect(refusal(withMember({ address: "nowhere" }))).toBe("member.address: not a host:port address");
    expect(refusal(withMember({ capacity: 0 }))).toBe("member.capacity: not an integer in [1, 2^32)");
    expect(refusal(withMember({ incarnation: -1 }))).toBe(
      "member.incarnation: not a non-negative safe integer",
    );
    expect(refusal(withMember({ status: "DEAD" }))).toBe("member.status: not one of ALIVE, SUSPECTED, LEFT");
    expect(refusal(withStats({ circleShare: 2 }))).toBe("stats.circleShare: not a finite number in [0, 1]");
    expect(refusal(withStats({ pagesPerSecond: -1 }))).toBe(
      `stats.pagesPerSecond: not a finite number in [0, ${Number.MAX_VALUE}]`,
    );
    expect(refusal(withStats({ idle: 1 }))).toBe("stats.idle: not a boolean");
    expect(refusal(withStats({ view: {} }))).toBe("stats.view: not a list");
    expect(refusal(urlBatchOf("http://x.test/\n"))).toBe("urls[0].url: control characters in URL");
    expect(refusal(batch({ urls: [{ url: "http://x.test/", depth: -1 }] }))).toBe(
      "urls[0].depth: not an integer in [0, 2^32)",
    );
    expect(refusal(batch({ batchId: "b\u0001" }))).toBe("batchId: control characters");
  });

  it("takes text up to its length limit and no further", () => {
    expect(refusal(withMember({ id: "a".repeat(128) }))).toBe("accepted");
    expect(refusal(withMember({ id: "a".repeat(129) }))).toBe("member.id: longer than 128 chars");
    expect(refusal(urlBatchOf(`http://x.test/${"a".repeat(4096 - 14)}`))).toBe("accepted");
    expect(refusal(urlBatchOf(`http://x.test/${"a".repeat(4097 - 14)}`))).toBe(
      "urls[0].url: longer than 4096 chars",
    );
  });

  it("treats C0 controls and DEL as control characters, and nothing else", () => {
    for (const c of ["\u0000", "\u001f", "\u007f"]) {
      expect(refusal(urlBatchOf(`http://x.test/${c}`)), JSON.stringify(c)).not.toBe("accepted");
    }
    for (const c of [" ", "~", "\u0080", "é"]) {
      expect(refusal(urlBatchOf(`http://x.test/${c}`)), JSON.stringify(c)).toBe("accepted");
    }
  });

  it("bounds integers and numbers at both ends", () => {
    expect(refusal(withMember({ capacity: 1 }))).toBe("accepted");
    expect(refusal(withMember({ capacity: 0xffff_ffff }))).toBe("accepted");
    expect(refusal(withMember({ capacity: 2 ** 32 }))).not.toBe("accepted");
    expect(refusal(withMember({ capacity: 1.5 }))).not.toBe("accepted");
    expect(refusal(withMember({ incarnation: 0 }))).toBe("accepted");
    expect(refusal(withMember({ incarnation: Number.MAX_SAFE_INTEGER }))).toBe("accepted");
    expect(refusal(withMember({ incarnation: 2 ** 53 }))).not.toBe("accepted");
    expect(refusal(withMember({ incarnation: "1" }))).not.toBe("accepted");
    expect(refusal(withStats({ replicas: 0 }))).toBe("accepted");
    expect(refusal(withStats({ circleShare: 0 }))).toBe("accepted");
    expect(refusal(withStats({ circleShare: 1 }))).toBe("accepted");
    expect(refusal(withStats({ circleShare: -0.01 }))).not.toBe("accepted");
    expect(refusal(withStats({ circleShare: "0.5" }))).not.toBe("accepted");
    expect(refusal(withStats({ communicationOverhead: Number.POSITIVE_INFINITY }))).not.toBe("accepted");
    expect(refusal(withStats({ communicationOverhead: Number.NaN }))).not.toBe("accepted");
    expect(refusal(withStats({ communicationOverhead: Number.MAX_VALUE }))).toBe("accepted");
    const revisits = (figures: Record<string, unknown>) =>
      withStats({ revisits: { ...STATS.revisits, ...figures } });
    expect(refusal(revisits({ estimatedFreshness: 1 }))).toBe("accepted");
    expect(refusal(revisits({ estimatedFreshness: 1.01 }))).toBe(
      "stats.revisits.estimatedFreshness: not a finite number in [0, 1]",
    );
    expect(refusal(revisits({ budget: -1 }))).toBe(
      "stats.revisits.budget: not a finite number in [0, 10000000000]",
    );
    // An agent that predates the estimate and the shared budget sends none of their fields: zeros.
    const {
      estimatedFreshness: _f,
      freshnessPages: _p,
      budget: _b,
      budgetPages: _bp,
      ...older
    } = STATS.revisits ?? {};
    expect(validateAgentStats({ ...STATS, revisits: older }).revisits).toMatchObject({
      estimatedFreshness: 0,
      freshnessPages: 0,
      budget: 0,
      budgetPages: 0,
    });
  });

  it("takes lists up to their length limit and no further", () => {
    const reasons = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ reason: `r${i}`, hosts: 1, nextInMs: 0 }));
    expect(refusal(withStats({ waiting: reasons(64) }))).toBe("accepted");
    expect(refusal(withStats({ waiting: reasons(65) }))).toBe("stats.waiting: more than 64 items");
    const claims = (n: number) => Array.from({ length: n }, (_, i) => ({ host: `h${i}.test:80`, skip: 0 }));
    expect(refusal(() => validateClaimRequest({ claimant: member("a"), hosts: claims(1000) }))).toBe(
      "accepted",
    );
    expect(refusal(() => validateClaimRequest({ claimant: member("a"), hosts: claims(1001) }))).toBe(
      "hosts: more than 1000 items",
    );
  });

  it("checks error counts: their number, names and values", () => {
    const classes = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`E${i}`, i]));
    expect(refusal(withStats({ errors: classes(1024) }))).toBe("accepted");
    expect(refusal(withStats({ errors: classes(1025) }))).toBe("stats.errors: more than 1024 error classes");
    expect(refusal(withStats({ errors: { "": 1 } }))).toBe("stats.errors key: empty");
    expect(refusal(withStats({ errors: { X: -1 } }))).toBe(
      "stats.errors[X]: not a non-negative safe integer",
    );
  });

  it("reads an unset stats status as ALIVE (older agents) and keeps a set one", () => {
    expect(validateAgentStats({ ...STATS, status: "MEMBER_STATUS_UNSPECIFIED" }).status).toBe("ALIVE");
    expect(validateAgentStats({ ...STATS, status: "LEFT" }).status).toBe("LEFT");
    expect(refusal(withStats({ status: "GONE" }))).toBe("stats.status: not one of ALIVE, SUSPECTED, LEFT");
  });

  it("keeps a URL's failed attempts only when there were some", () => {
    const parse = (attempts: unknown) =>
      validateUrlBatch({ batchId: "b", fromId: "a", urls: [{ url: "http://x.test/", depth: 2, attempts }] })
        .urls[0];
    expect(parse(undefined)).toStrictEqual({ url: "http://x.test/", depth: 2 });
    expect(parse(0)).toStrictEqual({ url: "http://x.test/", depth: 2 });
    expect(parse(3)).toStrictEqual({ url: "http://x.test/", depth: 2, attempts: 3 });
    expect(refusal(() => parse(-1))).toBe("urls[0].attempts: not an integer in [0, 2^32)");
  });

  it("keeps a URL's sitemap mark and lastmod only when set, and refuses malformed ones", () => {
    const parse = (fields: Record<string, unknown>) =>
      validateUrlBatch({ batchId: "b", fromId: "a", urls: [{ url: "http://x.test/", depth: 0, ...fields }] })
        .urls[0];
    // What an older agent (or proto3's defaults) sends: nothing set.
    expect(parse({ sitemap: false, lastmod: "" })).toStrictEqual({ url: "http://x.test/", depth: 0 });
    expect(parse({ sitemap: true, lastmod: "2026-11-27T10:00:00+00:00" })).toStrictEqual({
      url: "http://x.test/",
      depth: 0,
      sitemap: true,
      lastmod: "2026-11-27T10:00:00+00:00",
    });
    expect(parse({ sitemap: true, sitemapFor: "site.test:8080" })).toStrictEqual({
      url: "http://x.test/",
      depth: 0,
      sitemap: true,
      sitemapFor: "site.test:8080",
    });
    expect(parse({ sitemapFor: "" })).toStrictEqual({ url: "http://x.test/", depth: 0 });
    expect(refusal(() => parse({ sitemapFor: 5 }))).toBe("urls[0].sitemapFor: not a string");
    expect(refusal(() => parse({ sitemapFor: "Site.test,x" }))).toBe("urls[0].sitemapFor: not a host key");
    expect(refusal(() => parse({ sitemap: "yes" }))).toBe("urls[0].sitemap: not a boolean");
    expect(refusal(() => parse({ lastmod: "x".repeat(65) }))).toBe("urls[0].lastmod: longer than 64 chars");
    expect(refusal(() => parse({ lastmod: "2026,11" }))).toBe(
      "urls[0].lastmod: holds a comma or a control character",
    );
    expect(refusal(() => parse({ lastmod: "2026\t11" }))).toBe(
      "urls[0].lastmod: holds a comma or a control character",
    );
  });

  it("keeps a URL's changefreq when it is one of sitemaps.org's values, and refuses any other", () => {
    const parse = (changefreq: unknown) =>
      validateUrlBatch({ batchId: "b", fromId: "a", urls: [{ url: "http://x.test/", depth: 1, changefreq }] })
        .urls[0];
    expect(parse("hourly")).toStrictEqual({ url: "http://x.test/", depth: 1, changefreq: "hourly" });
    expect(parse("never")).toStrictEqual({ url: "http://x.test/", depth: 1, changefreq: "never" });
    // An older agent sends none; proto3's default is the empty string.
    expect(parse(undefined)).toStrictEqual({ url: "http://x.test/", depth: 1 });
    expect(parse("")).toStrictEqual({ url: "http://x.test/", depth: 1 });
    const values = "always, hourly, daily, weekly, monthly, yearly, never";
    // Written as sitemaps.org writes them: the sender's parser has put them so already.
    for (const bad of ["Daily", " daily", "fortnightly", "daily,r", "3600", 7, true]) {
      expect(refusal(() => parse(bad))).toBe(`urls[0].changefreq: not one of ${values}`);
    }
  });

  it("takes a heartbeat's revisit budget up to --recrawl-budget's highest, so a cluster's sum stays finite", () => {
    const request = (revisitBudget: number) => ({
      from: member("a"),
      members: [],
      load: { ...LOAD, revisitPages: 12, revisitBudget },
    });
    expect(validateHeartbeatRequest(request(MAX_RECRAWL_BUDGET)).load?.revisitBudget).toBe(
      MAX_RECRAWL_BUDGET,
    );
    expect(refusal(() => validateHeartbeatRequest(request(MAX_RECRAWL_BUDGET * 2)))).toBe(
      `load.revisitBudget: not a finite number in [0, ${MAX_RECRAWL_BUDGET}]`,
    );
    expect(refusal(() => validateHeartbeatRequest(request(Number.NaN)))).toBe(
      `load.revisitBudget: not a finite number in [0, ${MAX_RECRAWL_BUDGET}]`,
    );
  });

  it("reads a heartbeat request without `unanswered` (older agents) as false", () => {
    const request = { from: member("a"), members: [], load: LOAD };
    expect(validateHeartbeatRequest(request).unanswered).toBe(false);
    expect(validateHeartbeatRequest({ ...request, unanswered: true }).unanswered).toBe(true);
  });

  it("reads a heartbeat request's partitioning, absent or empty (older agents) as host, and refuses another", () => {
    const request = { from: member("a"), members: [], load: LOAD };
    expect(validateHeartbeatRequest(request).partitioning ?? "host").toBe("host");
    expect(validateHeartbeatRequest({ ...request, partitioning: "" }).partitioning ?? "host").toBe("host");
    expect(validateHeartbeatRequest({ ...request, partitioning: "url" }).partitioning).toBe("url");
    expect(validateHeartbeatRequest({ ...request, partitioning: "host" }).partitioning).toBe("host");
    expect(refusal(() => validateHeartbeatRequest({ ...request, partitioning: "domain" }))).toBe(
      "partitioning: not one of host, url",
    );
  });

  it("refuses a heartbeat stream message without a sequence", () => {
    expect(validateSequence({ sequence: 5 }, "HeartbeatRequest")).toBe(5);
    expect(refusal(() => validateSequence({ sequence: 0 }, "HeartbeatReply"))).toBe("sequence: missing (0)");
    expect(refusal(() => validateSequence({ sequence: "1" }, "HeartbeatReply"))).toBe(
      "sequence: not a non-negative safe integer",
    );
    expect(refusal(() => validateSequence(null, "HeartbeatReply"))).toBe(
      "HeartbeatReply: missing or not a message",
    );
  });

  it("refuses host keys with spaces, slashes or controls, and overlong ones", () => {
    const claim = (host: string) => () =>
      validateClaimRequest({ claimant: member("a"), hosts: [{ host, skip: 0 }] });
    for (const host of ["a b:80", "a\tb:80", "a/b:80", "a\u0001:80"]) {
      expect(refusal(claim(host)), JSON.stringify(host)).toBe("hosts[0].host: not a host key (name:port)");
    }
    expect(refusal(claim(`${"a".repeat(259)}:80`))).toBe("accepted");
    expect(refusal(claim(`${"a".repeat(260)}:80`))).toBe("hosts[0].host: longer than 262 chars");
  });

  it("takes a busy address's host names as host keys, no more of them than its hosts", () => {
    const [sample] = STATS.busiestIps;
    const busy = (figures: Record<string, unknown>) => withStats({ busiestIps: [{ ...sample, ...figures }] });
    expect(refusal(busy({ hosts: 2, hostNames: ["[::1]:8080", "xn--bcher-kva.test"] }))).toBe("accepted");
    for (const name of [
      "a.test\u001b[2J",
      "a b.test",
      "A.test",
      "a.test/x",
      "a\u202e.test",
      "a\u009b.test",
    ]) {
      expect(refusal(busy({ hostNames: [name] })), JSON.stringify(name)).toBe(
        "stats.busiestIps[0].hostNames[0]: not a host key",
      );
    }
    expect(refusal(busy({ hostNames: [""] }))).toBe("stats.busiestIps[0].hostNames[0]: empty");
    expect(refusal(busy({ hostNames: [`${"a".repeat(263)}`] }))).toBe(
      "stats.busiestIps[0].hostNames[0]: longer than 262 chars",
    );
    expect(refusal(busy({ hosts: 1, moreHosts: false }))).toBe(
      "stats.busiestIps[0].hostNames: more names (3) than hosts (1)",
    );
    const names = (n: number) => Array.from({ length: n }, (_, i) => `h${i}.test`);
    expect(refusal(busy({ hosts: 100, hostNames: names(16) }))).toBe("accepted");
    expect(refusal(busy({ hosts: 100, hostNames: names(17) }))).toBe(
      "stats.busiestIps[0].hostNames: more than 16 items",
    );
  });

  it("requires a holder for PASSED and NOT_YOURS hand-overs only", () => {
    const reply = (overrides: Record<string, unknown>) => () =>
      validateClaimReply({ hosts: [handOver(overrides)] });
    expect(refusal(reply({ status: "PASSED" }))).toBe("hosts[0].holder: required when PASSED");
    expect(refusal(reply({ status: "NOT_YOURS", holder: undefined }))).toBe(
      "hosts[0].holder: required when NOT_YOURS",
    );
    for (const status of ["GRANTED", "NOT_HELD", "LATER"]) {
      expect(refusal(reply({ status })), status).toBe("accepted");
    }
    expect(validateClaimReply({ hosts: [handOver({ holder: undefined })] }).hosts[0]?.holder).toBeNull();
  });

  it("takes done fingerprints as whole 8-byte words, up to 2 MiB in one message", () => {
    const reply =
      (...sizes: number[]) =>
      () =>
        validateClaimReply({
          hosts: sizes.map((n, i) => handOver({ host: `h${i}.test:80`, done: new Uint8Array(n) })),
        });
    expect(refusal(reply(7))).toBe("hosts[0].done: not a whole number of 8-byte fingerprints");
    expect(refusal(reply(0))).toBe("accepted");
    expect(refusal(reply(1024 * 1024, 1024 * 1024))).toBe("accepted");
    expect(refusal(reply(1024 * 1024, 1024 * 1024 + 8))).toBe(
      "hosts: more than 2097152 bytes of done fingerprints",
    );
    expect(refusal(() => validateClaimReply({ hosts: [handOver({ done: [1, 2] })] }))).toBe(
      "hosts[0].done: not bytes",
    );
    expect(refusal(() => validateClaimReply({ hosts: [handOver({ abandoned: "x".repeat(65_537) })] }))).toBe(
      "hosts[0].abandoned: longer than 65536 chars",
    );
  });

  it("takes only GRANTED hosts in a pushed hand-over", () => {
    const request =
      (...statuses: string[]) =>
      () =>
        validateHandOverRequest({
          from: member("a"),
          hosts: statuses.map((status) => handOver({ status, holder: member("c") })),
        });
    expect(refusal(request("GRANTED", "GRANTED"))).toBe("accepted");
    expect(refusal(request("GRANTED", "LATER"))).toBe("hosts[1].status: a pushed hand-over is GRANTED");
    expect(refusal(request("PASSED"))).toBe("hosts[0].status: a pushed hand-over is GRANTED");
  });

  it("requires a control argument only for the blacklist actions, and no controls in it", () => {
    expect(refusal(() => validateControlRequest({ action: "BLACKLIST_ADD", argument: "" }))).toBe(
      "argument: empty",
    );
    expect(refusal(() => validateControlRequest({ action: "PAUSE", argument: "" }))).toBe("accepted");
    expect(refusal(() => validateControlRequest({ action: "RESUME", argument: "x\u0000" }))).toBe(
      "argument: control characters",
    );
    expect(
      refusal(() => validateControlRequest({ action: "CONTROL_ACTION_UNSPECIFIED", argument: "" })),
    ).toBe(
      "action: not one of PAUSE, RESUME, LEAVE, BLACKLIST_ADD, BLACKLIST_REMOVE, ADD_SEEDS, SET, BLACKLIST_LIST",
    );
    expect(refusal(() => validateControlReply({ ok: false, message: "" }))).toBe("accepted");
  });

  it("takes `cluster` for every action but ADD_SEEDS, and checks each agent's outcome of a relayed command", () => {
    expect(validateControlRequest({ action: "PAUSE", argument: "", cluster: true })).toEqual({
      action: "PAUSE",
      argument: "",
      urls: [],
      cluster: true,
    });
    expect(validateControlRequest({ action: "PAUSE", argument: "", cluster: false })).not.toHaveProperty(
      "cluster",
    );
    expect(
      refusal(() =>
        validateControlRequest({
          action: "ADD_SEEDS",
          argument: "",
          urls: ["http://a.test/"],
          cluster: true,
        }),
      ),
    ).toBe("cluster: not taken by ADD_SEEDS");
    const outcome = { id: "a2", address: "10.0.0.2:7000", ok: true, message: "paused" };
    expect(validateControlReply({ ok: true, message: "2 of 2", agents: [outcome] })).toEqual({
      ok: true,
      message: "2 of 2",
      agents: [outcome],
    });
    expect(validateControlReply({ ok: true, message: "", agents: [] })).not.toHaveProperty("agents");
    expect(
      refusal(() => validateControlReply({ ok: true, message: "", agents: [{ ...outcome, address: "x" }] })),
    ).toBe("agents[0].address: not a host:port address");
  });

  it("takes `force` and `relayed` for ADD_SEEDS only", () => {
    const seeds = { action: "ADD_SEEDS", argument: "", urls: ["http://a.test/"] };
    expect(validateControlRequest({ ...seeds, force: true, relayed: true })).toEqual({
      ...seeds,
      force: true,
      relayed: true,
    });
    expect(validateControlRequest({ ...seeds, force: false })).not.toHaveProperty("force");
    expect(refusal(() => validateControlRequest({ action: "PAUSE", argument: "", force: true }))).toBe(
      "force: not taken by PAUSE",
    );
    expect(refusal(() => validateControlRequest({ action: "PAUSE", argument: "", relayed: true }))).toBe(
      "relayed: not taken by PAUSE",
    );
    expect(refusal(() => validateControlRequest({ ...seeds, force: "yes" }))).toBe("force: not a boolean");
  });

  it("takes what a peer's blacklist merge gave back in a sync reply, counts only", () => {
    const restored = {
      hosts: 1,
      queuedHere: 39,
      sentToOwners: 0,
      outOfLimits: 0,
      doneMeanwhile: 0,
      beyondCap: 2,
    };
    expect(validateBlacklistSync({ entries: [], restored })).toEqual({ entries: [], restored });
    expect(validateBlacklistSync({ entries: [], restored: null })).toEqual({ entries: [] });
    expect(validateBlacklistSync({ entries: [], restored: { hosts: 1 } }).restored).toMatchObject({
      hosts: 1,
      queuedHere: 0,
    });
    expect(refusal(() => validateBlacklistSync({ entries: [], restored: { ...restored, hosts: -1 } }))).toBe(
      "restored.hosts: not an integer in [0, 2^32)",
    );
  });

  it("requires an argument for SET too, and says why URLs are refused", () => {
    expect(refusal(() => validateControlRequest({ action: "SET", argument: "" }))).toBe("argument: empty");
    expect(refusal(() => validateControlRequest({ action: "SET", argument: "politeness=2" }))).toBe(
      "accepted",
    );
    expect(refusal(() => validateControlRequest({ action: "ADD_SEEDS", argument: "", urls: [] }))).toBe(
      "urls: ADD_SEEDS needs at least one URL",
    );
    expect(
      refusal(() => validateControlRequest({ action: "PAUSE", argument: "", urls: ["http://a.test/"] })),
    ).toBe("urls: not taken by PAUSE");
  });

  it("reads a blacklist sync without entries as empty, and refuses control characters in a pattern", () => {
    expect(validateBlacklistSync({})).toEqual({ entries: [] });
    const entry = { pattern: "a\u0000.test", blocked: true, changedAtMs: 1, changedBy: "a" };
    expect(refusal(() => validateBlacklistSync({ entries: [entry] }))).toBe(
      "entries[0].pattern: control characters",
    );
  });

  it("says why a digest, a payload original or a verdict's original is refused", () => {
    const settle = (original: unknown) => () =>
      validateDigestSettlements({ fromId: "a", settlements: [{ digest: DIGEST, original }] });
    expect(refusal(() => validateDigestCheck({ fromId: "a", digests: ["sha1:abc"] }))).toBe(
      "digests[0]: not a sha1: base32 digest",
    );
    expect(refusal(settle({ ...ORIGINAL, date: "yesterday" }))).toBe(
      "settlements[0].original.date: not an ISO 8601 UTC date",
    );
    expect(refusal(settle({ ...ORIGINAL, recordId: "<urn:uuid:x>" }))).toBe(
      "settlements[0].original.recordId: not a <urn:uuid:…> record id",
    );
    expect(
      refusal(() => validateDigestVerdicts({ verdicts: [{ state: "DIGEST_NEW", original: ORIGINAL }] })),
    ).toBe("verdicts[0].original: not taken with DIGEST_NEW");
  });

  it("reads a settlement without an original, unset or null, as one with none", () => {
    for (const settlement of [{ digest: DIGEST }, { digest: DIGEST, original: null }]) {
      expect(validateDigestSettlements({ fromId: "a", settlements: [settlement] }).settlements).toEqual([
        { digest: DIGEST, original: null },
      ]);
    }
  });
});

describe("page histories in hand-overs (--recrawl)", () => {
  const page = (overrides: Record<string, unknown> = {}) => ({
    url: "http://h1.test/a.html",
    depth: 1,
    etag: '"v1"',
    lastModified: "Sat, 28 Nov 2026 10:00:00 GMT",
    captureDigest: DIGEST,
    captureUrl: ORIGINAL.url,
    captureDate: ORIGINAL.date,
    captureRecordId: ORIGINAL.recordId,
    visits: 3,
    changes: 1,
    observedMs: 4000,
    lastAtMs: 1_700_000_000_000,
    nextAtMs: 1_700_000_002_000,
    changefreq: "daily",
    ...overrides,
  });
  const reply =
    (...pages: object[]) =>
    () =>
      validateClaimReply({ hosts: [handOver({ pages })] });

  it("takes a history, with or without its capture, plan and validators", () => {
    expect(refusal(reply(page()))).toBe("accepted");
    expect(validateClaimReply({ hosts: [handOver({ pages: [page()] })] }).hosts[0]?.pages).toEqual([page()]);
    const bare = page({
      etag: "",
      lastModified: "",
      captureDigest: "",
      captureUrl: "",
      captureDate: "",
      captureRecordId: "",
      nextAtMs: 0,
      changefreq: "",
    });
    expect(refusal(reply(bare))).toBe("accepted");
    // An agent that predates the changefreq sends none: read as empty.
    const { changefreq: _none, ...older } = page();
    expect(validateClaimReply({ hosts: [handOver({ pages: [older] })] }).hosts[0]?.pages).toEqual([
      { ...page(), changefreq: "" },
    ]);
    // An agent that predates the field sends none.
    expect(validateClaimReply({ hosts: [handOver()] }).hosts[0]?.pages).toEqual([]);
  });

  it("refuses a history that cannot be one, naming the field", () => {
    expect(refusal(reply(page({ visits: 0 })))).toBe(
      "hosts[0].pages[0].visits: a page history has at least one visit",
    );
    expect(refusal(reply(page({ changes: 3 })))).toBe(
      "hosts[0].pages[0].changes: more changes than visits after the first",
    );
    expect(refusal(reply(page({ captureRecordId: "" })))).toBe(
      "hosts[0].pages[0].captureDigest: a capture needs its date and record id",
    );
    expect(refusal(reply(page({ captureDigest: "" })))).toBe(
      "hosts[0].pages[0].captureDigest: empty, but other capture fields are set",
    );
    expect(refusal(reply(page({ etag: "a\r\nSet-Cookie: x" })))).toBe(
      "hosts[0].pages[0].etag: control characters",
    );
    expect(refusal(reply(page({ etag: "e".repeat(1025) })))).toBe(
      "hosts[0].pages[0].etag: longer than 1024 chars",
    );
    expect(refusal(reply(page({ url: "" })))).toBe("hosts[0].pages[0].url: empty");
    expect(refusal(reply(page({ lastAtMs: -1 })))).toBe(
      "hosts[0].pages[0].lastAtMs: not a non-negative safe integer",
    );
    for (const changefreq of ["sometimes", "WEEKLY", 1]) {
      expect(refusal(reply(page({ changefreq })))).toBe(
        "hosts[0].pages[0].changefreq: not one of always, hourly, daily, weekly, monthly, yearly, never",
      );
    }
  });

  it("takes at most a MiB of histories in one message, all hosts together", () => {
    // 64 + 21 (URL) + 1000 (ETag) bytes each: 966 fit in 1 MiB, 967 do not.
    const heavy = (i: number) =>
      page({
        url: `http://h1.test/${String(i).padStart(6, "0")}`,
        changefreq: "",
        etag: "e".repeat(1000),
        lastModified: "",
        captureDigest: "",
        captureUrl: "",
        captureDate: "",
        captureRecordId: "",
      });
    const pages = (count: number) => Array.from({ length: count }, (_, i) => heavy(i));
    expect(refusal(reply(...pages(966)))).toBe("accepted");
    expect(refusal(reply(...pages(967)))).toBe("hosts: more than 1048576 bytes of page histories");
  });

  it("takes a claim's skipPages, 0 when absent", () => {
    const claim = (host: Record<string, unknown>) =>
      validateClaimRequest({ claimant: member("a"), hosts: [{ host: "h1.test:80", skip: 0, ...host }] });
    expect(claim({ skipPages: 7 }).hosts[0]?.skipPages).toBe(7);
    expect(claim({}).hosts[0]?.skipPages).toBe(0);
    expect(refusal(() => claim({ skipPages: -1 }))).toBe(
      "hosts[0].skipPages: not a non-negative safe integer",
    );
  });
});
