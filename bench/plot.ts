/**
 * SVG line charts of one run: a metric against the number of sessions (log scale), one line
 * per contender. Dependency-free, deterministic output (so the docs diff cleanly).
 */
import type { CellResult } from './throughput.js';
import { CONTENDERS, LABELS, type Contender } from './workload.js';

const COLORS: Record<Contender, string> = {
  sdk: '#d62728',
  'sdk-store': '#ff7f0e',
  memory: '#1f77b4',
  sqlite: '#2ca02c',
  'bare-event': '#7f7f7f',
  'bare-batched': '#bcbd22',
  ceiling: '#9467bd',
};

export interface Chart {
  title: string;
  yLabel: string;
  /** Log scale on y (latencies span orders of magnitude). */
  logY: boolean;
  value: (c: CellResult) => number;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

function ticks(min: number, max: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
    return out;
  }
  const step = 10 ** Math.floor(Math.log10(max / 2 || 1));
  const out: number[] = [];
  for (let v = 0; v <= max * 1.05; v += step * (max / step > 10 ? 5 : max / step > 5 ? 2 : 1)) out.push(v);
  return out;
}

/** A chart of `cells` (one payload and burst) against sessions. */
export function lineChart(cells: readonly CellResult[], chart: Chart): string {
  const W = 720,
    H = 400,
    L = 80,
    R = 250,
    T = 40,
    B = 50;
  const xs = [...new Set(cells.map((c) => c.sessions))].sort((a, b) => a - b);
  const values = cells.map(chart.value).filter((v) => Number.isFinite(v) && v > 0);
  const yMax = Math.max(...values, 1) * (chart.logY ? 2 : 1.1);
  const yMin = chart.logY ? Math.max(Math.min(...values) / 2, 0.01) : 0;
  const xPos = (s: number): number => {
    if (xs.length < 2) return L + (W - L - R) / 2;
    const a = Math.log10(xs[0] as number),
      b = Math.log10(xs[xs.length - 1] as number);
    return L + ((Math.log10(s) - a) / (b - a)) * (W - L - R);
  };
  const yPos = (v: number): number => {
    const f = chart.logY ? (Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin)) : (v - yMin) / (yMax - yMin);
    return H - B - f * (H - T - B);
  };
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(`<text x="${L}" y="24" font-size="15" font-weight="bold">${esc(chart.title)}</text>`);
  for (const t of ticks(yMin || 1, yMax, chart.logY)) {
    if (t < yMin || t > yMax) continue;
    const y = yPos(t).toFixed(1);
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y}" y2="${y}" stroke="#eee"/>`);
    parts.push(`<text x="${L - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${t.toLocaleString('en-US')}</text>`);
  }
  for (const s of xs) {
    const x = xPos(s).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${T}" y2="${H - B}" stroke="#eee"/>`);
    parts.push(`<text x="${x}" y="${H - B + 16}" text-anchor="middle">${s.toLocaleString('en-US')}</text>`);
  }
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">sessions (log scale)</text>`);
  parts.push(`<text transform="translate(18 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`);
  let legend = 0;
  for (const contender of CONTENDERS) {
    const points = xs
      .map((s) => cells.find((c) => c.contender === contender && c.sessions === s))
      .filter((c): c is CellResult => c !== undefined && Number.isFinite(chart.value(c)) && chart.value(c) > 0)
      .map((c) => `${xPos(c.sessions).toFixed(1)},${yPos(chart.value(c)).toFixed(1)}`);
    if (points.length === 0) continue;
    const color = COLORS[contender];
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(' ')}"/>`);
    for (const p of points) {
      const [x, y] = p.split(',');
      parts.push(`<circle cx="${x}" cy="${y}" r="3" fill="${color}"/>`);
    }
    const ly = T + 10 + legend++ * 20;
    parts.push(`<line x1="${W - R + 15}" x2="${W - R + 35}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    parts.push(`<text x="${W - R + 40}" y="${ly}" dominant-baseline="middle">${esc(LABELS[contender])}</text>`);
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
