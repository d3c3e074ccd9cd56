import { readFile } from "node:fs/promises";

/** The `version` of the package this CLI belongs to (its package.json). */
export async function packageVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return manifest.version;
}
