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

/** How many slices the range is cut into, one per vitest worker (its `VITEST_POOL_ID`, from 1). */
const SLICES = 8;

/** The ports this process has handed out: never handed out again, though their agents have exited. */
const handedOut = new Set<number>();

/**
 * A port free on every one of `hosts`, for a process that must be told its port before it starts (an
 * agent's fixed `--listen` that others `--join`). Taken below the kernel's ephemeral range and checked
 * by binding: a port taken with `listen(0)` and released could be handed by the kernel to the next
 * `listen(0)` — a console or a test web of a test running at once — before the agent binds it (CI once
 * saw an agent's `--join` address answer in plaintext so). A port is handed out once in a process, and
 * each vitest worker takes from a slice of its own: tests running at once once picked the same free
 * port, and one's agent took it while the other's was down to be restarted on it (CI: "address in use").
 */
export async function freePort(hosts: readonly string[] = ["127.0.0.1"]): Promise<number> {
  const high = (await ephemeralLow()) - 1;
  const low = Math.max(1024, high - 20_000);
  const width = Math.floor((high - low + 1) / SLICES);
  const slice = (Number(process.env.VITEST_POOL_ID ?? "1") - 1) % SLICES;
  const start = low + Math.max(0, slice) * width;
  for (;;) {
    const port = start + Math.floor(Math.random() * width);
    if (handedOut.has(port)) continue;
    let all = true;
    for (const host of hosts) all &&= await free(host, port);
    if (!all) continue;
    handedOut.add(port);
    return port;
  }
}
