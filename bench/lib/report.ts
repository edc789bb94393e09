/**
 * The capacity benches' report: a terminal table, a JSON file with every figure (settings, commit,
 * machine, each step, the per-second series) and a self-contained HTML file with SVG plots
 * (latency percentiles over time, throughput over time, the capacity curve, server CPU and
 * memory; for a soak, p99 and memory per window). `compareResults` puts two JSON results side by
 * side with ratios (`npm run bench -- compare A.json B.json`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Kind } from './capacity-client.js';
import type { LatencySummary } from './hdr.js';
import type { Objectives } from './open-loop.js';
import type { ServerFigures } from './server-metrics.js';
import { fmt } from './stats.js';

type Pcts = { p50: number; p90: number; p99: number; max: number };

export type SeriesPoint = {
  /** Seconds since the run started. */
  t: number;
  label: string;
  requestsPerSecond: number;
  eventsPerSecond: number;
  errors: number;
  request: Pcts;
  delivery: Pcts;
  server: ServerFigures;
  clientCpu: number;
  clientLagP99: number;
};

export type StepResult = {
  users: number;
  seconds: number;
  passed: boolean;
  missed: string[];
  request: LatencySummary;
  delivery: LatencySummary;
  kinds: Record<Kind, LatencySummary & { ok: number; errors: number; rate: number }>;
  requestsPerSecond: number;
  eventsPerSecond: number;
  errors: number;
  errorSamples: string[];
  server: {
    cpu: number;
    rssMb: number;
    heapMb: number;
    loopLagP99: number;
    /**
     * From the server's /metrics histograms (bucket-interpolated; NaN without them, absent in
     * older reports), in ms: its delivery time (a commit's events to the answer or frame written)
     * and its time for sends (POST /api/v1/messages, arrival to answer).
     */
    deliveryP50?: number;
    deliveryP99?: number;
    sendP99?: number;
    /**
     * The server process's open descriptors at the end of the window, and the sockets it holds
     * beyond those it held before any user, per client connection (NaN off Linux; absent in older
     * reports): 1 with one descriptor per connection.
     */
    openFiles?: number;
    socketsPerConnection?: number;
  };
  clients: {
    cpu: number;
    loopLagP99: number;
    latenessP99: number;
    saturated: boolean;
    /** Request connections (pooled per client process). */
    connections: number;
    /** Connections holding the users' queues (one per active user: long-poll or WebSocket). */
    queueConnections?: number;
  };
};

export type SoakWindow = {
  window: number;
  minutes: number;
  requestP99: number;
  deliveryP99: number;
  rssMb: number;
  heapMb: number;
  errors: number;
};

export type BenchResult = {
  scenario: 'capacity' | 'soak';
  date: string;
  commit: string;
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  objectives: Objectives;
  metricsSource: string;
  capacity: number;
  capacityNote: string;
  steps: StepResult[];
  series: SeriesPoint[];
  soak: {
    users: number;
    windows: SoakWindow[];
    drift: {
      requestP99Ratio: number;
      deliveryP99Ratio: number;
      heapMbPerHour: number;
      rssMbPerHour: number;
    };
  } | null;
};

// ---- terminal -------------------------------------------------------------------------------------

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function stepRows(steps: readonly StepResult[]): { head: string[]; rows: string[][] } {
  return {
    head: [
      'users',
      'req/s',
      'events/s',
      'req p50/p99/p99.9 ms',
      'delivery p50/p99 ms',
      'server delivery p50/p99',
      'server send p99',
      'presence p99',
      'errors',
      'server CPU',
      'lag p99',
      'RSS MB',
      'fds (per conn.)',
      'client CPU',
      'result',
    ],
    rows: steps.map((s) => [
      String(s.users),
      fmt(s.requestsPerSecond, 0),
      fmt(s.eventsPerSecond, 0),
      `${fmt(s.request.p50, 1)}/${fmt(s.request.p99, 1)}/${fmt(s.request.p999, 1)}`,
      `${fmt(s.delivery.p50, 1)}/${fmt(s.delivery.p99, 1)}`,
      `${fmt(s.server.deliveryP50 ?? NaN, 1)}/${fmt(s.server.deliveryP99 ?? NaN, 1)}`,
      fmt(s.server.sendP99 ?? NaN, 1),
      fmt(s.kinds.presence.p99, 1),
      String(s.errors),
      `${fmt(s.server.cpu, 0)}%`,
      fmt(s.server.loopLagP99, 1),
      fmt(s.server.rssMb, 0),
      `${fmt(s.server.openFiles ?? NaN, 0)} (${fmt(s.server.socketsPerConnection ?? NaN, 2)})`,
      `${fmt(s.clients.cpu, 0)}%${s.clients.saturated ? '!' : ''}`,
      s.passed ? 'met' : 'MISSED',
    ]),
  };
}

