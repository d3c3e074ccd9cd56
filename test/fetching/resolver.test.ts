import { mkdtemp, rename, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode, type UbiError } from "../../src/errors.js";
import { HostsFileResolver, SystemResolver } from "../../src/fetching/index.js";
import { recordingLogger } from "../support/recording-logger.js";
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

describe("HostsFileResolver following its file's edits", () => {
  /** A hosts file in a temp dir, written whole (renamed over), each version a second newer than the last. */
  async function hostsFile(text: string) {
    const dir = await mkdtemp(join(tmpdir(), "ubicrawl-hosts-"));
    const path = join(dir, "hosts");
    let version = 0;
    const write = async (next: string) => {
      const temp = join(dir, `hosts.${++version}`);
      await writeFile(temp, next);
      // Distinct modification times, however coarse the file system's.
      const at = new Date(1_700_000_000_000 + version * 1000);
      await utimes(temp, at, at);
      await rename(temp, path);
    };
    await write(text);
    const clock = new ManualClock();
    const { logger, records } = await recordingLogger();
    const resolver = await HostsFileResolver.fromFile(path, { checkEveryMs: 1000 }, { clock, logger });
    return { path, clock, records, resolver, write, remove: () => rm(dir, { recursive: true, force: true }) };
  }

  it("reads an edited file again once its check is due, and says so", async () => {
    const file = await hostsFile("127.0.0.1 a.test\n");
    try {
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.1");
      await file.write("127.0.0.7 a.test\n127.0.0.8 b.test\n");
      file.clock.advance(999);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.1");
      file.clock.advance(1);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.7");
      expect(await file.resolver.resolve("b.test")).toBe("127.0.0.8");
      expect(file.records.filter((r) => r.event === "hosts-file-reloaded")).toMatchObject([
        { path: file.path, names: 2 },
      ]);
      // Unchanged since: not read again.
      file.clock.advance(5000);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.7");
      expect(file.records.filter((r) => r.event === "hosts-file-reloaded")).toHaveLength(1);
    } finally {
      await file.remove();
    }
  });

  it("keeps the last good table when an edit is bad, empty or the file is gone, and says so once each", async () => {
    const file = await hostsFile("127.0.0.1 a.test\n");
    try {
      await file.write("not-an-ip a.test\n");
      for (let i = 0; i < 3; i++) {
        file.clock.advance(1000);
        expect(await file.resolver.resolve("a.test")).toBe("127.0.0.1");
      }
      await file.write("# nothing here\n");
      file.clock.advance(1000);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.1");
      await rm(file.path);
      for (let i = 0; i < 2; i++) {
        file.clock.advance(1000);
        expect(await file.resolver.resolve("a.test")).toBe("127.0.0.1");
      }
      const refused = file.records.filter((r) => r.event === "hosts-file-refused");
      expect(refused).toMatchObject([
        { level: "warn", path: file.path },
        { level: "warn", path: file.path },
        { level: "warn", path: file.path, code: "ENOENT" },
      ]);
      expect(String(refused[0]?.reason)).toContain("not-an-ip");
      // Fixed: read again, and a later problem is told again.
      await file.write("127.0.0.2 a.test\n");
      file.clock.advance(1000);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.2");
      await file.write("127.0.0.3\n");
      file.clock.advance(1000);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.2");
      expect(file.records.filter((r) => r.event === "hosts-file-refused")).toHaveLength(4);
    } finally {
      await file.remove();
    }
  });

  it("gives a name named on several lines its first line's address, before and after an edit", async () => {
    const file = await hostsFile("127.0.0.1 a.test\n127.0.0.2 a.test\n");
    try {
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.1");
      await file.write("127.0.0.2 a.test\n127.0.0.1 a.test\n");
      file.clock.advance(1000);
      expect(await file.resolver.resolve("a.test")).toBe("127.0.0.2");
      expect(await file.resolver.resolveAll("a.test")).toEqual(["127.0.0.2", "127.0.0.1"]);
    } finally {
      await file.remove();
    }
  });

  it("refuses a check interval that is not positive", async () => {
    await expect(HostsFileResolver.fromFile("/nonexistent", { checkEveryMs: 0 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
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
