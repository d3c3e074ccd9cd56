import { once } from "node:events";
import { createServer, type Server, Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BLACKHOLE,
  CUT,
  FaultProxy,
  type FaultProxyOptions,
  GARBAGE,
  PASS,
  slow,
} from "../../src/lab/fault-proxy.js";
import { waitFor } from "../agent/harness.js";

/** An echo server counting the bytes it received. */
let echo: Server;
let echoAddress: string;
let echoedBytes = 0;
const proxies: FaultProxy[] = [];
const sockets: Socket[] = [];

beforeEach(async () => {
  echoedBytes = 0;
  echo = createServer((socket) => {
    socket.on("data", (chunk) => {
      echoedBytes += chunk.length;
      socket.write(chunk);
    });
    socket.on("error", () => {});
  });
  echo.listen(0, "127.0.0.1");
  await once(echo, "listening");
  const address = echo.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  echoAddress = `127.0.0.1:${address.port}`;
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.stop()));
  await new Promise((resolve) => echo.close(resolve));
});

async function proxy(options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const started = await FaultProxy.start({ target: echoAddress, ...options });
  proxies.push(started);
  return started;
}

/** A connected client that collects what it receives and whether it was closed or reset. */
async function connect(
  address: string,
): Promise<{ socket: Socket; received: () => Buffer; ended: () => boolean }> {
  const socket = new Socket();
  sockets.push(socket);
  const chunks: Buffer[] = [];
  let ended = false;
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => {});
  socket.on("close", () => {
    ended = true;
  });
  const colon = address.lastIndexOf(":");
  socket.connect(Number(address.slice(colon + 1)), address.slice(0, colon));
  await once(socket, "connect");
  return { socket, received: () => Buffer.concat(chunks), ended: () => ended };
}

describe("FaultProxy", () => {
  it("forwards both ways in pass mode", async () => {
    const p = await proxy();
    const client = await connect(p.address);
    client.socket.write("hello");
    await waitFor(() => client.received().toString() === "hello", "the echo");
    expect(p.counters.forwardedBytes).toBe(10);
  });

  it("holds connections until the target is set", async () => {
    const p = await proxy({ target: undefined });
    const client = await connect(p.address);
    client.socket.write("early");
    await delay(50);
    expect(echoedBytes).toBe(0);
    p.setTarget(echoAddress);
    await waitFor(() => client.received().toString() === "early", "the held bytes echoed");
  });

  it("cut destroys open connections and resets new ones; pass heals", async () => {
    const p = await proxy();
    const open = await connect(p.address);
    p.setMode(CUT);
    await waitFor(() => open.ended(), "the open connection to be destroyed");
    const refused = new Socket();
    sockets.push(refused);
    refused.on("error", () => {});
    refused.connect(Number(p.address.split(":")[1]), "127.0.0.1");
    await new Promise((resolve) => refused.once("close", resolve));
    expect(p.counters.cut).toBe(2);
    p.setMode(PASS);
    const healed = await connect(p.address);
    healed.socket.write("again");
    await waitFor(() => healed.received().toString() === "again", "the echo after healing");
  });

  it("blackhole accepts but forwards nothing", async () => {
    const p = await proxy();
    const client = await connect(p.address);
    p.setMode(BLACKHOLE);
    client.socket.write("lost");
    await waitFor(() => p.counters.dropped === 1, "the chunk to be dropped");
    await delay(50);
    expect(echoedBytes).toBe(0);
    expect(client.received().length).toBe(0);
    expect(client.ended()).toBe(false);
  });

  it("slow delays each chunk and keeps order", async () => {
    const p = await proxy({ mode: slow(150) });
    const client = await connect(p.address);
    const began = performance.now();
    client.socket.write("one");
    await delay(10);
    client.socket.write("two");
    p.setMode(PASS); // the second chunk still goes out after the first
    await waitFor(() => client.received().toString() === "onetwo", "both chunks echoed in order");
    // Up through the proxy at least 150 ms late (a lower bound only: machines are noisy).
    expect(performance.now() - began).toBeGreaterThanOrEqual(150);
    expect(p.counters.delayed).toBeGreaterThanOrEqual(1);
  });

  it("garbage answers random bytes instead of forwarding", async () => {
    const p = await proxy({ mode: GARBAGE });
    const client = await connect(p.address);
    client.socket.write("question");
    await waitFor(() => client.received().length >= 64, "a garbage answer");
    expect(client.received().toString()).not.toContain("question");
    expect(echoedBytes).toBe(0);
    expect(p.counters.garbled).toBe(1);
  });

  it("acts as an HTTP CONNECT proxy", async () => {
    const p = await FaultProxy.start({ connect: true });
    proxies.push(p);
    const client = await connect(p.address);
    client.socket.write(`CONNECT ${echoAddress} HTTP/1.1\r\nHost: ${echoAddress}\r\n\r\nping`);
    await waitFor(() => client.received().toString().endsWith("ping"), "the tunnelled echo");
    expect(client.received().toString()).toMatch(/^HTTP\/1\.1 200 /);
    p.setMode(CUT);
    await waitFor(() => client.ended(), "the tunnel to be cut");
  });
});