export function printStepTable(r: BenchResult): void {
  const { head, rows } = stepRows(r.steps);
  console.log(table(head, rows));
  for (const s of r.steps) {
    if (s.missed.length) console.log(`  ${s.users} users: ${s.missed.join('; ')}`);
    for (const e of s.errorSamples.slice(0, 3)) console.log(`    ${e}`);
  }
  if (r.steps.some((s) => s.clients.saturated))
    console.log('  ! a client process was saturated (CPU or event-loop lag) in that step');
}

export function printSoakTable(r: BenchResult): void {
  if (!r.soak) return;
  console.log(
    table(
      ['window', 'minutes', 'req p99 ms', 'delivery p99 ms', 'RSS MB', 'heap MB', 'errors'],
      r.soak.windows.map((w) => [
        String(w.window),
        fmt(w.minutes, 1),
        fmt(w.requestP99, 1),
        fmt(w.deliveryP99, 1),
        fmt(w.rssMb, 0),
        fmt(w.heapMb, 0),
        String(w.errors),
      ]),
    ),
  );
  const d = r.soak.drift;
  console.log(
    `drift (last third / first third): request p99 ${fmt(d.requestP99Ratio, 2)}x, delivery p99 ` +
      `${fmt(d.deliveryP99Ratio, 2)}x; heap ${fmt(d.heapMbPerHour, 1)} MB/h, RSS ` +
      `${fmt(d.rssMbPerHour, 1)} MB/h`,
  );
}

// ---- SVG ------------------------------------------------------------------------------------------

export type Line = { name: string; points: [number, number][]; dashed?: boolean };

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** A line chart as a standalone SVG element (linear axes from 0; non-finite points skipped). */
export function lineChart(o: {
  title: string;
  x: string;
  y: string;
  lines: Line[];
  marks?: { x: number; y: number; ok: boolean }[];
}): string {
  const W = 640;
  const H = 300;
  const L = 60;
  const R = 150;
  const T = 30;
  const B = 40;
  const pts = o.lines
    .flatMap((l) => l.points)
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xMax = niceMax(Math.max(1e-9, ...pts.map(([x]) => x)));
  const yMax = niceMax(Math.max(1e-9, ...pts.map(([, y]) => y)));
  const sx = (x: number) => L + (x / xMax) * (W - L - R);
  const sy = (y: number) => H - B - (y / yMax) * (H - T - B);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<text x="${L}" y="18" font-size="13" font-weight="bold">${esc(o.title)}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const yv = (yMax * i) / 4;
    const xv = (xMax * i) / 4;
    out.push(
      `<line x1="${L}" x2="${W - R}" y1="${sy(yv)}" y2="${sy(yv)}" stroke="#ddd"/>`,
      `<text x="${L - 4}" y="${sy(yv) + 4}" text-anchor="end">${fmt(yv, yMax < 10 ? 1 : 0)}</text>`,
      `<text x="${sx(xv)}" y="${H - B + 14}" text-anchor="middle">${fmt(xv, xMax < 10 ? 1 : 0)}</text>`,
    );
  }
  out.push(
    `<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#333"/>`,
    `<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#333"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">${esc(o.x)}</text>`,
    `<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">${esc(o.y)}</text>`,
  );
  o.lines.forEach((l, i) => {
    const color = COLORS[i % COLORS.length]!;
    const d = l.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y], k) => `${k ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(Math.min(y, yMax)).toFixed(1)}`)
      .join('');
    if (d) {
      out.push(
        `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.5"${l.dashed ? ' stroke-dasharray="5,4"' : ''}/>`,
      );
    }
    out.push(
      `<line x1="${W - R + 10}" x2="${W - R + 30}" y1="${T + 10 + i * 16}" y2="${T + 10 + i * 16}" stroke="${color}" stroke-width="2"${l.dashed ? ' stroke-dasharray="5,4"' : ''}/>`,
      `<text x="${W - R + 34}" y="${T + 14 + i * 16}">${esc(l.name)}</text>`,
    );
  });
  for (const m of o.marks ?? []) {
    if (!Number.isFinite(m.y)) continue;
    out.push(
      `<circle cx="${sx(m.x).toFixed(1)}" cy="${sy(Math.min(m.y, yMax)).toFixed(1)}" r="4" fill="${m.ok ? '#2ca02c' : '#d62728'}"/>`,
    );
  }
  out.push('</svg>');
  return out.join('\n');
}

