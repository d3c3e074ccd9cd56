import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { getSurt } from "warcio/utils";
import { readWarcFile, splitHttpBlock, type WarcRecordRead } from "../../src/storage/warc-reader.js";

/**
 * Checks a WARC file's CDXJ index (`<file>.cdxj`) against the file as warcio reads it: one line per
 * response and revisit record (none for requests or warcinfo), each at the record's offset with its
 * compressed length (up to the next record, or the file's end), saying its URL, date, status, mime and
 * payload digest as pywb's indexer would; lines sorted.
 */

/** One parsed index line. */
export interface CdxjLineRead {
  readonly key: string;
  readonly timestamp: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** Parses index text into lines (throws on a line that is not `key timestamp {json}`). */
export function parseCdxj(text: string): CdxjLineRead[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const match = /^(\S+) (\d{14}) (\{.*\})$/.exec(line);
      if (!match) throw new Error(`not a CDXJ line: ${line}`);
      return {
        key: match[1] as string,
        timestamp: match[2] as string,
        fields: JSON.parse(match[3] as string) as Record<string, string>,
      };
    });
}

/** What is wrong with the index of `warcPath`, one sentence each; empty when it is right. */
export async function cdxjProblems(warcPath: string): Promise<string[]> {
  const problems: string[] = [];
  let text: string;
  try {
    text = await readFile(`${warcPath}.cdxj`, "utf8");
  } catch {
    return [`${basename(warcPath)} has no index`];
  }
  const lines = text.split("\n").slice(0, -1);
  if (!text.endsWith("\n")) problems.push(`${basename(warcPath)}.cdxj does not end with a newline`);
  const sorted = [...lines].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (lines.join("\n") !== sorted.join("\n")) problems.push(`${basename(warcPath)}.cdxj is not sorted`);
  const expected = await expectedLines(warcPath);
  const got = parseCdxj(text).map((line) => JSON.stringify(line));
  const want = new Set(expected.map((line) => JSON.stringify(line)));
  for (const line of got) if (!want.has(line)) problems.push(`unexpected line ${line}`);
  const gotSet = new Set(got);
  for (const line of want) if (!gotSet.has(line)) problems.push(`missing line ${line}`);
  return problems;
}

/** The lines the index of `warcPath` must hold, from its records as warcio reads them. */
async function expectedLines(warcPath: string): Promise<CdxjLineRead[]> {
  const size = (await stat(warcPath)).size;
  const records: WarcRecordRead[] = [];
  for await (const record of readWarcFile(warcPath)) records.push(record);
  const lines: CdxjLineRead[] = [];
  records.forEach((record, i) => {
    if (record.type !== "response" && record.type !== "revisit") return;
    const url = record.headers.get("warc-target-uri") ?? "";
    const { headerBlock } = splitHttpBlock(record.block);
    const status = /^HTTP\/\S+ (\d{3})/.exec(headerBlock)?.[1];
    const contentType = /\r\ncontent-type: *([^;\r\n ]*)/i.exec(headerBlock)?.[1];
    const mime = record.type === "revisit" ? "warc/revisit" : contentType;
    const next = records[i + 1]?.offset ?? size;
    lines.push({
      key: getSurt(url),
      timestamp: (record.headers.get("warc-date") ?? "").replace(/[-:T]/g, "").slice(0, 14),
      fields: {
        url,
        ...(mime ? { mime } : {}),
        ...(status ? { status } : {}),
        digest: (record.headers.get("warc-payload-digest") ?? "").replace(/^sha1:/, ""),
        length: String(next - record.offset),
        offset: String(record.offset),
        filename: basename(warcPath),
      },
    });
  });
  return lines;
}
