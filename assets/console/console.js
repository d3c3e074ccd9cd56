// The ubicrawl console: polls the agent's read-only API every second and redraws. No framework; the
// chart is uPlot, served by the agent from its own dependencies.

const POLL_MS = 1000;
const STATUS_COLORS = { alive: "#1a9d5b", suspected: "#d98e04", left: "#8a8f98", gone: "#c2c6cc" };
/** Arc colours of live agents, by their order on the page (a status other than alive has its own). */
const AGENT_COLORS = ["#2563eb", "#1a9d5b", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#ea580c", "#4f46e5"];
/** Gap between two agents' arcs, radians. */
const ARC_GAP = 0.03;
/** Every agent ever seen here, by id: its last row, and "gone" once the cluster stops listing it. */
const known = new Map();
let chart;

const $ = (selector) => document.querySelector(selector);

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function fillRows(table, rows) {
  const body = $(`${table} tbody`);
  body.replaceChildren(
    ...rows.map((cells) => {
      const tr = el("tr");
      for (const cell of cells) {
        if (cell instanceof Node) {
          const td = el("td");
          td.append(cell);
          tr.append(td);
        } else tr.append(el("td", cell));
      }
      return tr;
    }),
  );
  return body;
}

const number = (value) => Number(value).toLocaleString("en-US");
const percent = (value) => `${(value * 100).toFixed(1)}%`;
const bytes = (value) => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let size = value;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit++;
  }
  return `${size.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
};

async function getJson(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${(await response.text()).trim()}`);
  return response.json();
}

function drawTotals(totals, self) {
  const tiles = [
    ["pages fetched", number(totals.pagesFetched), "total-pages"],
    ["pages/s", totals.pagesPerSecond.toFixed(1), "total-rate"],
    ["URLs queued", number(totals.queuedUrls), "total-queued"],
    ["bytes", bytes(totals.bytesFetched), "total-bytes"],
    ["agents alive", `${totals.alive} / ${totals.agents}`, "total-alive"],
    ["suspected", totals.suspected, "total-suspected"],
    ["recovered pages", number(totals.pagesRecovered), "total-recovered"],
    ["this agent", self.paused ? "paused" : self.idle ? "idle" : "crawling", "self-state"],
  ];
  $("#totals").replaceChildren(
    ...tiles.map(([label, value, id]) => {
      const tile = el("div", undefined, "tile");
      const figure = el("div", value, "value");
      figure.id = id;
      tile.append(figure, el("div", label, "label"));
      return tile;
    }),
  );
}

function drawRing(rows) {
  const svg = $("#ring");
  const ns = "http://www.w3.org/2000/svg";
  const parts = [];
  const shares = rows.filter((row) => row.status !== "gone" && row.circleShare > 0);
  const total = shares.reduce((sum, row) => sum + row.circleShare, 0) || 1;
  let angle = -Math.PI / 2;
  for (const [index, row] of shares.entries()) {
    const sweep = (row.circleShare / total) * 2 * Math.PI;
    const end = angle + sweep;
    const large = sweep > Math.PI ? 1 : 0;
    const gap = shares.length > 1 ? Math.min(ARC_GAP, sweep / 4) : 0;
    const [x1, y1, x2, y2] = [
      Math.cos(angle + gap),
      Math.sin(angle + gap),
      Math.cos(end - gap),
      Math.sin(end - gap),
    ].map((v) => v * 90);
    const path = document.createElementNS(ns, "path");
    path.setAttribute(
      "d",
      shares.length === 1
        ? "M 0 -90 A 90 90 0 1 1 -0.01 -90"
        : `M ${x1} ${y1} A 90 90 0 ${large} 1 ${x2} ${y2}`,
    );
    path.setAttribute("fill", "none");
    const color =
      row.status === "alive" ? AGENT_COLORS[index % AGENT_COLORS.length] : STATUS_COLORS[row.status];
    path.setAttribute("stroke", color ?? "#444");
    if (row.status !== "alive") path.setAttribute("stroke-dasharray", "6 4");
    path.setAttribute("stroke-width", "16");
    path.dataset.agent = row.id;
    const title = document.createElementNS(ns, "title");
    title.textContent = `${row.id}: ${row.status}, ${percent(row.circleShare)} of the circle`;
    path.append(title);
    const middle = angle + sweep / 2;
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", String(Math.cos(middle) * 66));
    label.setAttribute("y", String(Math.sin(middle) * 66 + 3));
    label.setAttribute("text-anchor", "middle");
    label.textContent = row.id;
    parts.push(path, label);
    angle = end;
  }
  const center = document.createElementNS(ns, "text");
  center.setAttribute("text-anchor", "middle");
  center.setAttribute("y", "4");
  center.textContent = `${rows.filter((row) => row.status === "alive").length} alive`;
  parts.push(center);
  svg.replaceChildren(...parts);
}

