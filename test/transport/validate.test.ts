import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { parseHostPort, validateMember } from "../../src/transport/index.js";
import {
  validateAgentStats,
  validateControlRequest,
  validateDigestCheck,
  validateDigestSettlements,
  validateDigestVerdicts,
  validateHeartbeatReply,
  validateHeartbeatRequest,
  validateUrlBatch,
} from "../../src/transport/validate.js";
import { LOAD, member, STATS } from "./helpers.js";

function badMessage(check: () => unknown): boolean {
  try {
    check();
  } catch (error) {
    return isUbiError(error, ErrorCode.BadMessage);
  }
  return false;
}

describe("parseHostPort", () => {
  it.each([
    ["127.0.0.1:7000", { host: "127.0.0.1", port: 7000 }],
    ["agent-1.lab.test:65535", { host: "agent-1.lab.test", port: 65535 }],
    ["localhost:1", { host: "localhost", port: 1 }],
    ["[::1]:7000", { host: "::1", port: 7000 }],
  ])("parses %s", (text, expected) => {
    expect(parseHostPort(text)).toEqual(expected);
  });

  it.each([
    "127.0.0.1",
    ":7000",
    "127.0.0.1:",
    "127.0.0.1:0",
    "127.0.0.1:65536",
    "127.0.0.1:-1",
    "::1:7000",
    "[::1:7000",
    "[nothost]:7000",
    "bad host:7000",
    "x.test:70a0",
    `${"a".repeat(300)}:1`,
  ])("refuses %s", (text) => {
    expect(parseHostPort(text)).toBeUndefined();
  });

  it("accepts port 0 only when asked", () => {
    expect(parseHostPort("127.0.0.1:0", true)).toEqual({ host: "127.0.0.1", port: 0 });
  });
});

describe("message validation", () => {
  it("returns a clean copy of a valid message, dropping unknown properties", () => {
    const input = { ...member("agent-a"), extra: "ignored" };
    expect(validateMember(input)).toEqual(member("agent-a"));
    expect(validateHeartbeatReply({ members: [member("b")], load: LOAD, from: member("b") })).toEqual({
      members: [member("b")],
      load: LOAD,
      from: member("b"),
    });
    expect(validateAgentStats(STATS)).toEqual(STATS);
  });

  it.each([
    ["not an object", "member"],
    ["null", null],
    ["capacity as string", { ...member("a"), capacity: "2" }],
    ["negative incarnation", { ...member("a"), incarnation: -1 }],
    ["unsafe 64-bit value", { ...member("a"), lastHeardMsAgo: 2 ** 60 }],
    ["fractional capacity", { ...member("a"), capacity: 1.5 }],
    ["capacity over 32 bits", { ...member("a"), capacity: 2 ** 32 }],
    ["unknown status", { ...member("a"), status: "DEAD" }],
    ["numeric status", { ...member("a"), status: 1 }],
    ["id with slash", { ...member("a"), id: "a/b" }],
    ["IPv6 address without brackets", { ...member("a"), address: "::1:7000" }],
  ])("refuses a member with %s", (_name, value) => {
    expect(badMessage(() => validateMember(value))).toBe(true);
  });

  it("refuses bad stats values", () => {
    expect(badMessage(() => validateAgentStats({ ...STATS, circleShare: 1.5 }))).toBe(true);
    expect(badMessage(() => validateAgentStats({ ...STATS, pagesPerSecond: Number.NaN }))).toBe(true);
    expect(badMessage(() => validateAgentStats({ ...STATS, errors: { X: "1" } }))).toBe(true);
    expect(badMessage(() => validateAgentStats({ ...STATS, view: [{ id: "x" }] }))).toBe(true);
    expect(badMessage(() => validateAgentStats({ ...STATS, peers: {} }))).toBe(true);
  });

  it("refuses control characters in URLs, batch ids and arguments", () => {
    const batch = { batchId: "b1", fromId: "agent-a", urls: [{ url: "http://x.test/", depth: 0 }] };
    expect(validateUrlBatch(batch)).toEqual(batch);
    expect(
      badMessage(() => validateUrlBatch({ ...batch, urls: [{ url: "http://x.test/\n", depth: 0 }] })),
    ).toBe(true);
    expect(badMessage(() => validateUrlBatch({ ...batch, batchId: "b\u0000" }))).toBe(true);
    expect(
      badMessage(() => validateUrlBatch({ ...batch, urls: [{ url: "http://x.test/", depth: -1 }] })),
    ).toBe(true);
    expect(badMessage(() => validateControlRequest({ action: "BLACKLIST_ADD", argument: "x\u007f" }))).toBe(
      true,
    );
  });

  it("requires an argument only for the blacklist actions", () => {
    expect(validateControlRequest({ action: "LEAVE", argument: "" })).toEqual({
      action: "LEAVE",
      argument: "",
      urls: [],
    });
    expect(badMessage(() => validateControlRequest({ action: "BLACKLIST_REMOVE", argument: "" }))).toBe(true);
  });

  it("takes URLs for ADD_SEEDS only: at least one, at most 10,000, no control characters", () => {
    expect(validateControlRequest({ action: "ADD_SEEDS", argument: "", urls: ["http://a.test/"] })).toEqual({
      action: "ADD_SEEDS",
      argument: "",
      urls: ["http://a.test/"],
    });
    expect(badMessage(() => validateControlRequest({ action: "ADD_SEEDS", argument: "", urls: [] }))).toBe(
      true,
    );
    expect(
      badMessage(() => validateControlRequest({ action: "PAUSE", argument: "", urls: ["http://a.test/"] })),
    ).toBe(true);
    expect(
      badMessage(() =>
        validateControlRequest({ action: "ADD_SEEDS", argument: "", urls: ["http://a.test/\u0000"] }),
      ),
    ).toBe(true);
    expect(
      badMessage(() =>
        validateControlRequest({
          action: "ADD_SEEDS",
          argument: "",
          urls: Array(10_001).fill("http://a.test/"),
        }),
      ),
    ).toBe(true);
  });

  it("takes a heartbeat's gossiped figures when present, refuses bad ones, and reads an older agent's none as absent", () => {
    const figures = [
      { id: "gone", pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} },
    ];
    const base = { members: [member("b")], load: LOAD, from: member("b") };
    expect(validateHeartbeatReply({ ...base, figures })).toEqual({ ...base, figures });
    expect(validateHeartbeatReply({ ...base, figures: [] })).toEqual(base);
    expect(validateHeartbeatRequest({ ...base, figures })).toMatchObject({ figures });
    for (const bad of [
      [{ id: "gone", pagesFetched: -1, bytesFetched: 0 }],
      [{ id: "", pagesFetched: 1, bytesFetched: 0 }],
      [{ id: "gone", pagesFetched: 1 }],
      "figures",
    ]) {
      expect(() => validateHeartbeatReply({ ...base, figures: bad })).toThrow(/figures/);
    }
  });

  it("names the offending field", () => {
    try {
      validateHeartbeatReply({
        members: [member("a"), { ...member("b"), capacity: 0 }],
        load: LOAD,
        from: member("a"),
      });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain("members[1].capacity");
    }
  });
});

