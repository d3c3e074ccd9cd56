import { readFile } from "node:fs/promises";
import { createServer } from "node:net";

/** The kernel's first ephemeral port (what `listen(0)` hands out from), 32768 where it cannot be read. */
async function ephemeralLow(): Promise<number> {
  const range = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "32768");
  const low = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > 2048 ? low : 32768;
}

/** True when `port` can be bound on `host` now. */
async function free(host: string, port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, host, () => resolve(true));
  });
  if (bound) await new Promise((resolve) => server.close(resolve));
  return bound;
}

/**
 * A port free on every one of `hosts`, for a process that must be told its port before it starts (an
 * agent's fixed `--listen` that others `--join`). Taken below the kernel's ephemeral range and checked
 * by binding: a port taken with `listen(0)` and released could be handed by the kernel to the next
 * `listen(0)` — a console or a test web of a test running at once — before the agent binds it (CI once
 * saw an agent's `--join` address answer in plaintext so).
 */
export async function freePort(hosts: readonly string[] = ["127.0.0.1"]): Promise<number> {
  const high = (await ephemeralLow()) - 1;
  const low = Math.max(1024, high - 20_000);
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    let all = true;
    for (const host of hosts) all &&= await free(host, port);
    if (all) return port;
  }
}
