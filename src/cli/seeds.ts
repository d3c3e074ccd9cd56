import { readFile } from "node:fs/promises";
import { ErrorCode, UbiError } from "../errors.js";
import { normalizeUrl } from "../url/index.js";

/** The seeds of `--seeds`, and what was left out. */
export interface SeedList {
  /** Canonical http(s) URLs, in the order given. */
  readonly urls: string[];
  /** One entry per value or line that is not an http(s) URL: where it is and what it says. */
  readonly rejected: string[];
}

/** Longest piece of a bad seed line quoted in a message. */
const QUOTE_CHARS = 80;

/**
 * Reads `--seeds` values: a value with `://` is a URL; any other is a file of one URL a line (`#`
 * comments and blank lines skipped). Values and lines that are not http(s) URLs (after normalization)
 * are listed in `rejected` with their file and line. A value that is neither a readable file nor a URL
 * throws `InvalidArgument` saying which.
 */
export async function readSeeds(values: readonly string[], label = "--seeds"): Promise<SeedList> {
  const urls: string[] = [];
  const rejected: string[] = [];
  for (const value of values) {
    if (value.includes("://")) {
      const url = normalizeUrl(value);
      if (url === null) rejected.push(`${label} ${quote(value)} is not an http(s) URL`);
      else urls.push(url);
      continue;
    }
    const text = await readSeedsFile(value, label);
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] as string).trim();
      if (line === "" || line.startsWith("#")) continue;
      const url = normalizeUrl(line);
      if (url === null) rejected.push(`${value}:${i + 1}: ${quote(line)} is not an http(s) URL`);
      else urls.push(url);
    }
  }
  return { urls, rejected };
}

/**
 * The seeds to start from: `list`'s URLs. Rejected values are reported through `warn` (a few of them),
 * or, when no URL is left of the seeds given, make it throw `InvalidArgument`: starting a crawl with
 * nothing would only stop at once, saying nothing.
 */
export function acceptSeeds(
  list: SeedList,
  given: readonly string[],
  warn: (line: string) => void,
  label = "--seeds",
): string[] {
  if (list.urls.length === 0 && given.length > 0) {
    const why = list.rejected.length === 0 ? `${given.join(", ")} holds no URL` : listed(list.rejected, 5);
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${label}: no http(s) URL to start from: ${why}. Give URLs such as https://example.com/, or files of one URL a line`,
    );
  }
  if (list.rejected.length > 0) {
    warn(
      `skipping ${list.rejected.length} seed${list.rejected.length === 1 ? "" : "s"}: ${listed(list.rejected, 10)}`,
    );
  }
  return list.urls;
}

async function readSeedsFile(path: string, label: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    let why: string;
    if (code === "ENOENT") {
      why = `${quote(path)} is neither a readable file nor a URL: there is no file ${path}, and a seed URL starts with http:// or https://`;
    } else if (code === "EISDIR") {
      why = `${path} is a folder, not a file of seed URLs`;
    } else if (code === "EACCES") {
      why = `cannot read the seeds file ${path}: permission denied`;
    } else {
      why = `cannot read the seeds file ${path}: ${(error as Error).message}`;
    }
    throw new UbiError(ErrorCode.InvalidArgument, `${label}: ${why}`, { cause: error });
  }
}

/** `items` joined with "; ", the first `max` of them, then how many more there are. */
function listed(items: readonly string[], max: number): string {
  const shown = items.slice(0, max).join("; ");
  return items.length > max ? `${shown}; and ${items.length - max} more` : shown;
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text);
}
