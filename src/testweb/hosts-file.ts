import { hostOrigin, type WebModel } from "./model.js";

/** The distinct loopback addresses of the web's hosts, in host order (one listener each). */
export function listenAddresses(model: WebModel): string[] {
  return [...new Set(model.hosts.map((host) => host.ip))];
}

/** `/etc/hosts`-format text mapping every existing host to its address (gone hosts are absent). */
export function hostsFileText(model: WebModel): string {
  const lines = [`# ubicrawl test web, seed ${model.seed}: ${model.hosts.length} hosts`];
  for (const host of model.hosts) lines.push(`${host.ip} ${host.name}`);
  return `${lines.join("\n")}\n`;
}

/** The seed URLs: home pages of {@link WebModel.seedHosts}, from which the whole web is reachable. */
export function seedUrls(model: WebModel, port: number): string[] {
  return model.seedHosts.map((index) => `${hostOrigin(model, model.hosts[index]?.name ?? "", port)}/`);
}
