/**
 * Writes the error table of docs/errors.md from src/protocol/errors.ts, so the docs can
 * never drift from the code (test/unit/errors-doc.test.ts fails when they do).
 * Usage: node --import tsx scripts/errors-doc.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ERRORS } from '../src/protocol/errors.js';

const path = new URL('../docs/errors.md', import.meta.url);
const BEGIN = '<!-- errors:begin -->';
const END = '<!-- errors:end -->';

export function renderTable(): string {
  const rows = Object.entries(ERRORS).map(([code, e]) => {
    const data = 'data' in e ? `. *error.data*: ${e.data}` : '';
    return `| \`${code}\` | ${e.status} | ${e.rpc} | ${e.retryable ? 'yes' : 'no'} | ${e.message}${data} |`;
  });
  return ['| code (`err.code`, `error.data.reason`) | HTTP | JSON-RPC | retryable | message |', '|---|---|---|---|---|', ...rows].join('\n');
}

export function render(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/errors.md lacks the ${BEGIN} … ${END} markers`);
  return `${doc.slice(0, start + BEGIN.length)}\n${renderTable()}\n${doc.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = readFileSync(path, 'utf8');
  const next = render(doc);
  if (process.argv.includes('--check')) {
    if (next !== doc) {
      console.error('docs/errors.md is stale: run node --import tsx scripts/errors-doc.ts');
      process.exitCode = 1;
    }
  } else {
    writeFileSync(path, next);
  }
}
