import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode, type UbiError } from "../../src/errors.js";
import { HostsFileResolver, SystemResolver } from "../../src/fetching/index.js";
import { ManualClock } from "./loopback.js";

const HOSTS = `
# laboratory web
127.0.0.1   a.test  www.A.test   # two names, mixed case
127.0.0.2\tb.test
::1         v6.test
127.0.0.3   a.test             # a later line does not override
`;

describe("HostsFileResolver", () => {
  it("resolves names case-insensitively, several per line, IPv4 and IPv6", async () => {
    const resolver = new HostsFileResolver(HOSTS);
    expect(resolver.size).toBe(4);
    expect(await resolver.resolve("a.test")).toBe("127.0.0.1");
    expect(await resolver.resolve("WWW.a.TEST")).toBe("127.0.0.1");
    expect(await resolver.resolve("b.test.")).toBe("127.0.0.2");
    expect(await resolver.resolve("v6.test")).toBe("::1");
  });

  it("gives every address of a name named on several lines, in order, for a --join name", async () => {
    const resolver = new HostsFileResolver(`${HOSTS}127.0.0.1 a.test\n`);
    expect(await resolver.resolveAll("A.test")).toEqual(["127.0.0.1", "127.0.0.3"]);
    expect(await resolver.resolveAll("b.test")).toEqual(["127.0.0.2"]);
    expect(await resolver.resolveAll("[::1]")).toEqual(["::1"]);
    await expect(resolver.resolveAll("c.test")).rejects.toMatchObject({ code: ErrorCode.DnsNotFound });
  });

  it("fails at once with DnsNotFound for a name not in the file", async () => {
    const resolver = new HostsFileResolver(HOSTS);
    await expect(resolver.resolve("example.com")).rejects.toMatchObject({ code: ErrorCode.DnsNotFound });
    await expect(resolver.resolve("localhost")).rejects.toMatchObject({ code: ErrorCode.DnsNotFound });
  });

  it("resolves IP literals, bracketed IPv6 included, to themselves", async () => {
    const resolver = new HostsFileResolver("");
    expect(await resolver.resolve("10.1.2.3")).toBe("10.1.2.3");
    expect(await resolver.resolve("[::1]")).toBe("::1");
    expect(await resolver.resolve("::1")).toBe("::1");
  });

  it("rejects a line that does not start with an IP", () => {
    expect(() => new HostsFileResolver("not-an-ip host.test")).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(() => new HostsFileResolver("127.0.0.1")).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });

  it("reads a hosts file from disk", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ubicrawl-hosts-"));
    try {
      const path = join(dir, "hosts");
      await writeFile(path, HOSTS);
      const resolver = await HostsFileResolver.fromFile(path);
      expect(await resolver.resolve("b.test")).toBe("127.0.0.2");
      await expect(HostsFileResolver.fromFile(join(dir, "missing"))).rejects.toMatchObject({
        code: ErrorCode.InvalidArgument,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** A lookup that never leaves the process: counts calls, answers from a table, fails otherwise. */
function fakeLookup(table: Record<string, string>) {
  const calls: string[] = [];
  const release: (() => void)[] = [];
  let gate = false;
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    if (gate) await new Promise<void>((resolve) => release.push(resolve));
    const address = table[hostname];
    if (address === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return { address };
  };
  return {
    lookup,
    calls,
    hold: () => {
      gate = true;
    },
    releaseAll: () => {
      gate = false;
      for (const r of release.splice(0)) r();
    },
  };
}

describe("SystemResolver", () => {
  it("resolves localhost through the operating system", async () => {
    const ip = await new SystemResolver().resolve("localhost");
    expect(["127.0.0.1", "::1"]).toContain(ip);
  });

  it("resolves IP literals without a lookup", async () => {
    const fake = fakeLookup({});
    const resolver = new SystemResolver({}, { lookup: fake.lookup });
    expect(await resolver.resolve("[::1]")).toBe("::1");
    expect(await resolver.resolve("192.0.2.7")).toBe("192.0.2.7");
    expect(fake.calls).toEqual([]);
  });

  it("coalesces concurrent lookups of one name and caches the answer until the TTL", async () => {
    const clock = new ManualClock();
    const fake = fakeLookup({ "site.test": "127.0.0.9" });
    const resolver = new SystemResolver({ positiveTtlMs: 1000 }, { clock, lookup: fake.lookup });
    fake.hold();
    const pending = [
      resolver.resolve("site.test"),
      resolver.resolve("SITE.test"),
      resolver.resolve("site.test"),
    ];
    fake.releaseAll();
    expect(await Promise.all(pending)).toEqual(["127.0.0.9", "127.0.0.9", "127.0.0.9"]);
    expect(fake.calls).toEqual(["site.test"]);

    clock.advance(999);
    expect(await resolver.resolve("site.test")).toBe("127.0.0.9");
    expect(fake.calls.length).toBe(1);
    clock.advance(1);
    expect(await resolver.resolve("site.test")).toBe("127.0.0.9");
    expect(fake.calls.length).toBe(2);
  });

  it("remembers failures for the negative TTL", async () => {
    const clock = new ManualClock();
    const fake = fakeLookup({});
    const resolver = new SystemResolver({ negativeTtlMs: 500 }, { clock, lookup: fake.lookup });
    const first = await resolver.resolve("nx.test").catch((e: UbiError) => e);
    expect(first).toMatchObject({ code: ErrorCode.DnsNotFound });
    expect((first as UbiError).cause).toMatchObject({ code: "ENOTFOUND" });
    await expect(resolver.resolve("nx.test")).rejects.toMatchObject({ code: ErrorCode.DnsNotFound });
    expect(fake.calls.length).toBe(1);
    clock.advance(500);
    await expect(resolver.resolve("nx.test")).rejects.toMatchObject({ code: ErrorCode.DnsNotFound });
    expect(fake.calls.length).toBe(2);
  });

  it("releases an aborted caller while the lookup goes on", async () => {
    const fake = fakeLookup({ "slow.test": "127.0.0.5" });
    const resolver = new SystemResolver({}, { lookup: fake.lookup });
    fake.hold();
    const controller = new AbortController();
    const aborted = resolver.resolve("slow.test", controller.signal);
    const other = resolver.resolve("slow.test");
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    fake.releaseAll();
    expect(await other).toBe("127.0.0.5");
  });

  it("validates its options", () => {
    expect(() => new SystemResolver({ positiveTtlMs: -1 })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(() => new SystemResolver({ maxEntries: 0 })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });
});
