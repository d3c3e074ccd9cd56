import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

/** A temp folder for the tests of a `describe`, and files written into it. */
export interface TempFiles {
  /** The folder (made before the describe's first test, removed after its last). */
  readonly dir: string;
  /** Writes `text` to `name` in the folder; returns its path. */
  file(name: string, text: string): Promise<string>;
}

/** Registers the folder's making and removal in the calling `describe` (call it at its top). */
export function tempFiles(prefix: string): TempFiles {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const made = () => {
    if (dir === undefined) throw new Error("tempFiles: the folder is made before the first test");
    return dir;
  };
  return {
    get dir() {
      return made();
    },
    async file(name, text) {
      const path = join(made(), name);
      await writeFile(path, text);
      return path;
    },
  };
}
