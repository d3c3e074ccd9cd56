import { readFileSync } from "node:fs";
import { join } from "node:path";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { consoleTarget } from "../../deploy/healthcheck.mjs";
import { subjectAltNames } from "../../src/security/index.js";
import { parseHostPort } from "../../src/transport/index.js";
import { REPO_ROOT } from "../agent/harness.js";
import {
  certsCommand,
  DEPLOY_DIR,
  type Doc,
  expandKubernetesVars,
  KUBERNETES_DIR,
  kubernetesManifests,
  manifestOfKind,
  parseAgentCommand,
} from "./deploy-files.js";

/**
 * The models (kubernetes-models: the Kubernetes OpenAPI schemas compiled to validators) and, for the
 * strict check of unknown fields, their TypeScript interfaces: `apiVersion/kind` → [model, module, type].
 */
const MODELS: Record<
  string,
  { model: { new (data: Doc): { validate(): void } }; module: string; type: string }
> = {
  "v1/Namespace": { model: Namespace, module: "kubernetes-models/v1/Namespace", type: "INamespace" },
  "v1/Service": { model: Service, module: "kubernetes-models/v1/Service", type: "IService" },
  "v1/Secret": { model: Secret, module: "kubernetes-models/v1/Secret", type: "ISecret" },
  "v1/ConfigMap": { model: ConfigMap, module: "kubernetes-models/v1/ConfigMap", type: "IConfigMap" },
  "apps/v1/StatefulSet": {
    model: StatefulSet,
    module: "kubernetes-models/apps/v1/StatefulSet",
    type: "IStatefulSet",
  },
  "policy/v1/PodDisruptionBudget": {
    model: PodDisruptionBudget,
    module: "kubernetes-models/policy/v1/PodDisruptionBudget",
    type: "IPodDisruptionBudget",
  },
};

function modelOf(doc: Doc) {
  const entry = MODELS[`${doc?.apiVersion}/${doc?.kind}`];
  if (!entry) throw new Error(`no schema for ${doc?.apiVersion} ${doc?.kind}`);
  return entry;
}

/**
 * Type-checks `docs` as object literals of their kinds' interfaces: an unknown field (a typo the
 * OpenAPI schemas let through, since they allow additional properties) is an excess-property error,
 * as `kubectl apply`'s strict field validation would refuse it. Returns the diagnostics' messages.
 */
function unknownFieldErrors(docs: readonly Doc[]): string[] {
  const file = join(REPO_ROOT, "test", "deploy", "__manifests__.ts");
  const imports = new Set<string>();
  const lines = docs.map((doc, index) => {
    const { module, type } = modelOf(doc);
    imports.add(`import type { ${type} } from "${module}";`);
    return `export const manifest${index}: ${type} = ${JSON.stringify(doc, null, 1)};`;
  });
  const text = `${[...imports].join("\n")}\n${lines.join("\n")}\n`;
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : read(name, language, ...rest);
  const program = ts.createProgram([file], options, host);
  return program
    .getSemanticDiagnostics(program.getSourceFile(file))
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}

/** The agent container of the StatefulSet, and its command line for pod `ordinal` in `namespace`. */
function agentContainer(statefulSet: Doc, ordinal: number, namespace = "ubicrawl") {
  const containers: Doc[] = statefulSet.spec.template.spec.containers;
  expect(containers).toHaveLength(1);
  const container = containers[0];
  const env: Record<string, string> = {};
  for (const variable of container.env as Doc[]) {
    const field = variable.valueFrom?.fieldRef?.fieldPath;
    if (field === "metadata.name") env[variable.name] = `${statefulSet.metadata.name}-${ordinal}`;
    else if (field === "metadata.namespace") env[variable.name] = namespace;
  }
  const words = expandKubernetesVars([...(container.command ?? []), ...(container.args ?? [])], env);
  return { container, words, flags: parseAgentCommand(words) };
}

function portNumber(container: Doc, port: number | string): number {
  if (typeof port === "number") return port;
  const named = (container.ports as Doc[]).find((candidate) => candidate.name === port);
  if (!named) throw new Error(`no container port named ${port}`);
  return named.containerPort;
}

