import { describe, expect, it } from "vitest";
import { SeedAddresses, type SeedProbe, selfAddressMatcher } from "../../src/cluster/index.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { recordingLogger } from "../support/recording-logger.js";

/** `--join` names resolved by the agent to each of their addresses (a headless Service's name). */

const TABLE: Record<string, string[]> = {
  "agents.test": ["10.0.0.1", "10.0.0.2", "10.0.0.3"],
  "alone.test": ["10.0.0.2"],
};

async function seedAddresses(self = "10.0.0.2:7000") {
  const { logger, records } = await recordingLogger();
  const addresses = new SeedAddresses({
    lookupAll: async (name) => {
      const found = TABLE[name];
      if (found === undefined) throw new UbiError(ErrorCode.DnsNotFound, `${name} does not resolve`);
      return found;
    },
    isSelf: selfAddressMatcher(self, undefined),
    logger,
  });
  return { addresses, records };
}

const answered: SeedProbe = { ok: true };
const silent: SeedProbe = {
  ok: false,
  reason: "connection refused",
  message: "nothing there",
  retryable: true,
};
const refused: SeedProbe = { ok: false, reason: "refused", message: "wrong CA", retryable: false };

describe("SeedAddresses", () => {
  it("expands a name to each of its addresses but this agent's own, each checked against the name", async () => {
    const { addresses, records } = await seedAddresses();
    expect(await addresses.expand("agents.test:7000")).toEqual(["10.0.0.1:7000", "10.0.0.3:7000"]);
    expect(addresses.serverNames.get("10.0.0.3:7000")).toBe("agents.test");
    expect(addresses.serverNames.has("10.0.0.2:7000")).toBe(false);
    // IP literals stand for themselves, and are checked against themselves.
    expect(await addresses.expand("10.0.0.9:7000")).toEqual(["10.0.0.9:7000"]);
    expect(addresses.serverNames.has("10.0.0.9:7000")).toBe(false);
    await addresses.expand("agents.test:7000");
    expect(records.filter((record) => record.event === "join-resolved")).toHaveLength(1);
    expect(await addresses.expandAll(["agents.test:7000", "nowhere.test:7000", "10.0.0.1:7000"])).toEqual([
      "10.0.0.1:7000",
      "10.0.0.3:7000",
    ]);
  });

  it("probes each address: the first that answers wins; a name of none, or of this agent only, is a silence", async () => {
    const { addresses } = await seedAddresses();
    const asked: [string, string | undefined][] = [];
    const probe = (answers: Record<string, SeedProbe>) => async (address: string, serverName?: string) => {
      asked.push([address, serverName]);
      return answers[address] ?? silent;
    };
    expect(await addresses.probe("agents.test:7000", probe({ "10.0.0.3:7000": answered }))).toEqual(answered);
    expect(asked).toEqual([
      ["10.0.0.1:7000", "agents.test"],
      ["10.0.0.3:7000", "agents.test"],
    ]);
    expect(await addresses.probe("agents.test:7000", probe({ "10.0.0.3:7000": refused }))).toEqual(refused);
    expect(await addresses.probe("agents.test:7000", probe({}))).toEqual(silent);
    expect(await addresses.probe("nowhere.test:7000", probe({}))).toMatchObject({
      ok: false,
      reason: "name not found",
      retryable: true,
    });
    expect(await addresses.probe("alone.test:7000", probe({}))).toMatchObject({
      ok: false,
      reason: "resolves only to this agent",
      retryable: true,
    });
  });
});

describe("selfAddressMatcher", () => {
  it("knows the listen and advertise addresses, and any local address on a wildcard listen's port", () => {
    const bound = selfAddressMatcher("10.0.0.2:7000", "crawl2.test:7000");
    expect(bound("10.0.0.2:7000")).toBe(true);
    expect(bound("crawl2.test:7000")).toBe(true);
    expect(bound("10.0.0.2:7001")).toBe(false);
    expect(bound("10.0.0.3:7000")).toBe(false);
    const wildcard = selfAddressMatcher("0.0.0.0:7000", undefined, () => ["192.168.1.5"]);
    expect(wildcard("192.168.1.5:7000")).toBe(true);
    expect(wildcard("127.0.0.1:7000")).toBe(true);
    expect(wildcard("192.168.1.6:7000")).toBe(false);
    expect(wildcard("192.168.1.5:7001")).toBe(false);
  });
});
