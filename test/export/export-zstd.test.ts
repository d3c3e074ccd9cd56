import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WarcWriter, zstdAvailable } from "../../src/storage/index.js";
import { runUbicrawl } from "../agent/harness.js";
import { parseIndex, readZip } from "./wacz-check.js";

/**
 * `ubicrawl export` of `.warc.zst` files (Node.js with Zstandard only): packaged and indexed like gzip
 * files, and the export says ReplayWeb.page cannot read them.
 */

const PAGES = 50;
let dir: string;

describe.skipIf(!zstdAvailable())(
  `export of Zstandard WARC files${zstdAvailable() ? "" : " (skipped: this Node.js has no Zstandard)"}`,
  () => {
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "ubicrawl-export-zstd-"));
      const writer = new WarcWriter({ dir: join(dir, "warc-z"), agentId: "z", compression: "zstd" });
      await writer.open();
      await Promise.all(
        Array.from({ length: PAGES }, (_, i) => {
          const body = Buffer.from(
            `<html><head><title>Z ${i}</title></head><body><h1>Z ${i}</h1></body></html>`,
          );
          return writer.write({
            url: `http://z.ubi.test:8080/p/${i}`,
            ip: "127.0.0.1",
            date: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)),
            requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\nHost: z.ubi.test:8080\r\n\r\n`,
            responseHeaderBlock: `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nContent-Length: ${body.length}\r\n\r\n`,
            body,
          });
        }),
      );
      await writer.close();
    });

    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("packages and indexes them, and says ReplayWeb.page cannot replay them and what to do", async () => {
      const out = join(dir, "z.wacz");
      const exported = await runUbicrawl(["export", "--out", out, join(dir, "warc-z")]).waitForExit(60_000);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout).toContain("1 WARC files are .warc.zst");
      // Why they do not replay, and what to do instead.
      expect(exported.stdout).toContain("ReplayWeb.page has no Zstandard decoder");
      expect(exported.stdout).toContain("--warc-compression gzip");
      expect(exported.stdout).toContain("warcio recompress");
      const packaged = await readZip(out);
      const index = parseIndex(packaged.get("indexes/index.cdxj")?.bytes.toString("utf8") ?? "");
      expect(index).toHaveLength(PAGES);
      const name = index[0]?.fields.filename as string;
      expect(name.endsWith(".warc.zst")).toBe(true);
      expect(packaged.get(`archive/${name}`)?.bytes.length).toBeGreaterThan(0);
      // Each line points at one Zstandard frame; warcio cannot read those, so only its bounds are checked.
      const warc = packaged.get(`archive/${name}`)?.bytes as Buffer;
      for (const line of index) {
        expect(warc.readUInt32LE(Number(line.fields.offset))).toBe(0xfd2fb528);
      }
    });
  },
);