/** Every chart of a result, in order. */
export function charts(r: BenchResult): string[] {
  const s = r.series;
  const pts = (f: (p: SeriesPoint) => number): [number, number][] => s.map((p) => [p.t, f(p)]);
  const out = [
    lineChart({
      title: 'Request latency over time (all requests but held polls; per second)',
      x: 'seconds',
      y: 'ms',
      lines: [
        { name: 'p50', points: pts((p) => p.request.p50) },
        { name: 'p90', points: pts((p) => p.request.p90) },
        { name: 'p99', points: pts((p) => p.request.p99) },
        { name: 'delivery p99', points: pts((p) => p.delivery.p99), dashed: true },
      ],
    }),
    lineChart({
      title: 'Throughput over time',
      x: 'seconds',
      y: 'per second',
      lines: [
        { name: 'requests/s', points: pts((p) => p.requestsPerSecond) },
        { name: 'events/s', points: pts((p) => p.eventsPerSecond) },
      ],
    }),
    lineChart({
      title: 'Server CPU and memory',
      x: 'seconds',
      y: '% of a core / MB',
      lines: [
        { name: 'CPU %', points: pts((p) => p.server.cpu) },
        { name: 'RSS MB', points: pts((p) => p.server.rssMb) },
        { name: 'heap MB', points: pts((p) => p.server.heapMb) },
        { name: 'client CPU %', points: pts((p) => p.clientCpu), dashed: true },
      ],
    }),
  ];
  if (r.scenario === 'capacity') {
    const steps = [...r.steps].sort((a, b) => a.users - b.users);
    const maxUsers = Math.max(1, ...steps.map((x) => x.users));
    out.splice(
      0,
      0,
      lineChart({
        title: `Capacity curve: ${r.capacity} users met every objective`,
        x: 'active users',
        y: 'ms (p99)',
        lines: [
          { name: 'request p99', points: steps.map((x) => [x.users, x.request.p99]) },
          { name: 'delivery p99', points: steps.map((x) => [x.users, x.delivery.p99]) },
          {
            name: 'server delivery p99',
            points: steps.map((x) => [x.users, x.server.deliveryP99 ?? NaN]),
          },
          { name: 'server lag p99', points: steps.map((x) => [x.users, x.server.loopLagP99]) },
          {
            name: 'request objective',
            points: [
              [0, r.objectives.requestP99Ms],
              [maxUsers, r.objectives.requestP99Ms],
            ],
            dashed: true,
          },
          {
            name: 'delivery objective',
            points: [
              [0, r.objectives.deliveryP99Ms],
              [maxUsers, r.objectives.deliveryP99Ms],
            ],
            dashed: true,
          },
        ],
        marks: steps.map((x) => ({ x: x.users, y: x.request.p99, ok: x.passed })),
      }),
    );
  }
  if (r.soak) {
    const w = r.soak.windows;
    out.push(
      lineChart({
        title: 'Soak: p99 per window',
        x: 'minutes',
        y: 'ms',
        lines: [
          { name: 'request p99', points: w.map((x) => [x.minutes, x.requestP99]) },
          { name: 'delivery p99', points: w.map((x) => [x.minutes, x.deliveryP99]) },
        ],
      }),
      lineChart({
        title: 'Soak: server memory per window',
        x: 'minutes',
        y: 'MB',
        lines: [
          { name: 'RSS', points: w.map((x) => [x.minutes, x.rssMb]) },
          { name: 'heap', points: w.map((x) => [x.minutes, x.heapMb]) },
        ],
      }),
    );
  }
  return out;
}

