import type { ProbeReport } from './model.js';
export function renderHtml(report: ProbeReport): string {
  return JSON.stringify(report);
}
