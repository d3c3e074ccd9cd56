import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceDefinition } from "@grpc/proto-loader";
import { describe, expect, it } from "vitest";
import { AGENT_SERVICE_NAME, loadProtocol, PROTO_PATH } from "../../src/transport/index.js";
import { serviceDefinition } from "../../src/transport/protocol.js";
import { validateClaimReply, validateUrlBatch, validateUrlBatchAck } from "../../src/transport/validate.js";
import { REPO_ROOT } from "../agent/harness.js";
import { member, STATS } from "./helpers.js";

const service = () => loadProtocol()[AGENT_SERVICE_NAME] as ServiceDefinition;

describe("loadProtocol", () => {
  it("finds proto/ubicrawl.proto relative to the module and caches the definition", () => {
    expect(PROTO_PATH.endsWith("/proto/ubicrawl.proto")).toBe(true);
    expect(existsSync(PROTO_PATH)).toBe(true);
    expect(loadProtocol()).toBe(loadProtocol());
  });

  it("has its TypeScript types generated from the proto as it is (npm run proto:types)", () => {
    const out = mkdtempSync(join(tmpdir(), "ubicrawl-proto-types-"));
    try {
      const script = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts[
        "proto:types"
      ] as string;
      const args = script
        .split(" ")
        .slice(1)
        .map((arg) => (arg === "src/transport/generated" ? out : arg));
      const result = spawnSync(join(REPO_ROOT, "node_modules", ".bin", "proto-loader-gen-types"), args, {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      expect(result.status, result.stderr).toBe(0);
      const committed = join(REPO_ROOT, "src", "transport", "generated");
      const files = readdirSync(out, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name).slice(out.length + 1))
        .sort();
      expect(files.length).toBeGreaterThan(20);
      for (const file of files) {
        expect(readFileSync(join(committed, file), "utf8"), `${file}: run npm run proto:types`).toBe(
          readFileSync(join(out, file), "utf8"),
        );
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("defines the eleven unary Agent RPCs, the bidirectional HeartbeatStream and DigestStream, and the four Admin RPCs", () => {
    const methods = Object.values(service());
    const unary = methods.filter((m) => !m.requestStream && !m.responseStream);
    expect(unary.map((m) => m.path).sort()).toEqual(
      [
        "CheckDigests",
        "ClaimHosts",
        "Control",
        "GetStats",
        "HandOverHosts",
        "Heartbeat",
        "IpGrants",
        "Join",
        "SettleDigests",
        "SubmitUrls",
        "SyncBlacklist",
      ]
        .map((m) => `/ubicrawl.v1.Agent/${m}`)
        .sort(),
    );
    expect(
      Object.values(serviceDefinition("Admin")).map((m) => [m.path, m.requestStream, m.responseStream]),
    ).toEqual([
      ["/ubicrawl.v1.Admin/GetStats", false, false],
      ["/ubicrawl.v1.Admin/Control", false, false],
      ["/ubicrawl.v1.Admin/ListArchive", false, false],
      ["/ubicrawl.v1.Admin/ReadArchiveFile", false, true],
    ]);
    const streaming = methods.filter((m) => m.requestStream || m.responseStream);
    expect(streaming.map((m) => [m.path, m.requestStream, m.responseStream])).toEqual([
      ["/ubicrawl.v1.Agent/HeartbeatStream", true, true],
      ["/ubicrawl.v1.Agent/DigestStream", true, true],
    ]);
  });

  it("decodes with camelCase fields, 64-bit integers as numbers, enums as names", () => {
    const join = service().Join;
    if (join === undefined) throw new Error("no Join");
    const big = { ...member("agent-a"), incarnation: 2 ** 40 + 7, lastHeardMsAgo: 123_456 };
    const decoded = join.requestDeserialize(join.requestSerialize({ member: big }));
    expect(decoded).toEqual({ member: big });
  });

  it("fills in defaults: absent scalars are zero, absent messages null, enums unspecified", () => {
    const heartbeat = service().Heartbeat;
    if (heartbeat === undefined) throw new Error("no Heartbeat");
    const decoded = heartbeat.requestDeserialize(Buffer.alloc(0));
    expect(decoded).toEqual({
      from: null,
      members: [],
      load: null,
      sequence: 0,
      unanswered: false,
      partitioning: "",
      figures: [],
    });
    const join = service().Join;
    if (join === undefined) throw new Error("no Join");
    expect(join.requestDeserialize(join.requestSerialize({ member: {} }))).toEqual({
      member: {
        id: "",
        address: "",
        capacity: 0,
        incarnation: 0,
        status: "MEMBER_STATUS_UNSPECIFIED",
        lastHeardMsAgo: 0,
      },
    });
  });

  it("round-trips the stats map and doubles", () => {
    const getStats = service().GetStats;
    if (getStats === undefined) throw new Error("no GetStats");
    expect(getStats.responseDeserialize(getStats.responseSerialize({ agents: [STATS] }))).toEqual({
      agents: [STATS],
    });
  });
});

describe("a sitemap's changefreq on the wire", () => {
  it("goes with a URL sent to its host's owner and a history handed over, and an agent that predates it is read as sending none", () => {
    const submit = service().SubmitUrls;
    if (submit === undefined) throw new Error("no SubmitUrls");
    const batch = {
      batchId: "b1",
      fromId: "a",
      urls: [
        { url: "http://x.test/a", depth: 1, changefreq: "weekly" },
        { url: "http://x.test/b", depth: 1 },
      ],
    };
    expect(validateUrlBatch(submit.requestDeserialize(submit.requestSerialize(batch))).urls).toStrictEqual([
      { url: "http://x.test/a", depth: 1, changefreq: "weekly" },
      { url: "http://x.test/b", depth: 1 },
    ]);
    // A value of no sitemaps.org name decodes (it is a string field) and is refused by validation.
    const bad = submit.requestDeserialize(
      submit.requestSerialize({
        ...batch,
        urls: [{ url: "http://x.test/a", depth: 1, changefreq: "often" }],
      }),
    );
    expect(() => validateUrlBatch(bad)).toThrow(/urls\[0\]\.changefreq: not one of always/);
    // A leaving agent's keep batch says so on the wire; an ordinary one decodes with no mark.
    const keep = submit.requestDeserialize(submit.requestSerialize({ ...batch, keepForOwners: true }));
    expect(validateUrlBatch(keep).keepForOwners).toBe(true);
    expect(
      "keepForOwners" in validateUrlBatch(submit.requestDeserialize(submit.requestSerialize(batch))),
    ).toBe(false);
    expect(() => validateUrlBatch({ ...batch, keepForOwners: "yes" })).toThrow(
      /keepForOwners: not a boolean/,
    );
    const ack = submit.responseDeserialize(
      submit.responseSerialize({ accepted: 1, forwarded: 0, duplicates: 0, kept: 3 }),
    );
    expect(validateUrlBatchAck(ack)).toStrictEqual({ accepted: 1, forwarded: 0, duplicates: 0, kept: 3 });
    const plain = submit.responseDeserialize(
      submit.responseSerialize({ accepted: 1, forwarded: 0, duplicates: 0 }),
    );
    expect(validateUrlBatchAck(plain)).toStrictEqual({ accepted: 1, forwarded: 0, duplicates: 0 });
    const claim = service().ClaimHosts;
    if (claim === undefined) throw new Error("no ClaimHosts");
    const page = {
      url: "http://x.test/a",
      depth: 1,
      visits: 1,
      lastAtMs: 1_700_000_000_000,
      nextAtMs: 1_700_000_060_000,
      changefreq: "always",
    };
    const reply = (pages: object[]) => ({
      hosts: [{ host: "x.test", status: "GRANTED", done: new Uint8Array(0), pages }],
    });
    const pagesOf = (pages: object[]) =>
      validateClaimReply(claim.responseDeserialize(claim.responseSerialize(reply(pages)))).hosts[0]?.pages;
    expect(pagesOf([page])?.[0]).toMatchObject({ url: "http://x.test/a", changefreq: "always" });
    const { changefreq: _none, ...older } = page;
    expect(pagesOf([older])?.[0]).toMatchObject({ url: "http://x.test/a", changefreq: "" });
  });
});

describe("proto/ubicrawl.proto", () => {
  const lines = readFileSync(PROTO_PATH, "utf8").split("\n");

  it("is package ubicrawl.v1", () => {
    expect(lines).toContain("package ubicrawl.v1;");
  });

  it("documents every service, rpc, message, enum, enum value and field", () => {
    const declaration =
      /^\s*((service|message|enum)\s+\w+\s*\{|rpc\s+\w+|(repeated\s+|map<[\w, ]+>\s+)?[\w.]+\s+\w+\s*=\s*\d+;|[A-Z][A-Z0-9_]*\s*=\s*\d+;)/;
    const undocumented: string[] = [];
    let declarations = 0;
    lines.forEach((line, i) => {
      if (!declaration.test(line)) return;
      declarations++;
      if (!(lines[i - 1] ?? "").trim().startsWith("//")) undocumented.push(line.trim());
    });
    expect(undocumented).toEqual([]);
    expect(declarations).toBeGreaterThan(80); // the pattern really matched the declarations
  });
});