describe("duplicate detection messages", () => {
  const digest = `sha1:${"ABCDEFGH".repeat(4)}`;
  const original = {
    url: "http://a.test/",
    date: "2026-11-27T10:00:00.000Z",
    recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
  };

  it("takes digests, verdicts and settlements as agents send them", () => {
    expect(
      validateDigestCheck({ fromId: "a", digests: [digest], settlements: [{ digest, original }] }),
    ).toEqual({ fromId: "a", digests: [digest], settlements: [{ digest, original }], fromIncarnation: 0 });
    expect(validateDigestCheck({ fromId: "a", digests: [], fromIncarnation: 7 })).toEqual({
      fromId: "a",
      digests: [],
      settlements: [],
      fromIncarnation: 7,
    });
    expect(
      validateDigestVerdicts({
        verdicts: [
          { state: "DIGEST_SEEN", original },
          { state: "DIGEST_NEW", original: null },
          { state: "DIGEST_PENDING" },
        ],
      }),
    ).toEqual({
      verdicts: [
        { state: "DIGEST_SEEN", original },
        { state: "DIGEST_NEW", original: null },
        { state: "DIGEST_PENDING", original: null },
      ],
    });
    expect(validateDigestSettlements({ fromId: "b", settlements: [{ digest, original: null }] })).toEqual({
      fromId: "b",
      settlements: [{ digest, original: null }],
    });
  });

  it("refuses malformed digests, originals that do not fit their state, and oversized batches", () => {
    for (const bad of [
      "sha1:abc",
      `md5:${"A".repeat(32)}`,
      `sha1:${"1".repeat(32)}`,
      `sha1:${"A".repeat(33)}`,
    ]) {
      expect(
        badMessage(() => validateDigestCheck({ fromId: "a", digests: [bad] })),
        bad,
      ).toBe(true);
    }
    expect(badMessage(() => validateDigestCheck({ fromId: "a b", digests: [digest] }))).toBe(true);
    expect(
      badMessage(() =>
        validateDigestCheck({ fromId: "a", digests: Array.from({ length: 501 }, () => digest) }),
      ),
    ).toBe(true);
    expect(
      badMessage(() => validateDigestVerdicts({ verdicts: [{ state: "DIGEST_SEEN", original: null }] })),
    ).toBe(true);
    expect(badMessage(() => validateDigestVerdicts({ verdicts: [{ state: "DIGEST_NEW", original }] }))).toBe(
      true,
    );
    expect(
      badMessage(() =>
        validateDigestVerdicts({ verdicts: [{ state: "DIGEST_STATE_UNSPECIFIED", original: null }] }),
      ),
    ).toBe(true);
    for (const broken of [
      { ...original, date: "yesterday" },
      { ...original, recordId: "<urn:uuid:x>\r\nWARC-Type: response" },
      { ...original, url: "http://a.test/\n" },
    ]) {
      expect(
        badMessage(() =>
          validateDigestSettlements({ fromId: "a", settlements: [{ digest, original: broken }] }),
        ),
      ).toBe(true);
    }
  });
});
