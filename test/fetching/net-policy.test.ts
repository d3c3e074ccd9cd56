import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { NetPolicy } from "../../src/fetching/index.js";

const FORBIDDEN = [
  "10.1.2.3",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "100.64.0.1",
  "127.0.0.1",
  "127.255.0.9",
  "169.254.169.254",
  "0.0.0.0",
  "224.0.0.1",
  "255.255.255.255",
  "::",
  "::1",
  "fc00::1",
  "fd12:3456::1",
  "fe80::1",
  "ff02::1",
  "::ffff:127.0.0.1",
  "::ffff:10.0.0.1",
  "::ffff:a9fe:a9fe",
];
const PUBLIC = ["8.8.8.8", "172.32.0.1", "100.128.0.1", "192.0.2.1", "2001:db8::1", "::ffff:8.8.4.4"];

describe("NetPolicy", () => {
  it("refuses private, loopback, link-local, unspecified, multicast and broadcast addresses", () => {
    const policy = new NetPolicy();
    for (const ip of FORBIDDEN) {
      expect(policy.isAllowed(ip), ip).toBe(false);
      expect(() => policy.check(ip), ip).toThrow(
        expect.objectContaining({ code: ErrorCode.AddressForbidden }),
      );
    }
  });

  it("allows public addresses by default", () => {
    const policy = new NetPolicy();
    for (const ip of PUBLIC) expect(policy.isAllowed(ip), ip).toBe(true);
    expect(() => policy.check("8.8.8.8")).not.toThrow();
  });

  it("lets allowed CIDRs through, IPv4-mapped forms included", () => {
    const policy = new NetPolicy({ allow: ["127.0.0.0/8", "::1/128", "10.0.0.5"] });
    expect(policy.isAllowed("127.0.0.2")).toBe(true);
    expect(policy.isAllowed("::ffff:127.0.0.1")).toBe(true);
    expect(policy.isAllowed("::1")).toBe(true);
    expect(policy.isAllowed("10.0.0.5")).toBe(true);
    expect(policy.isAllowed("10.0.0.6")).toBe(false);
    expect(policy.isAllowed("192.168.0.1")).toBe(false);
    expect(policy.isAllowed("not an ip")).toBe(false);
  });

  it("rejects malformed CIDRs with InvalidArgument", () => {
    for (const bad of [
      "127.0.0.0/33",
      "::1/129",
      "300.0.0.1/8",
      "127.0.0.0/",
      "127.0.0.0/8x",
      "localhost/8",
      "",
    ]) {
      expect(() => new NetPolicy({ allow: [bad] }), bad).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
  });
});
