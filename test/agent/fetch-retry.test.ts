import { describe, expect, it } from "vitest";
import {
  countsAgainstPageLimit,
  FAILING_HOST_STREAK,
  isTransient,
  retryAtMs,
} from "../../src/agent/fetch-retry.js";
import { sameLinkBase } from "../../src/agent/page-links.js";
import { ErrorCode } from "../../src/errors.js";

const POLICY = { maxFetchAttempts: 4, fetchRetryMs: 1_000 };
const NOW = 50_000;
/** A first transient failure on a healthy host whose politeness allows a request now. */
const FIRST = { code: ErrorCode.ConnectFailed, attempts: 1, failedInARow: 0, nowMs: NOW, nextFetchAtMs: NOW };

const TRANSIENT = [ErrorCode.ConnectFailed, ErrorCode.ConnectTimeout, ErrorCode.HeadersTimeout];
const FOR_GOOD = [
  ErrorCode.DnsNotFound,
  ErrorCode.AddressForbidden,
  ErrorCode.TlsFailed,
  ErrorCode.BodyTimeout,
  ErrorCode.TooSlow,
  ErrorCode.BodyTooLarge,
  ErrorCode.DecodeFailed,
  ErrorCode.ProtocolError,
  ErrorCode.TooManyRedirects,
];

describe("retryAtMs", () => {
  it("retries a failure that may pass, waiting twice as long each time, until the attempts run out", () => {
    const at = (attempts: number) => retryAtMs({ ...FIRST, attempts }, POLICY);
    expect([1, 2, 3].map(at)).toEqual([NOW + 1_000, NOW + 2_000, NOW + 4_000]);
    expect(at(4)).toBeUndefined();
    expect(at(5)).toBeUndefined();
    expect(retryAtMs(FIRST, { ...POLICY, maxFetchAttempts: 1 })).toBeUndefined();
  });

  it("retries every transient failure, and nothing else", () => {
    for (const code of TRANSIENT) expect(retryAtMs({ ...FIRST, code }, POLICY), code).toBe(NOW + 1_000);
    for (const code of FOR_GOOD) expect(retryAtMs({ ...FIRST, code }, POLICY), code).toBeUndefined();
  });

  it("gives a URL of a host whose last URLs all failed a single attempt", () => {
    expect(retryAtMs({ ...FIRST, failedInARow: FAILING_HOST_STREAK - 1 }, POLICY)).toBe(NOW + 1_000);
    expect(retryAtMs({ ...FIRST, failedInARow: FAILING_HOST_STREAK }, POLICY)).toBeUndefined();
    expect(retryAtMs({ ...FIRST, failedInARow: FAILING_HOST_STREAK + 3 }, POLICY)).toBeUndefined();
  });

  it("never retries before the host's politeness allows", () => {
    expect(retryAtMs({ ...FIRST, nextFetchAtMs: NOW + 5_000 }, POLICY)).toBe(NOW + 5_000);
    expect(retryAtMs({ ...FIRST, nextFetchAtMs: NOW + 999 }, POLICY)).toBe(NOW + 1_000);
  });
});

describe("isTransient and countsAgainstPageLimit", () => {
  it("say which failures may pass, and which sent no request", () => {
    for (const code of TRANSIENT) expect(isTransient(code), code).toBe(true);
    for (const code of FOR_GOOD) expect(isTransient(code), code).toBe(false);
    for (const code of [ErrorCode.DnsNotFound, ErrorCode.AddressForbidden, ErrorCode.TlsFailed]) {
      expect(countsAgainstPageLimit(code), code).toBe(false);
    }
    for (const code of [...TRANSIENT, ErrorCode.ProtocolError, ErrorCode.BodyTooLarge, ErrorCode.TooSlow]) {
      expect(countsAgainstPageLimit(code), code).toBe(true);
    }
  });
});

describe("sameLinkBase", () => {
  it("is true for pages whose relative links resolve alike: same origin, same directory", () => {
    expect(sameLinkBase("http://a.test/x/p.html", "http://a.test/x/q.html?session=1")).toBe(true);
    expect(sameLinkBase("http://a.test/x/", "http://a.test/x/index.html#top")).toBe(true);
    expect(sameLinkBase("http://a.test/p", "http://a.test/q")).toBe(true);
  });

  it("is false for another directory, scheme, host or port", () => {
    expect(sameLinkBase("http://a.test/x/p.html", "http://a.test/y/p.html")).toBe(false);
    expect(sameLinkBase("http://a.test/x/", "http://a.test/x/y/")).toBe(false);
    expect(sameLinkBase("http://a.test/x/p", "https://a.test/x/p")).toBe(false);
    expect(sameLinkBase("http://a.test/x/p", "http://b.test/x/p")).toBe(false);
    expect(sameLinkBase("http://a.test:8080/x/p", "http://a.test/x/p")).toBe(false);
  });
});