describe("the Kubernetes manifests (deploy/kubernetes)", () => {
  const manifests = kubernetesManifests();

  it("are each valid against the Kubernetes schemas of their kind", () => {
    expect(manifests.length).toBeGreaterThanOrEqual(6);
    for (const { file, doc } of manifests) {
      const { model } = modelOf(doc);
      expect(() => new model(doc).validate(), `${file}: ${doc.kind}`).not.toThrow();
    }
  });

  it("name no field the schemas do not know (as kubectl's strict field validation)", () => {
    expect(unknownFieldErrors(manifests.map(({ doc }) => doc))).toEqual([]);
  });

  it("would be caught: a wrong type by the schemas, an unknown field by the strict check", () => {
    const statefulSet = structuredClone(manifestOfKind("StatefulSet"));
    statefulSet.spec.replicas = "3";
    expect(() => new StatefulSet(statefulSet).validate()).toThrow(/replicas/);
    const typo = structuredClone(manifestOfKind("StatefulSet"));
    typo.spec.template.spec.containers[0].livenessProbe.httpGet.schem = "HTTPS";
    expect(unknownFieldErrors([typo]).join("\n")).toMatch(/schem\W* does not exist in type 'IHTTPGetAction'/);
  });

  it("put every namespaced object in the ubicrawl namespace", () => {
    const namespace = manifestOfKind("Namespace").metadata.name;
    for (const { file, doc } of manifests) {
      if (doc.kind !== "Namespace") expect(doc.metadata.namespace, file).toBe(namespace);
    }
  });

  it("give pod N the id ubicrawl-N, its own DNS name as --advertise, and the first pods' as --join, ubicrawl-0 first", () => {
    const statefulSet = manifestOfKind("StatefulSet");
    const service = manifestOfKind("Service");
    const name = statefulSet.metadata.name;
    expect(statefulSet.spec.serviceName).toBe(service.metadata.name);
    expect(service.spec.clusterIP).toBe("None");
    expect(service.spec.publishNotReadyAddresses).toBe(true);
    const replicas: number = statefulSet.spec.replicas;
    expect(replicas).toBe(3);
    for (const namespace of ["ubicrawl", "crawl-prod"]) {
      const dnsName = (ordinal: number) =>
        `${name}-${ordinal}.${service.metadata.name}.${namespace}.svc.cluster.local`;
      for (let ordinal = 0; ordinal < replicas; ordinal++) {
        const { container, flags } = agentContainer(statefulSet, ordinal, namespace);
        expect(flags.id).toBe(`${name}-${ordinal}`);
        const listen = parseHostPort(flags.listen ?? "");
        expect(listen?.host).toBe("0.0.0.0");
        expect(listen?.port).toBe(portNumber(container, "grpc"));
        expect(flags.advertise).toBe(`${dnsName(ordinal)}:${listen?.port}`);
        expect(flags.join.flatMap((value) => value.split(","))).toEqual(
          Array.from({ length: replicas }, (_, peer) => `${dnsName(peer)}:${listen?.port}`),
        );
        expect(parseHostPort(flags.advertise ?? "")).toBeDefined();
        // The Service routes both ports to the container's.
        const servicePorts = (service.spec.ports as Doc[]).map((port) =>
          portNumber(container, port.targetPort),
        );
        expect(servicePorts.sort()).toEqual([portNumber(container, "console"), listen?.port].sort());
      }
    }
  });

  it("give each pod its own certificate from the Secret, which has them all and no CA or operator key", () => {
    const statefulSet = manifestOfKind("StatefulSet");
    const secret = manifestOfKind("Secret");
    const keys = Object.keys(secret.stringData ?? secret.data ?? {});
    expect(keys).not.toContain("ca.key");
    expect(keys.filter((key) => key.startsWith("operator"))).toEqual([]);
    for (let ordinal = 0; ordinal < statefulSet.spec.replicas; ordinal++) {
      const { container, flags } = agentContainer(statefulSet, ordinal);
      const volume = (statefulSet.spec.template.spec.volumes as Doc[]).find(
        (candidate) => candidate.secret?.secretName === secret.metadata.name,
      );
      const mount = (container.volumeMounts as Doc[]).find((candidate) => candidate.name === volume?.name);
      expect(mount?.readOnly).toBe(true);
      for (const path of [flags["tls-ca"], flags["tls-cert"], flags["tls-key"]]) {
        expect(path?.startsWith(`${mount?.mountPath}/`), path).toBe(true);
        expect(keys).toContain(path?.slice(mount.mountPath.length + 1));
      }
      expect(flags["tls-cert"]).toMatch(new RegExp(`/${flags.id}\\.pem$`));
      expect(flags["tls-key"]).toMatch(new RegExp(`/${flags.id}\\.key$`));
    }
  });

  it("document a certs command whose names cover every pod's advertised address, accepted by ubicrawl certs", () => {
    const statefulSet = manifestOfKind("StatefulSet");
    const documents = [
      readFileSync(join(KUBERNETES_DIR, "secret-tls.yaml"), "utf8"),
      readFileSync(join(DEPLOY_DIR, "README.md"), "utf8"),
    ];
    for (const text of documents) {
      const { agents, hosts } = certsCommand(text);
      expect(() => subjectAltNames(hosts)).not.toThrow();
      const ids: string[] = [];
      for (let ordinal = 0; ordinal < statefulSet.spec.replicas; ordinal++) {
        const { flags } = agentContainer(statefulSet, ordinal);
        ids.push(flags.id as string);
        expect(hosts).toContain(parseHostPort(flags.advertise ?? "")?.host);
        for (const address of flags.join.flatMap((value) => value.split(","))) {
          expect(hosts).toContain(parseHostPort(address)?.host);
        }
      }
      expect(agents).toEqual(ids);
    }
  });

  it("probe /healthz and /readyz on the console's port and scheme, and let Prometheus scrape it", () => {
    const statefulSet = manifestOfKind("StatefulSet");
    const { container, words, flags } = agentContainer(statefulSet, 1);
    const target = consoleTarget(words.slice(1));
    expect(target).toBeDefined();
    expect(parseHostPort(flags.http ?? "")?.host).toBe("0.0.0.0");
    const consolePort = portNumber(container, "console");
    expect(target?.port).toBe(consolePort);
    // With the cluster's TLS, a console on a pod IP is HTTPS (probes need neither certificate nor token).
    expect(target?.https).toBe(true);
    const scheme = target?.https ? "HTTPS" : "HTTP";
    for (const [probe, path] of [
      ["livenessProbe", "/healthz"],
      ["readinessProbe", "/readyz"],
    ] as const) {
      const get = container[probe]?.httpGet;
      expect(get?.path, probe).toBe(path);
      expect(portNumber(container, get?.port), probe).toBe(consolePort);
      expect(get?.scheme ?? "HTTP", probe).toBe(scheme);
    }
    const annotations = statefulSet.spec.template.metadata.annotations;
    expect(annotations).toMatchObject({
      "prometheus.io/scrape": "true",
      "prometheus.io/port": String(consolePort),
      "prometheus.io/path": "/metrics",
      "prometheus.io/scheme": scheme.toLowerCase(),
    });
  });

  it("keep /data on a claim per pod, run as non-root with limits, and stop as a restart", () => {
    const statefulSet = manifestOfKind("StatefulSet");
    const { container, flags } = agentContainer(statefulSet, 0);
    const claims = (statefulSet.spec.volumeClaimTemplates as Doc[]).map((claim) => claim.metadata.name);
    const dataMount = (container.volumeMounts as Doc[]).find((mount) => mount.mountPath === flags.data);
    expect(claims).toContain(dataMount?.name);
    const pod = statefulSet.spec.template.spec;
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(container.resources.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
    expect(container.resources.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    // A pod's stop is mostly a restart (a rolling update, a drain): SIGTERM is a plain stop (hold), and
    // the others hold its hosts long enough for the pod to come back: past its grace period, with a
    // minute for rescheduling, the volume and the image.
    expect(flags["on-stop"]).toBe("hold");
    expect(flags["takeover-delay-ms"]).toBeGreaterThanOrEqual(
      pod.terminationGracePeriodSeconds * 1000 + 60_000,
    );
    // A graceful leave (the documented scale-down with --on-stop leave) still fits in the grace period.
    expect(flags["leave-timeout-ms"]).toBeLessThan(pod.terminationGracePeriodSeconds * 1000);
    // The seeds file comes from the ConfigMap.
    const configMap = manifestOfKind("ConfigMap");
    const seedsVolume = (pod.volumes as Doc[]).find(
      (volume) => volume.configMap?.name === configMap.metadata.name,
    );
    const seedsMount = (container.volumeMounts as Doc[]).find((mount) => mount.name === seedsVolume?.name);
    for (const seeds of flags.seeds) {
      expect(seeds.startsWith(`${seedsMount?.mountPath}/`)).toBe(true);
      expect(Object.keys(configMap.data)).toContain(seeds.slice(seedsMount.mountPath.length + 1));
    }
  });

  it("say in deploy/README.md what a pod's stop does, with the manifest's delay, and how to scale down", () => {
    const { flags } = agentContainer(manifestOfKind("StatefulSet"), 0);
    const readme = readFileSync(join(DEPLOY_DIR, "README.md"), "utf8").replace(/\s+/g, " ");
    const header = readFileSync(join(KUBERNETES_DIR, "statefulset.yaml"), "utf8").replace(/\s+/g, " ");
    for (const text of [readme, header]) {
      expect(text).toContain(`--on-stop ${flags["on-stop"]}`);
      expect(text).toMatch(
        new RegExp(
          `--takeover-delay-ms.{0,4}\\((?:${flags["takeover-delay-ms"] / 60_000} min|${flags["takeover-delay-ms"] / 1000} s)`,
        ),
      );
    }
    // Scaling down: what it costs with hold, and the leave that avoids it.
    expect(readme).toContain("kubectl scale --replicas=2");
    expect(readme).toMatch(/change the StatefulSet's `--on-stop hold` to `leave`/);
  });

  it("have a PodDisruptionBudget over the agents' pods", () => {
    const statefulSet = manifestOfKind("StatefulSet");
    const budget = manifestOfKind("PodDisruptionBudget");
    expect(budget.spec.selector.matchLabels).toEqual(statefulSet.spec.selector.matchLabels);
    expect(statefulSet.spec.template.metadata.labels).toMatchObject(statefulSet.spec.selector.matchLabels);
    expect(manifestOfKind("Service").spec.selector).toEqual(statefulSet.spec.selector.matchLabels);
    expect(budget.spec.maxUnavailable).toBe(1);
  });
});