function drawAgents(rows, selfId, hostsTotal) {
  const body = fillRows(
    "#agents",
    rows.map((row) => {
      const status = el("span", row.status, `status ${row.status}`);
      return [
        row.id,
        status,
        row.address || "(alone)",
        row.status === "gone" || row.status === "left" ? "–" : percent(row.circleShare),
        row.status === "alive"
          ? `${number(row.hostsOwned)} (${hostsTotal > 0 ? percent(row.hostsOwned / hostsTotal) : "–"})`
          : `${number(row.hostsOwned)} (last known)`,
        row.capacity,
        number(row.pagesFetched),
        row.status === "alive" ? row.pagesPerSecond.toFixed(1) : "–",
        number(row.queuedUrls),
        row.status === "alive" && row.reportedMsAgo === 0
          ? "now"
          : `${(row.reportedMsAgo / 1000).toFixed(1)} s ago`,
      ];
    }),
  );
  rows.forEach((row, index) => {
    const tr = body.children[index];
    tr.dataset.agent = row.id;
    tr.dataset.status = row.status;
    if (row.id === selfId) tr.classList.add("self");
  });
}

function drawPartition(self) {
  const waiting =
    self.waiting
      .map((entry) => `${entry.hosts} ${entry.reason} (next in ${Math.ceil(entry.nextInMs / 1000)} s)`)
      .join(", ") || "none";
  const facts = [
    ["address", self.address || "(alone)"],
    ["circle", `${percent(self.circleShare)}, ${self.replicas} replicas, capacity ${self.capacity}`],
    [
      "hosts",
      `${number(self.hostsOwned)} owned, ${number(self.hostsKnown)} known, ${self.hostsActive} active, ${number(self.hostsDone)} done, ${self.hostsHeld} held`,
    ],
    [
      "pages",
      `${number(self.pagesFetched)} (${number(self.pagesFetchedThisRun)} this run), ${bytes(self.bytesFetched)}`,
    ],
    ["queued", `${number(self.queuedUrls)} distinct URLs`],
    ["waiting hosts", waiting],
    ["overhead", `${self.communicationOverhead.toFixed(3)} URLs sent per page`],
    ["recovered", `${number(self.pagesRecovered)} pages from previous owners`],
    [
      "duplicates",
      `${number(self.duplicates)} pages stored as revisits (${bytes(self.duplicateBytes)} not stored again), ${number(self.payloadCopies)} copies left by races, ${number(self.payloadsUnchecked)} stored unchecked`,
    ],
    ...(self.revisits ? [["revisits", revisitsFact(self.revisits)]] : []),
    ["uptime", `${(self.uptimeMs / 1000).toFixed(0)} s`],
  ];
  $("#partition").replaceChildren(
    ...facts.flatMap(([term, value]) => {
      const dd = el("dd", value);
      dd.dataset.fact = term;
      return [el("dt", term), dd];
    }),
  );
  fillRows(
    "#peers",
    self.peers.map((peer) => [
      peer.peerId,
      number(peer.urlsSent),
      number(peer.batchesSent),
      number(peer.urlsReceived),
      number(peer.batchesReceived),
    ]),
  );
}

