import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** A file of the dashboard, read once. */
export interface ConsoleAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

const require = createRequire(import.meta.url);

/** The dashboard's own files, next to the package's `src/` and `dist/` (`assets/console/`). */
const OWN = (name: string) => fileURLToPath(new URL(`../../assets/console/${name}`, import.meta.url));

/**
 * The only paths served, and their files: the dashboard and the chart library (uPlot) from the
 * package's dependencies — nothing from a CDN, so the console works offline. A fixed table, so no
 * request path ever reaches the file system.
 */
const FILES: Readonly<Record<string, { readonly path: () => string; readonly contentType: string }>> = {
  "/": { path: () => OWN("index.html"), contentType: "text/html; charset=utf-8" },
  "/console.js": { path: () => OWN("console.js"), contentType: "text/javascript; charset=utf-8" },
  "/console.css": { path: () => OWN("console.css"), contentType: "text/css; charset=utf-8" },
  "/vendor/uPlot.iife.min.js": {
    path: () => require.resolve("uplot/dist/uPlot.iife.min.js"),
    contentType: "text/javascript; charset=utf-8",
  },
  "/vendor/uPlot.min.css": {
    path: () => require.resolve("uplot/dist/uPlot.min.css"),
    contentType: "text/css; charset=utf-8",
  },
};

const cache = new Map<string, Promise<ConsoleAsset>>();

/** The asset served at `pathname`, or undefined when there is none. */
export function consoleAsset(pathname: string): Promise<ConsoleAsset | undefined> {
  const file = FILES[pathname];
  if (file === undefined) return Promise.resolve(undefined);
  let asset = cache.get(pathname);
  if (!asset) {
    asset = readFile(file.path()).then((body) => ({ contentType: file.contentType, body }));
    asset.catch(() => cache.delete(pathname));
    cache.set(pathname, asset);
  }
  return asset;
}
