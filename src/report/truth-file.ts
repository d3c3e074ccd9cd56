import { readFile } from "node:fs/promises";
import { ErrorCode, UbiError } from "../errors.js";

/**
 * Reads a ground-truth file, as `ubicrawl testweb --truth` writes it: one URL a line (blank lines
 * skipped), the URLs a correct crawl fetches.
 * @throws UbiError InvalidArgument naming the path when it cannot be read or holds no URL.
 */
export async function readTruthFile(path: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UbiError(ErrorCode.InvalidArgument, `cannot read the truth file ${path} (${code})`, {
      cause: error,
    });
  }
  const truth = new Set<string>();
  for (const line of text.split("\n")) {
    const url = line.trim();
    if (url !== "") truth.add(url);
  }
  if (truth.size === 0) throw new UbiError(ErrorCode.InvalidArgument, `the truth file ${path} holds no URL`);
  return truth;
}