/**
 * A continuous crawl's revisits (`--recrawl`), in one line: the share's estimated freshness, plans,
 * what the revisits found, how late.
 */
function revisitsFact(revisits) {
  const late =
    revisits.overdueMs > 0 ? `, the earliest ${(revisits.overdueMs / 1000).toFixed(1)} s overdue` : "";
  const fresh =
    revisits.freshnessPages > 0
      ? `estimated freshness ${revisits.estimatedFreshness.toFixed(2)} (${number(revisits.freshnessPages)} pages sampled); `
      : "";
  return (
    `${fresh}${number(revisits.planned)} planned${late}; ${number(revisits.revisited)} revisited: ` +
    `${number(revisits.notModified)} not modified (304), ${number(revisits.unchanged)} unchanged, ` +
    `${number(revisits.changed)} changed, ${number(revisits.missed)} missed; ` +
    `${number(revisits.received)} histories received with hosts`
  );
}

function drawErrors(errors) {
  const rows = Object.entries(errors).sort((a, b) => b[1] - a[1]);
  fillRows(
    "#errors",
    rows.length === 0 ? [["none", ""]] : rows.map(([name, count]) => [name, number(count)]),
  );
}

/**
 * The cluster's busiest IP addresses (the totals merge the live agents' own lists): each with its
 * hosts, the agents crawling hosts there, the keeper of its politeness ("each agent" when each keeps
 * its own), and the waits and back-off.
 */
function drawBusiestIps(busiest) {
  const backOff = (ip) =>
    [
      ip.blockedForMs > 0 ? `blocked ${(ip.blockedForMs / 1000).toFixed(1)} s` : "",
      ip.delayMs > 0 ? `${number(ip.delayMs)} ms apart` : "",
      ip.refusalsRecently > 0 ? `${ip.refusalsRecently} refused` : "",
    ]
      .filter((part) => part !== "")
      .join(", ") || "-";
  fillRows(
    "#busiest-ips",
    busiest.length === 0
      ? [["none lately", "", "", "", "", "", "", "", "", ""]]
      : busiest.map((ip) => {
          // At most the agents' counts summed, at least the most one counts (they may count the same host).
          const range = ip.hostsAtLeast === ip.hosts ? "" : `${ip.hostsAtLeast}–`;
          const hosts = el("span", `${range}${ip.hosts}${ip.moreHosts ? "+" : ""}`);
          hosts.title = ip.hostNames.join(", ");
          hosts.append(
            el("small", ` ${ip.hostNames.join(", ")}${ip.hosts > ip.hostNames.length ? ", …" : ""}`),
          );
          return [
            ip.ip,
            hosts,
            ip.agents.join(", "),
            // With --ip-limit agent each agent keeps its own line.
            ip.keepers.length === 1 ? ip.keepers[0] : "each agent",
            ip.inFlight,
            ip.waiting,
            number(ip.startedRecently),
            `${number(ip.meanWaitMsRecently)} / ${number(ip.maxWaitMsRecently)}`,
            ip.line,
            backOff(ip),
          ];
        }),
  );
}

function drawActivity(activity) {
  fillRows(
    "#busiest",
    activity.busiestHosts.map((h) => [h.host, h.fetches, h.meanDurationMs.toFixed(0), h.errors]),
  );
  fillRows(
    "#slowest",
    activity.slowestHosts.map((h) => [h.host, h.meanDurationMs.toFixed(0), h.fetches, h.errors]),
  );
  fillRows(
    "#recent",
    activity.recent.slice(0, 25).map((fetch) => {
      const status = el(
        "span",
        fetch.status === 0 ? (fetch.error ?? "failed") : fetch.status,
        fetch.status === 0 || fetch.status >= 400 ? "err" : "",
      );
      const url = el("span", fetch.url);
      if (fetch.replay) {
        // The page as archived, replayed by the agent in ReplayWeb.page.
        const replay = el("a", "replay", "replay");
        replay.href = fetch.replay;
        replay.target = "_blank";
        replay.rel = "noopener";
        url.append(" ", replay);
      }
      return [new Date(fetch.atMs).toLocaleTimeString(), status, fetch.durationMs, number(fetch.bytes), url];
    }),
  );
  for (const td of document.querySelectorAll("#recent td:last-child")) td.className = "url";
  drawChart(activity.pagesPerSecond, activity.clusterPagesPerSecond);
}