export function htmlReport(r: BenchResult): string {
  const { head, rows } = stepRows(r.steps);
  const tableHtml =
    '<table><tr>' +
    head.map((h) => `<th>${esc(h)}</th>`).join('') +
    '</tr>' +
    rows.map((row) => '<tr>' + row.map((c) => `<td>${esc(c)}</td>`).join('') + '</tr>').join('') +
    '</table>';
  const title =
    r.scenario === 'capacity'
      ? `Capacity: ${r.capacity} active users`
      : `Soak: ${r.soak?.users ?? 0} users`;
  const drift = r.soak
    ? `<p>Drift (last third / first third): request p99 ${fmt(r.soak.drift.requestP99Ratio, 2)}x, ` +
      `delivery p99 ${fmt(r.soak.drift.deliveryP99Ratio, 2)}x; heap ${fmt(r.soak.drift.heapMbPerHour, 1)} MB/h, ` +
      `RSS ${fmt(r.soak.drift.rssMbPerHour, 1)} MB/h.</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}.charts{display:flex;flex-wrap:wrap;gap:1em}
pre{background:#f6f6f6;padding:1em;font-size:11px;overflow:auto}</style></head><body>
<h1>${esc(title)}</h1>
<p>${esc(r.capacityNote)}. ${esc(r.date)}, commit ${esc(r.commit)}, ${esc(String(r.machine.description))}, ${esc(String(r.machine.cpus))} cores; server figures from ${esc(r.metricsSource)}.</p>
<p>Objectives: delivery p99 &lt; ${r.objectives.deliveryP99Ms} ms, request p99 &lt; ${r.objectives.requestP99Ms} ms, errors &le; ${r.objectives.maxErrors}, server event-loop lag p99 &lt; ${r.objectives.loopLagP99Ms} ms.</p>
${drift}
<div class="charts">
${charts(r).join('\n')}
</div>
<h2>Steps</h2>
${tableHtml}
<h2>Settings</h2>
<pre>${esc(JSON.stringify({ settings: r.settings, machine: r.machine }, null, 2))}</pre>
</body></html>
`;
}

export function writeReport(r: BenchResult, dir: string): { json: string; html: string } {
  fs.mkdirSync(dir, { recursive: true });
  const stamp = r.date.replace(/[:.]/g, '-');
  const base = path.join(dir, `${r.scenario}-${stamp}`);
  const json = `${base}.json`;
  const html = `${base}.html`;
  fs.writeFileSync(json, JSON.stringify(r, null, 1) + '\n');
  fs.writeFileSync(html, htmlReport(r));
  return { json, html };
}

// ---- compare --------------------------------------------------------------------------------------

/** Two results side by side: headline figures, then the steps both have, with B/A ratios. */
export function compareResults(a: BenchResult, b: BenchResult): string {
  const ratio = (x: number, y: number) =>
    x > 0 && Number.isFinite(y) ? `${fmt(y / x, 2)}x` : 'n/a';
  const lines: string[] = [
    `A: ${a.scenario} ${a.date} ${a.commit}`,
    `B: ${b.scenario} ${b.date} ${b.commit}`,
  ];
  const head = ['figure', 'A', 'B', 'B/A'];
  const rows: string[][] = [
    ['capacity (users)', String(a.capacity), String(b.capacity), ratio(a.capacity, b.capacity)],
  ];
  const byUsers = new Map(a.steps.map((s) => [s.users, s]));
  for (const sb of b.steps) {
    const sa = byUsers.get(sb.users);
    if (!sa) continue;
    const pairs: [string, number, number][] = [
      ['req/s', sa.requestsPerSecond, sb.requestsPerSecond],
      ['request p99 ms', sa.request.p99, sb.request.p99],
      ['delivery p99 ms', sa.delivery.p99, sb.delivery.p99],
      ['server delivery p99 ms', sa.server.deliveryP99 ?? NaN, sb.server.deliveryP99 ?? NaN],
      ['presence p99 ms', sa.kinds.presence.p99, sb.kinds.presence.p99],
      ['server CPU %', sa.server.cpu, sb.server.cpu],
      ['lag p99 ms', sa.server.loopLagP99, sb.server.loopLagP99],
      ['RSS MB', sa.server.rssMb, sb.server.rssMb],
    ];
    for (const [name, x, y] of pairs)
      rows.push([`${sb.users} users: ${name}`, fmt(x, 1), fmt(y, 1), ratio(x, y)]);
  }
  if (a.soak && b.soak) {
    rows.push(
      [
        'soak request p99 drift',
        fmt(a.soak.drift.requestP99Ratio, 2),
        fmt(b.soak.drift.requestP99Ratio, 2),
        '',
      ],
      [
        'soak heap MB/h',
        fmt(a.soak.drift.heapMbPerHour, 1),
        fmt(b.soak.drift.heapMbPerHour, 1),
        '',
      ],
    );
  }
  return lines.join('\n') + '\n' + table(head, rows);
}

export function compareFiles(fileA: string, fileB: string): string {
  const read = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8')) as BenchResult;
  return compareResults(read(fileA), read(fileB));
}
