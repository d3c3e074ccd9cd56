import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { consoleTarget } from "../../deploy/healthcheck.mjs";
import { subjectAltNames } from "../../src/security/index.js";
import { parseHostPort } from "../../src/transport/index.js";
import { certsCommand, composeFile, DEPLOY_DIR, type Doc, parseAgentCommand } from "./deploy-files.js";

const SERVICES = ["agent-1", "agent-2", "agent-3"];

/** A short-syntax volume `SOURCE:TARGET[:ro]`. */
function volumeOf(entry: string): { source: string; target: string; readOnly: boolean } {
  const [source = "", target = "", mode] = entry.split(":");
  return { source, target, readOnly: mode === "ro" };
}

describe("the compose file (deploy/compose.yaml)", () => {
  const compose = composeFile();
  const services: Record<string, Doc> = compose.services;
  const flagsOf = (name: string) => parseAgentCommand(services[name].command);

  it("has three agents, agent-1 to agent-3, each with its id, image and build", () => {
    expect(Object.keys(services).sort()).toEqual(SERVICES);
    for (const name of SERVICES) {
      expect(flagsOf(name).id).toBe(name);
      expect(services[name].image).toBe(services["agent-1"].image);
      const build = services[name].build;
      // The context is the project root; the Dockerfile is named from there.
      expect(resolve(DEPLOY_DIR, build.context)).toBe(resolve(DEPLOY_DIR, ".."));
      expect(existsSync(resolve(DEPLOY_DIR, build.context, build.dockerfile))).toBe(true);
    }
  });

  it("gives each agent its own named volume at --data", () => {
    const seen = new Set<string>();
    for (const name of SERVICES) {
      const data = flagsOf(name).data;
      const volume = (services[name].volumes as string[])
        .map(volumeOf)
        .find((entry) => entry.target === data);
      expect(volume, name).toBeDefined();
      expect(Object.keys(compose.volumes)).toContain(volume?.source);
      expect(seen.has(volume?.source ?? "")).toBe(false);
      seen.add(volume?.source ?? "");
      expect(volume?.readOnly).toBe(false);
    }
  });

  it("mounts read-only the CA and each agent's own certificate and key, never the CA key", () => {
    for (const name of SERVICES) {
      const flags = flagsOf(name);
      const volumes = (services[name].volumes as string[]).map(volumeOf);
      const sourceOf = (path: string | undefined) => {
        const volume = volumes.find((entry) => entry.target === path);
        expect(volume?.readOnly, `${name} ${path}`).toBe(true);
        return volume?.source;
      };
      expect(sourceOf(flags["tls-ca"])).toBe("./certs/ca.pem");
      expect(sourceOf(flags["tls-cert"])).toBe(`./certs/${name}.pem`);
      expect(sourceOf(flags["tls-key"])).toBe(`./certs/${name}.key`);
      expect(volumes.filter((entry) => /ca\.key|operator/.test(entry.source))).toEqual([]);
      expect(flags.insecure).toBe(false);
    }
  });

  it("joins every agent through all three, agent-1 first (the one that starts the cluster)", () => {
    const everyone = SERVICES.map((name) => flagsOf(name).advertise);
    expect(everyone[0]).toBe(flagsOf("agent-1").advertise);
    for (const name of SERVICES) {
      const flags = flagsOf(name);
      const listen = parseHostPort(flags.listen ?? "");
      expect(listen?.host).toBe("0.0.0.0");
      expect(flags.advertise).toBe(`${name}:${listen?.port}`);
      expect(flags.join.flatMap((value) => value.split(","))).toEqual(everyone);
      if (name === "agent-1") continue;
      expect(services[name].depends_on).toEqual({ "agent-1": { condition: "service_healthy" } });
    }
  });

  it("serves the console on each agent, published on the host's loopback only", () => {
    for (const name of SERVICES) {
      const flags = flagsOf(name);
      const target = consoleTarget(services[name].command.slice(1));
      expect(target?.https, name).toBe(true);
      const grpcPort = parseHostPort(flags.listen ?? "")?.port;
      const published = (services[name].ports as string[]).map((entry) => entry.split(":"));
      expect(published.map(([host]) => host)).toEqual(["127.0.0.1", "127.0.0.1"]);
      expect(published.map(([, , container]) => Number(container)).sort()).toEqual(
        [grpcPort, target?.port].sort(),
      );
    }
  });

  it("gives the agents time to leave on docker stop, and seeds that exist", () => {
    for (const name of SERVICES) {
      const grace = /^(\d+)s$/.exec(services[name].stop_grace_period)?.[1];
      expect(Number(grace) * 1000).toBeGreaterThan(flagsOf(name)["leave-timeout-ms"]);
      for (const seeds of flagsOf(name).seeds) {
        const volume = (services[name].volumes as string[])
          .map(volumeOf)
          .find((entry) => entry.target === seeds);
        expect(volume?.readOnly).toBe(true);
        expect(existsSync(join(DEPLOY_DIR, volume?.source ?? "missing"))).toBe(true);
      }
    }
    expect(flagsOf("agent-1").seeds.length).toBeGreaterThan(0);
  });

  it("documents a certs command for every agent and the names they are dialed at", () => {
    const { agents, hosts } = certsCommand(readFileSync(join(DEPLOY_DIR, "compose.yaml"), "utf8"));
    expect(agents).toEqual(SERVICES);
    expect(() => subjectAltNames(hosts)).not.toThrow();
    for (const name of SERVICES) expect(hosts).toContain(parseHostPort(flagsOf(name).advertise ?? "")?.host);
    // The published ports are dialed at localhost.
    expect(hosts).toContain("localhost");
  });
});