/**
 * The rate chart: this agent's pages per second and the cluster's, both kept by the agent from its
 * start (so a page just opened draws both at once), second by second.
 */
function drawChart(fullHistory, fullClusterHistory) {
  // From the first second with a page on (the agent's start), not two minutes of zeros before it.
  const first = fullHistory.findIndex((point) => point.pages > 0);
  const from = first <= 0 ? 0 : Math.max(0, first - 5);
  const history = fullHistory.slice(from);
  const xs = history.map((point) => point.atMs / 1000);
  const own = history.map((point) => point.pages);
  const clusterBySecond = new Map(fullClusterHistory.map((point) => [point.atMs / 1000, point.pages]));
  const cluster = xs.map((second) => clusterBySecond.get(second) ?? null);
  const data = [xs, own, cluster];
  const box = $("#rate-chart");
  const width = Math.max(300, box.clientWidth);
  if (!chart) {
    chart = new uPlot(
      {
        width,
        height: 240,
        series: [
          {},
          { label: "this agent", stroke: "#2563eb", width: 2, fill: "rgba(37,99,235,0.08)" },
          { label: "cluster", stroke: "#1a9d5b", width: 2, spanGaps: true },
        ],
        axes: [{}, { label: "pages/s" }],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      },
      data,
      box,
    );
  } else {
    if (Math.abs(chart.width - width) > 20) chart.setSize({ width, height: 240 });
    chart.setData(data);
  }
}

/**
 * What the console calls an agent: alive; suspected while its hosts are held for it to come back (the
 * takeover grace); gone once the others crawl its hosts (or the cluster no longer lists it); left when
 * it departed on purpose.
 */
function displayedStatus(agent, held) {
  if (agent.status === "SUSPECTED") return held.has(agent.id) ? "suspected" : "gone";
  return agent.status.toLowerCase();
}

async function refresh() {
  const badge = $("#connection");
  try {
    const [stats, activity] = await Promise.all([getJson("api/stats?cluster=1"), getJson("api/activity")]);
    const [self] = stats.agents;
    $("#agent-id").textContent = `agent ${self.id}`;
    document.title = `ubicrawl ${self.id}`;
    const listed = new Set();
    const held = new Set(self.heldFor);
    for (const agent of stats.agents) {
      listed.add(agent.id);
      known.set(agent.id, { ...agent, status: displayedStatus(agent, held) });
    }
    for (const [id, row] of known) if (!listed.has(id)) known.set(id, { ...row, status: "gone" });
    const rows = [...known.values()].sort((a, b) => a.id.localeCompare(b.id));
    const hostsTotal = stats.agents
      .filter((a) => a.status === "ALIVE")
      .reduce((sum, a) => sum + a.hostsOwned, 0);
    drawTotals(stats.totals, self);
    drawRing(rows);
    drawAgents(rows, self.id, hostsTotal);
    drawPartition(self);
    drawErrors(stats.totals.errors);
    drawBusiestIps(stats.totals.busiestIps);
    drawActivity(activity);
    badge.textContent = `live · ${new Date().toLocaleTimeString()}`;
    badge.className = "badge ok";
  } catch (error) {
    badge.textContent = `not answering: ${error.message}`;
    badge.className = "badge stale";
  } finally {
    setTimeout(refresh, POLL_MS);
  }
}

refresh();
