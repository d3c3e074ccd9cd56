import { type Browser, chromium } from "playwright-core";
import { CHROMIUM } from "./tools.js";

/**
 * Launches Debian's headless Chromium (through playwright-core: no browser download) with nothing of
 * its own on the network: no background requests, component updates or sync. `extraArgs` add to its
 * command line.
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-default-apps",
      "--no-first-run",
      "--no-sandbox",
      ...extraArgs,
    ],
  });
}
